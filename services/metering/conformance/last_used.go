package conformance

import (
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/metering"
)

// testTouchCredential: the last use moves forward only (replicas may touch
// out of order), shows in every read, and an unknown id is not found.
func testTouchCredential(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("a")
	mustCreateAccount(t, s, a)
	c, other := newCredential(a.ID, t0), newCredential(a.ID, t0)
	for _, x := range []metering.Credential{c, other} {
		if err := s.CreateCredential(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	lastUsed := func(id, hash string) *time.Time {
		t.Helper()
		byHash, err := s.CredentialByHash(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		list, err := s.ListCredentials(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range list {
			if l.ID == id && !equalTimes(l.LastUsedAt, byHash.LastUsedAt) {
				t.Fatalf("ListCredentials says %v, CredentialByHash %v", l.LastUsedAt, byHash.LastUsedAt)
			}
		}
		return byHash.LastUsedAt
	}
	if got := lastUsed(c.ID, c.SecretHash); got != nil {
		t.Fatalf("a new credential was last used at %v", got)
	}
	for _, step := range []struct {
		at   time.Time
		want time.Time
	}{
		{t0.Add(time.Minute), t0.Add(time.Minute)},
		{t0.Add(3 * time.Minute), t0.Add(3 * time.Minute)},
		{t0.Add(2 * time.Minute), t0.Add(3 * time.Minute)}, // a late touch does not go back
		{t0.Add(3 * time.Minute), t0.Add(3 * time.Minute)},
	} {
		wantErr(t, s.TouchCredential(ctx, c.ID, step.at), nil)
		if got := lastUsed(c.ID, c.SecretHash); got == nil || !got.Equal(step.want) {
			t.Fatalf("after a touch at %v: last used %v, want %v", step.at, got, step.want)
		}
	}
	if got := lastUsed(other.ID, other.SecretHash); got != nil {
		t.Fatalf("another credential was touched: %v", got)
	}
	wantErr(t, s.TouchCredential(ctx, "00000000-0000-0000-0000-000000000000", t0), metering.ErrNotFound)
	wantErr(t, s.TouchCredential(ctx, "not-a-uuid", t0), metering.ErrNotFound)
}

func equalTimes(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}
