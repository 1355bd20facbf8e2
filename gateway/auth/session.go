package auth

import (
	"context"
	"strings"

	"github.com/ledgerlane/platform/pkg/principal"
)

// The portal's session cookie is a credential like a key: the edge resolves
// it through the same metering call and the same cache, to a principal of
// the portal surface (docs/portal.md). Only the cookie carries one: a ps_
// secret in Authorization or X-API-Key is not well-formed (Wellformed), so
// a session can never call the /v1 API.

// ResolveSession returns the principal and person of a portal session
// token, ErrUnknown or ErrUnavailable. Unlike a key's, a session's answer is
// not cached (resolve).
func (r *Resolver) ResolveSession(ctx context.Context, token string) (Resolved, error) {
	if !strings.HasPrefix(token, "ps_") || !visibleASCII(token) {
		return Resolved{}, ErrUnknown
	}
	res, err := r.resolve(ctx, token)
	if err == nil && res.Principal.Surface != principal.SurfacePortal {
		return Resolved{}, ErrUnknown
	}
	return res, err
}

type sessionKey struct{}

// sessionResult is what the edge found for a request's session cookie.
type sessionResult struct {
	session *Resolved
	err     error
}

// WithSession records in ctx what the edge found for the request's session
// cookie: the resolved session (its principal also goes in principal.With),
// or ErrUnavailable when metering could not be asked. A request without a
// cookie, or with an unknown one, records nothing.
func WithSession(ctx context.Context, res Resolved, err error) context.Context {
	if err != nil {
		return context.WithValue(ctx, sessionKey{}, sessionResult{err: err})
	}
	return context.WithValue(ctx, sessionKey{}, sessionResult{session: &res})
}

// SessionFrom returns the session WithSession recorded: nil without one.
func SessionFrom(ctx context.Context) (*Resolved, error) {
	v, _ := ctx.Value(sessionKey{}).(sessionResult)
	return v.session, v.err
}
