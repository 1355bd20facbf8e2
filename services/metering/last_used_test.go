package metering_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/memory"
)

// movedClock is a clock a test moves.
type movedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movedClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// TestResolveRecordsLastUse: authenticating records the time, at most once
// per LastUsedGranularity; a refused secret records nothing.
func TestResolveRecordsLastUse(t *testing.T) {
	store, clock := memory.New(), &movedClock{t: now}
	svc := metering.NewService(metering.Config{Store: store, Clock: clock.Now})
	advance := func(d time.Duration) { clock.Set(clock.Now().Add(d)) }
	ctx := t.Context()
	a, err := svc.CreateAccount(ctx, "A", metering.PlanStarter, metering.USD)
	if err != nil {
		t.Fatal(err)
	}
	secret, c, err := svc.IssueCredential(ctx, metering.IssueParams{AccountID: a.ID, Name: "ci",
		Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: metering.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	stored := func() *time.Time {
		t.Helper()
		got, err := store.CredentialByHash(ctx, c.SecretHash)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastUsedAt
	}
	if got := stored(); got != nil {
		t.Fatalf("a new key was last used at %v", got)
	}
	first := clock.Now().UTC().Truncate(time.Second)
	steps := []struct {
		name    string
		advance time.Duration
		want    time.Time
	}{
		{"first use", 0, first},
		{"within the granularity: not written again", 30 * time.Second, first},
		{"a minute after the recorded use", 30 * time.Second, first.Add(time.Minute)},
		{"much later", 3 * time.Hour, first.Add(time.Minute + 3*time.Hour)},
	}
	for _, st := range steps {
		advance(st.advance)
		got, err := svc.Resolve(ctx, secret)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if s := stored(); s == nil || !s.Equal(st.want) || got.LastUsedAt == nil || !got.LastUsedAt.Equal(st.want) {
			t.Fatalf("%s: stored %v, resolved %v; want %v", st.name, s, got.LastUsedAt, st.want)
		}
	}
	if err := svc.Revoke(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	if _, err := svc.Resolve(ctx, secret); err == nil {
		t.Fatal("a revoked key resolved")
	}
	if s := stored(); !s.Equal(steps[len(steps)-1].want) {
		t.Fatalf("a refused use was recorded: %v", s)
	}
}
