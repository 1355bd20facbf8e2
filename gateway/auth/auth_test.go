package auth

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

func TestFromRequest(t *testing.T) {
	tests := []struct {
		name          string
		authz, apiKey string
		want          string
		ambiguous     bool
	}{
		{"bearer", "Bearer ak_live_x", "", "ak_live_x", false},
		{"bearer any case", "bearer at_test_y", "", "at_test_y", false},
		{"x-api-key", "", "ak_live_z", "ak_live_z", false},
		{"both, different: refused", "Bearer ak_live_a", "ak_live_b", "ak_live_a", true},
		{"both, the same", "Bearer ak_live_a", " ak_live_a", "ak_live_a", false},
		{"basic and a key: refused", "Basic abc", "ak_live_b", "", true},
		{"none", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tt.authz != "" {
				r.Header.Set("Authorization", tt.authz)
			}
			if tt.apiKey != "" {
				r.Header.Set("X-API-Key", tt.apiKey)
			}
			if got := FromRequest(r); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if got := Ambiguous(r); got != tt.ambiguous {
				t.Fatalf("ambiguous %v, want %v", got, tt.ambiguous)
			}
		})
	}
}

type countingClient struct {
	calls atomic.Int32
	code  codes.Code
}

func (c *countingClient) ResolveCredential(context.Context, *meteringv1.ResolveCredentialRequest, ...grpc.CallOption) (*meteringv1.ResolveCredentialResponse, error) {
	c.calls.Add(1)
	if c.code != codes.OK {
		return nil, status.Error(c.code, "x")
	}
	return &meteringv1.ResolveCredentialResponse{Principal: &meteringv1.Principal{AccountId: "a", Surface: "conversion"}}, nil
}

func TestResolverCaching(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	c := &countingClient{}
	r := NewResolver(c, 5*time.Second, clock)
	ctx := context.Background()

	for range 3 {
		if _, err := r.Resolve(ctx, "ak_live_k"); err != nil {
			t.Fatal(err)
		}
	}
	if c.calls.Load() != 1 {
		t.Fatalf("want one lookup within the TTL, got %d", c.calls.Load())
	}
	now = now.Add(6 * time.Second)
	_, _ = r.Resolve(ctx, "ak_live_k")
	if c.calls.Load() != 2 {
		t.Fatalf("want a fresh lookup after the TTL, got %d", c.calls.Load())
	}

	if _, err := r.Resolve(ctx, "not-a-key"); err != ErrUnknown {
		t.Fatalf("malformed secret: %v", err)
	}
	if c.calls.Load() != 2 {
		t.Fatal("a malformed secret must not reach metering")
	}

	c.code = codes.Unauthenticated
	if _, err := r.Resolve(ctx, "ak_live_unknown"); err != ErrUnknown {
		t.Fatalf("unknown: %v", err)
	}
	c.code = codes.Unavailable
	if _, err := r.Resolve(ctx, "ak_live_other"); err != ErrUnavailable {
		t.Fatalf("metering down: %v", err)
	}
}

func TestResolverCacheIsBounded(t *testing.T) {
	r := NewResolver(&countingClient{}, time.Minute, nil)
	r.maxEntries = 10
	for i := range 25 {
		_, _ = r.Resolve(context.Background(), "ak_live_"+string(rune('a'+i)))
	}
	if len(r.cache) > 10 {
		t.Fatalf("cache grew to %d entries", len(r.cache))
	}
}

func TestResolverServesStaleWhileMeteringIsDown(t *testing.T) {
	now := time.Unix(0, 0)
	c := &countingClient{}
	r := NewResolver(c, 5*time.Second, func() time.Time { return now })
	ctx := context.Background()
	if _, err := r.Resolve(ctx, "ak_live_k"); err != nil {
		t.Fatal(err)
	}
	c.code = codes.Unavailable
	now = now.Add(time.Minute) // past the TTL, within stale-if-error
	if _, err := r.Resolve(ctx, "ak_live_k"); err != nil {
		t.Fatalf("a known key must keep working while metering is down: %v", err)
	}
	now = now.Add(10 * time.Minute)
	if _, err := r.Resolve(ctx, "ak_live_k"); err != ErrUnavailable {
		t.Fatalf("past stale-if-error: %v", err)
	}
	if _, err := r.Resolve(ctx, "ak_live_never_seen"); err != ErrUnavailable {
		t.Fatalf("an unknown key with metering down: %v", err)
	}
}

func TestWellformed(t *testing.T) {
	for _, tt := range []struct {
		secret string
		want   bool
	}{
		{"ak_live_abc", true},
		{"at_test_abc", true},
		{"ak_", false},
		{"xx_live_abc", false},
		{"ak_live_\xff\xfe", false},
		{"ak_live_a b", false},
		{"ak_live_\x00", false},
		{"ak_live_é", false},
	} {
		if got := Wellformed(tt.secret); got != tt.want {
			t.Errorf("Wellformed(%q) = %v", tt.secret, got)
		}
	}
}
