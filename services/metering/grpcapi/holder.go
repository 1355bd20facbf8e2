package grpcapi

import (
	"context"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
)

// holder is the account holder a call without an HTTP binding acts for: a
// portal session, the only principal that carries the reserved scope
// keys:manage (the edge resolves the session cookie to it). Every such call
// acts on this principal's account, never on an id a request names, so one
// account's session cannot reach another account; a key or token that found
// its way here is refused as the edge refuses a missing scope.
func holder(ctx context.Context) (principal.Principal, error) {
	p, ok := principal.FromIncoming(ctx)
	switch {
	case !ok:
		return principal.Principal{}, problem.New(problem.Unauthorized, "no caller")
	case p.Surface != principal.SurfacePortal || !p.HasScope(principal.ScopeKeysManage):
		return principal.Principal{}, problem.New(problem.ForbiddenScope, "this needs a portal session (scope keys:manage)")
	}
	return p, nil
}

// caller is any authenticated principal (GET /v1/usage, POST
// /v1/portal/billing/limits: the edge checked the scope).
func caller(ctx context.Context) (principal.Principal, error) {
	p, ok := principal.FromIncoming(ctx)
	if !ok {
		return principal.Principal{}, problem.New(problem.Unauthorized, "no caller")
	}
	return p, nil
}

// forHolder is the frame of every call without an HTTP binding: it runs do
// for the account holder's principal (holder) and answers a store that did
// not answer as 503 (storeError).
func forHolder[R any](ctx context.Context, do func(principal.Principal) (R, error)) (R, error) {
	var zero R
	p, err := holder(ctx)
	if err != nil {
		return zero, err
	}
	r, err := do(p)
	if err != nil {
		return zero, storeError(err)
	}
	return r, nil
}

// each converts every element of in with conv: a list answer's rows.
func each[T, P any](in []T, conv func(T) P) []P {
	out := make([]P, 0, len(in))
	for _, v := range in {
		out = append(out, conv(v))
	}
	return out
}
