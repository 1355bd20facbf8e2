// Package auth finds the credential on a request and resolves it to a
// principal through the metering service, caching answers briefly so that a
// hot key costs one lookup every few seconds while revocation still takes
// effect within the cache TTL.
package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// ErrUnknown means the credential is missing, malformed, unknown or revoked;
// callers answer 401 without saying which.
var ErrUnknown = errors.New("unknown credential")

// ErrUnavailable means the metering service could not be asked.
var ErrUnavailable = errors.New("credential store unavailable")

// maxSecretLen bounds what we hash and send on: real secrets are ~60 chars.
const maxSecretLen = 256

// Ambiguous reports whether the request presents two different secrets,
// a Bearer token in Authorization and another in X-API-Key: which one would
// be used is nobody's guess, so such a request is refused (400), never
// decided silently.
func Ambiguous(r *http.Request) bool {
	k := strings.TrimSpace(r.Header.Get("X-API-Key"))
	return k != "" && r.Header.Get("Authorization") != "" && FromRequest(r) != k
}

// FromRequest returns the presented secret: a Bearer token in Authorization,
// else the X-API-Key header. Both carry the same kinds of credential (ak_ API
// keys, at_ access tokens).
func FromRequest(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	return strings.TrimSpace(r.Header.Get("X-API-Key"))
}

// Wellformed is a cheap check before any lookup. Secrets are visible ASCII:
// anything else (invalid UTF-8 above all, which gRPC refuses to send) is
// unknown without asking metering.
func Wellformed(secret string) bool {
	return (strings.HasPrefix(secret, "ak_") || strings.HasPrefix(secret, "at_")) && visibleASCII(secret)
}

// visibleASCII reports whether secret has a plausible length and only
// visible ASCII.
func visibleASCII(secret string) bool {
	if len(secret) <= 3 || len(secret) > maxSecretLen {
		return false
	}
	for i := 0; i < len(secret); i++ {
		if secret[i] < 0x21 || secret[i] > 0x7e {
			return false
		}
	}
	return true
}

// Credentials is the one call of metering's CredentialService the resolver
// makes.
type Credentials interface {
	ResolveCredential(ctx context.Context, in *meteringv1.ResolveCredentialRequest, opts ...grpc.CallOption) (*meteringv1.ResolveCredentialResponse, error)
}

// Resolver resolves secrets through the metering service with a cache.
type Resolver struct {
	client      Credentials
	ttl         time.Duration // positive answers
	negativeTTL time.Duration // unknown secrets; short so a new key works at once
	now         func() time.Time
	maxEntries  int

	mu    sync.Mutex
	cache map[[32]byte]entry
}

type entry struct {
	p       principal.Principal
	limits  *meteringv1.AccountLimits
	known   bool
	expires time.Time
}

// staleIfError is how long a known credential keeps working past its TTL while
// the metering service cannot be reached: an outage there must not lock out
// every client, and no revocation can happen while it is down anyway.
const staleIfError = 5 * time.Minute

// NewResolver caches positive answers for ttl (revocation lag) and negative
// ones for one second.
func NewResolver(client Credentials, ttl time.Duration, now func() time.Time) *Resolver {
	if now == nil {
		now = time.Now
	}
	return &Resolver{client: client, ttl: ttl, negativeTTL: time.Second, now: now, maxEntries: 50_000, cache: map[[32]byte]entry{}}
}

// Resolved is a credential's principal and its account's limits, or for a
// portal session the signed-in person.
type Resolved struct {
	Principal principal.Principal
	Limits    *meteringv1.AccountLimits
	Session   *meteringv1.Session
}

// Resolve returns the principal for secret, ErrUnknown, or ErrUnavailable.
func (r *Resolver) Resolve(ctx context.Context, secret string) (principal.Principal, error) {
	res, err := r.ResolveWithLimits(ctx, secret)
	return res.Principal, err
}

// ResolveWithLimits is Resolve plus the account's limits snapshot.
func (r *Resolver) ResolveWithLimits(ctx context.Context, secret string) (Resolved, error) {
	if !Wellformed(secret) {
		return Resolved{}, ErrUnknown
	}
	return r.resolve(ctx, secret)
}

// resolve answers a well-formed secret from the cache or metering.
func (r *Resolver) resolve(ctx context.Context, secret string) (Resolved, error) {
	// Keyed by hash so the cache never holds a secret.
	k := sha256.Sum256([]byte(secret))
	now := r.now()
	r.mu.Lock()
	e, ok := r.cache[k]
	r.mu.Unlock()
	if ok && now.Before(e.expires) {
		if !e.known {
			return Resolved{}, ErrUnknown
		}
		return Resolved{Principal: e.p, Limits: e.limits}, nil
	}
	resp, err := r.client.ResolveCredential(ctx, &meteringv1.ResolveCredentialRequest{Secret: secret})
	switch status.Code(err) {
	case codes.OK:
		pp := resp.GetPrincipal()
		p := principal.Principal{
			AccountID: pp.GetAccountId(), CredentialID: pp.GetCredentialId(), Kind: pp.GetKind(),
			Surface: pp.GetSurface(), Mode: pp.GetMode(), Scopes: pp.GetScopes(),
			FinanceUserID: pp.GetFinanceUserId(), GrantID: pp.GetGrantId(), PersonID: pp.GetPersonId(),
		}
		if s := resp.GetSession(); s != nil {
			// A session is never cached: signing out, a password reset or a
			// verified address on any replica applies to the very next page,
			// and a person's clicks are few.
			return Resolved{Principal: p, Session: s}, nil
		}
		r.store(k, entry{p: p, limits: resp.GetLimits(), known: true, expires: now.Add(r.ttl)})
		return Resolved{Principal: p, Limits: resp.GetLimits()}, nil
	case codes.NotFound, codes.Unauthenticated, codes.InvalidArgument:
		r.store(k, entry{expires: now.Add(r.negativeTTL)})
		return Resolved{}, ErrUnknown
	default:
		if ok && e.known && now.Before(e.expires.Add(staleIfError)) {
			return Resolved{Principal: e.p, Limits: e.limits}, nil
		}
		return Resolved{}, ErrUnavailable
	}
}

func (r *Resolver) store(k [32]byte, e entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cache) >= r.maxEntries {
		// Dropping everything is crude but bounded; a full cache means a flood
		// of distinct secrets, and those would miss anyway.
		clear(r.cache)
	}
	r.cache[k] = e
}

// ForgetAccount drops every cached credential of an account, so a change to
// its limits made through this gateway applies to its next request; other
// replicas pick it up within their TTL.
func (r *Resolver) ForgetAccount(accountID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, e := range r.cache {
		if e.known && e.p.AccountID == accountID {
			delete(r.cache, k)
		}
	}
}
