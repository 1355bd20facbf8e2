// Package principal carries the authenticated caller from the gateway to the
// backend services as gRPC metadata. The gateway is the only public listener,
// so backends trust these headers; they never come from a client.
package principal

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"
)

// Surfaces a credential can belong to.
const (
	SurfaceConversion = "conversion"
	SurfaceFinance    = "finance"
	// SurfacePortal is a portal session: a person signed in to the web
	// portal, resolved by the edge from the session cookie. It holds the
	// reserved scope keys:manage, which no key or token can carry.
	SurfacePortal = "portal"
)

// ScopeKeysManage is the reserved scope of the account holder: key, OAuth
// client and billing management, held by portal sessions only.
const ScopeKeysManage = "keys:manage"

// Principal is the caller of one request.
type Principal struct {
	AccountID     string
	CredentialID  string
	Kind          string // "ak" or "at"
	Surface       string // SurfaceConversion or SurfaceFinance
	Mode          string // "live" or "test"
	Scopes        []string
	FinanceUserID string
	GrantID       string
	// PersonID is the signed-in person of a portal session.
	PersonID  string
	RequestID string
	// IdempotencyKey is the request's Idempotency-Key, as the edge checked
	// it (empty when none was sent): a backend that commits work stores it
	// so that a retry after a lost answer finds that work (jobs).
	IdempotencyKey string
}

// HasScope reports whether p carries scope s.
func (p Principal) HasScope(s string) bool {
	for _, have := range p.Scopes {
		if have == s {
			return true
		}
	}
	return false
}

const (
	mdAccount    = "x-ll-account-id"
	mdCredential = "x-ll-credential-id"
	mdKind       = "x-ll-credential-kind"
	mdSurface    = "x-ll-surface"
	mdMode       = "x-ll-mode"
	mdScopes     = "x-ll-scopes"
	mdUser       = "x-ll-finance-user-id"
	mdGrant      = "x-ll-grant-id"
	mdPerson     = "x-ll-person-id"
	mdRequest    = "x-request-id"
	mdIdemKey    = "x-ll-idempotency-key"
)

// Pairs returns p as metadata key/value pairs for an outgoing call. Empty
// fields are left out (FromIncoming reads a missing key as empty): every
// pair is encoded, sent and decoded into a map on each call, and a
// conversion request leaves three of them empty.
func (p Principal) Pairs() []string {
	kv := make([]string, 0, 20)
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k, v)
		}
	}
	add(mdAccount, p.AccountID)
	add(mdCredential, p.CredentialID)
	add(mdKind, p.Kind)
	add(mdSurface, p.Surface)
	add(mdMode, p.Mode)
	add(mdScopes, strings.Join(p.Scopes, " "))
	add(mdUser, p.FinanceUserID)
	add(mdGrant, p.GrantID)
	add(mdPerson, p.PersonID)
	add(mdRequest, p.RequestID)
	add(mdIdemKey, p.IdempotencyKey)
	return kv
}

// Outgoing attaches p to ctx for a gRPC call.
func Outgoing(ctx context.Context, p Principal) context.Context {
	return metadata.AppendToOutgoingContext(ctx, p.Pairs()...)
}

// FromIncoming reads the principal a backend was called with. ok is false when
// no account is present (an unauthenticated or internal call).
func FromIncoming(ctx context.Context) (Principal, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	get := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	p := Principal{
		AccountID:     get(mdAccount),
		CredentialID:  get(mdCredential),
		Kind:          get(mdKind),
		Surface:       get(mdSurface),
		Mode:          get(mdMode),
		Scopes:        strings.Fields(get(mdScopes)),
		FinanceUserID: get(mdUser),
		GrantID:       get(mdGrant),
		PersonID:      get(mdPerson),
		RequestID:     get(mdRequest),
	}
	p.IdempotencyKey = get(mdIdemKey)
	return p, p.AccountID != ""
}

type ctxKey struct{}

// With stores p in ctx for code in the same process (the gateway).
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal stored by With.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
