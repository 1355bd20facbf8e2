package auth

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/principal"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// sessionClient answers every secret as a portal session, or as a key of
// surface when set.
type sessionClient struct {
	calls   atomic.Int32
	surface string
}

func (c *sessionClient) ResolveCredential(context.Context, *meteringv1.ResolveCredentialRequest, ...grpc.CallOption) (*meteringv1.ResolveCredentialResponse, error) {
	c.calls.Add(1)
	if c.surface != "" {
		return &meteringv1.ResolveCredentialResponse{Principal: &meteringv1.Principal{AccountId: "a", Surface: c.surface}}, nil
	}
	return &meteringv1.ResolveCredentialResponse{
		Principal: &meteringv1.Principal{AccountId: "a", Kind: "ps", Surface: principal.SurfacePortal, PersonId: "p1",
			Scopes: []string{principal.ScopeKeysManage}},
		Session: &meteringv1.Session{UserId: "p1", CsrfToken: "c"},
	}, nil
}

// TestResolveSession: a session is resolved on every request (never from
// the cache, so signing out anywhere applies at once); a session token is
// no credential in a header; a cookie that resolves to a key is unknown.
func TestResolveSession(t *testing.T) {
	c := &sessionClient{}
	r := NewResolver(c, 5*time.Second, func() time.Time { return time.Unix(0, 0) })
	ctx := context.Background()
	for range 3 {
		res, err := r.ResolveSession(ctx, "ps_token")
		if err != nil || res.Principal.PersonID != "p1" || res.Session.GetCsrfToken() != "c" || res.Principal.Surface != principal.SurfacePortal {
			t.Fatalf("session: %+v %v", res, err)
		}
	}
	if c.calls.Load() != 3 {
		t.Fatalf("%d lookups for 3 requests: a session was cached", c.calls.Load())
	}
	for _, bad := range []string{"", "ps_", "ak_live_x", "ps_bad token", "ps_\xff"} {
		if _, err := r.ResolveSession(ctx, bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("ResolveSession(%q): %v, want ErrUnknown", bad, err)
		}
	}
	if Wellformed("ps_token") {
		t.Fatal("a session token is well-formed as a header credential")
	}
	keys := NewResolver(&sessionClient{surface: principal.SurfaceConversion}, time.Second, nil)
	if _, err := keys.ResolveSession(ctx, "ps_token"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("a key's principal through the cookie: %v", err)
	}
}
