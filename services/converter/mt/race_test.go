//go:build race

package mt

// The race detector slows the parser about tenfold; the hostile-input test
// shrinks its inputs to keep the suite's run time sane.
const raceEnabled = true
