package postgres

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/metering/identity"
)

var _ identity.HousekeepingStore = (*Store)(nil)

// deleteExpired runs one bounded DELETE of rows expired at or before before,
// the oldest first, through the table's expiry index. cond narrows the rows
// (its own index predicate), and key is the column the batch is picked by.
func (s *Store) deleteExpired(ctx context.Context, what, table, key, cond string, before time.Time, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM `+table+` WHERE `+key+` IN (
		SELECT `+key+` FROM `+table+` WHERE `+cond+` expires_at <= $1 ORDER BY expires_at LIMIT $2)`, before, limit)
	if err != nil {
		return 0, storeErr("delete expired "+what, err)
	}
	return int(tag.RowsAffected()), nil
}

func (s *Store) DeleteExpiredSessions(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.deleteExpired(ctx, "sessions", "portal_sessions", "token_hash", "", before, limit)
}

func (s *Store) DeleteExpiredPortalTokens(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.deleteExpired(ctx, "portal tokens", "portal_tokens", "token_hash", "", before, limit)
}

func (s *Store) DeleteExpiredAccessTokens(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.deleteExpired(ctx, "access tokens", "credentials", "id", "oauth_client_id IS NOT NULL AND", before, limit)
}
