package identity

import (
	"context"
	"fmt"
	"time"
)

// HousekeepingStore deletes rows that can no longer be used and that no
// request would otherwise remove (part of Store). Each method deletes at most
// limit rows, the oldest expiry first, and says how many it deleted; an
// expired row answers exactly as an unknown one, so deleting it changes no
// answer.
type HousekeepingStore interface {
	// DeleteExpiredSessions removes portal sessions whose ExpiresAt is at
	// or before before. Sign-out removes its own session; this removes the
	// ones nobody signed out of.
	DeleteExpiredSessions(ctx context.Context, before time.Time, limit int) (int, error)
	// DeleteExpiredPortalTokens removes password-reset and verification
	// tokens, used or not, whose ExpiresAt is at or before before.
	DeleteExpiredPortalTokens(ctx context.Context, before time.Time, limit int) (int, error)
	// DeleteExpiredAccessTokens removes OAuth access tokens (credentials
	// issued to a client) whose ExpiresAt is at or before before, of every
	// client: a grant clears its own client's (DeleteExpiredTokens), but a
	// client that stops asking, or is revoked, leaves its last ones.
	DeleteExpiredAccessTokens(ctx context.Context, before time.Time, limit int) (int, error)
}

// HousekeepingInterval is how often a replica's billing loop runs
// Housekeep. Expired rows only take space, so an hour is plenty; replicas
// may run it at once (deleting is idempotent).
const HousekeepingInterval = time.Hour

// housekeepingBatch bounds one DELETE, so a large backlog (the first run
// after an upgrade) is removed in short transactions.
const housekeepingBatch = 1000

// Housekept counts what one Housekeep run deleted.
type Housekept struct {
	Sessions, PortalTokens, AccessTokens int
}

// Housekeep deletes expired portal sessions, portal tokens and OAuth access
// tokens (service clock), in batches until none is left. A failed kind is
// reported; the kinds before it stay deleted and the next run goes on.
func (s *Service) Housekeep(ctx context.Context) (Housekept, error) {
	now := s.now()
	var done Housekept
	for _, k := range []struct {
		what  string
		count *int
		del   func(context.Context, time.Time, int) (int, error)
	}{
		{"sessions", &done.Sessions, s.store.DeleteExpiredSessions},
		{"portal tokens", &done.PortalTokens, s.store.DeleteExpiredPortalTokens},
		{"access tokens", &done.AccessTokens, s.store.DeleteExpiredAccessTokens},
	} {
		for {
			n, err := k.del(ctx, now, housekeepingBatch)
			*k.count += n
			if err != nil {
				return done, fmt.Errorf("housekeeping: expired %s: %w", k.what, err)
			}
			if n < housekeepingBatch {
				break
			}
		}
	}
	if done != (Housekept{}) {
		s.log.InfoContext(ctx, "deleted expired rows", "sessions", done.Sessions,
			"portal_tokens", done.PortalTokens, "access_tokens", done.AccessTokens)
	}
	return done, nil
}
