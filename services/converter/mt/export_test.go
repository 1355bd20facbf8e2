package mt

import (
	"math/rand"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// GeneratedRoundTrips renders n generated statements as MT940, passes each
// through via and checks that what comes back keeps every amount, date,
// balance, reference and remittance text. It is exported for the external
// tests, which may import the engine and the other formats; this package's
// own tests may not (the formats import this package).
func GeneratedRoundTrips(t *testing.T, seed int64, n int, via func(*testing.T, []byte) []byte) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	for k := 0; k < n; k++ {
		st := genStatement(rng, rng.Intn(40))
		got, _ := roundTripVia(t, "940", st, statement.Options{}, via)
		compareStatements(t, st, got)
		if t.Failed() {
			t.Fatalf("generated case %d failed", k)
		}
	}
}

// GeneratedCamtRoundTrips gives n generated statements to conv, which
// writes each as camt, converts it to MT and back and returns what it parses
// from the final camt document; the result must keep what MT keeps.
func GeneratedCamtRoundTrips(t *testing.T, seed int64, n int, conv func(*testing.T, *statement.Statement) []*statement.Statement) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	for k := 0; k < n; k++ {
		st := genStatement(rng, 1+rng.Intn(40))
		back := conv(t, st)
		if len(back) == 0 {
			t.Fatalf("generated case %d: no statement came back", k)
		}
		compareStatements(t, st, joinPages(st, back))
		if t.Failed() {
			t.Fatalf("generated case %d failed", k)
		}
	}
}
