package gateway

import (
	"errors"
	"net/http"

	"github.com/ledgerlane/platform/gateway/auth"
	"github.com/ledgerlane/platform/gateway/portal"
	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/pkg/principal"
)

// serveWeb serves a web row (the portal). Its credential is the session
// cookie, resolved through the same resolver and cache as a key: the
// handler finds the principal in principal.From and the person in
// auth.SessionFrom, and calls the services with that principal. No cookie,
// or one that is not a live session, is an anonymous request: the sign-in
// pages serve it and every other page sends it to sign in. It returns the
// account, for the access log.
func (g *Gateway) serveWeb(w http.ResponseWriter, r *http.Request, rt route.Route, reqID string) string {
	ctx := r.Context()
	var account string
	if c, err := r.Cookie(portal.SessionCookie); err == nil && c.Value != "" {
		res, err := g.resolver.ResolveSession(ctx, c.Value)
		switch {
		case err == nil:
			res.Principal.RequestID = reqID
			account = res.Principal.AccountID
			ctx = auth.WithSession(principal.With(ctx, res.Principal), res, nil)
		case errors.Is(err, auth.ErrUnavailable):
			g.log.Warn("session lookup failed", "request_id", reqID)
			ctx = auth.WithSession(ctx, auth.Resolved{}, err)
		}
	}
	g.handlers[rt.Handler].ServeHTTP(w, r.WithContext(ctx))
	return account
}
