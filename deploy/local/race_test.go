//go:build race

package local_test

// raceEnabled: the binary runs under the race detector (go test -race).
const raceEnabled = true
