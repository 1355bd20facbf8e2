//go:build !race

package mt

const raceEnabled = false
