package identity_test

import (
	"context"
	"crypto/rand"
	"os"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/redisthrottle"
)

// replicas are two Services on one store and one clock; with Redis they
// share their throttles as two metering replicas do.
func replicas(t *testing.T, shared bool) (*portalEnv, *identity.Service) {
	t.Helper()
	e := newPortal(t)
	if !shared {
		return e, e.identity(nil)
	}
	if os.Getenv("TEST_REDIS_URL") == "" {
		t.Skip("TEST_REDIS_URL not set: the Redis throttle is not tested")
	}
	// A key prefix of this run's own: parallel stacks share that Redis.
	th := redisthrottle.Kinds(redisconn.ForTest(t), "lltest-"+rand.Text()+":", nil)
	e.svc = e.identity(th)
	return e, e.identity(th)
}

func TestSignInThrottleSharedByReplicas(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "redis"}[shared], func(t *testing.T) {
			ctx := context.Background()
			e, other := replicas(t, shared)
			if _, _, err := e.svc.SignUp(ctx, "ann@example.com", goodPassword, "Acme", ""); err != nil {
				t.Fatal(err)
			}
			// SignInFailures failures spread over the two replicas.
			for i := range identity.SignInFailures {
				svc := []*identity.Service{e.svc, other}[i%2]
				if _, _, err := svc.SignIn(ctx, "ann@example.com", "wrong password!!"); err != identity.ErrSignIn {
					t.Fatalf("failure %d: %v, want ErrSignIn", i, err)
				}
			}
			for i, svc := range []*identity.Service{e.svc, other} {
				_, _, err := svc.SignIn(ctx, "ann@example.com", goodPassword)
				p := rpc.Problem(err)
				locked := p != nil && p.Type == problem.RateLimited && p.RetryAfter > 0
				// In process, neither replica saw SignInFailures failures.
				if locked != shared {
					t.Errorf("replica %d: right password answers %v; locked = %v, want %v", i, err, locked, shared)
				}
				if !shared {
					break // a success clears that replica's count; the other is checked above enough
				}
			}
		})
	}
}

func TestSignUpThrottle(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "redis"}[shared], func(t *testing.T) {
			ctx := context.Background()
			e, other := replicas(t, shared)
			svcs := []*identity.Service{e.svc, other}
			if !shared {
				svcs = svcs[:1]
			}
			// A refused password does not count.
			if _, _, err := e.svc.SignUp(ctx, "bo@example.com", "short", "Acme", ""); err == nil || rpc.Problem(err).Type == problem.RateLimited {
				t.Fatalf("weak password: %v, want invalid", err)
			}
			for i := range identity.SignUps {
				e.advance(time.Minute)
				if _, _, err := svcs[i%len(svcs)].SignUp(ctx, "Bo@Example.com", goodPassword, "Acme", ""); err != nil {
					t.Fatalf("sign-up %d: %v", i, err)
				}
			}
			p := rpc.Problem(ignoreSession(svcs[len(svcs)-1].SignUp(ctx, "<bo@example.com>", goodPassword, "Acme", "")))
			// The first sign-up leaves the window SignUpWindow after it was made.
			want := int((identity.SignUpWindow - time.Duration(identity.SignUps-1)*time.Minute).Seconds())
			if p == nil || p.Type != problem.RateLimited || p.RetryAfter != want {
				t.Fatalf("sign-up over the limit: %+v, want rate-limited with Retry-After %d", p, want)
			}
			if _, _, err := e.svc.SignUp(ctx, "cy@example.com", goodPassword, "Acme", ""); err != nil {
				t.Errorf("another address: %v", err)
			}
			e.advance(time.Duration(want) * time.Second)
			if _, _, err := e.svc.SignUp(ctx, "bo@example.com", goodPassword, "Acme", ""); err != nil {
				t.Errorf("after the window: %v", err)
			}
		})
	}
}

func ignoreSession(_ string, _ identity.SessionInfo, err error) error { return err }
