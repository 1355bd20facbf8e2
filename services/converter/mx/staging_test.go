package mx

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// TestRenderSharesNoStagingBuffer: documents rendered at the same time, each
// on a staging buffer from the pool, come out exactly as rendered one at a
// time; a buffer handed to two renderers at once would mix them (and the race
// detector would say so).
func TestRenderSharesNoStagingBuffer(t *testing.T) {
	// Statements without a creation time are stamped with now: fixed, so
	// a second ticking over mid-test changes nothing.
	now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	defer func() { now = time.Now }()
	r := rand.New(rand.NewPCG(7, 7))
	docs := make([][]*statement.Statement, 8)
	want := make([]string, len(docs))
	for i := range docs {
		docs[i] = randomStatements(r, 1+i%3)
		var err error
		if want[i], _, err = Render(docs[i], typeCamt3, "camt.053.001.08"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % len(docs)
				got, _, err := Render(docs[i], typeCamt3, "camt.053.001.08")
				if err != nil || got != want[i] {
					d := 0
					for d < min(len(got), len(want[i])) && got[d] == want[i][d] {
						d++
					}
					t.Errorf("document %d rendered concurrently differs (err %v) at %d: %q vs %q", i, err, d, got[max(0, d-80):min(len(got), d+80)], want[i][max(0, d-80):min(len(want[i]), d+80)])
					return
				}
			}
		})
	}
	wg.Wait()
}
