package local_test

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

// testInstant is the instant the stacks of this run start at:
// LOCAL_TEST_NOW (RFC 3339) when set, to rerun the suite at an instant the
// date sweep (dates_e2e_test.go) reported, else local.TestInstant.
var testInstant = sync.OnceValue(func() time.Time {
	v := os.Getenv("LOCAL_TEST_NOW")
	if v == "" {
		return local.TestInstant
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		panic(fmt.Sprintf("LOCAL_TEST_NOW=%q: want an RFC 3339 instant such as 2027-02-28T23:00:00Z", v))
	}
	return at.UTC()
})

// stepClock stands still until the test moves it (token buckets, billing
// periods); it starts at testInstant().
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStepClock() *stepClock { return &stepClock{t: testInstant()} }

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
