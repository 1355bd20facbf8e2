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
