package finance

import (
	"context"
	"time"
)

// ListAccounts answers GET /v1/accounts (ours; the spec leaves listing
// accounts open): the user's accounts the grant shows, by creation time
// then id, in cursor pages. Under connection.institution each account is
// redacted as on its balances route, and its nickname is dropped.
func (s *Service) ListAccounts(ctx context.Context, c Caller, q PageQuery) (Page[Account], error) {
	var page Page[Account]
	sc, err := s.scope(ctx, c, false)
	if err != nil {
		return page, err
	}
	size, err := pageSize(q.PageSize)
	if err != nil {
		return page, err
	}
	cursorScope := scopeString(c, "/v1/accounts")
	var after *ConnectionPosition
	if q.Cursor != "" {
		var pos connCursor
		if err := s.cursors.Decode(q.Cursor, cursorScope, &pos); err != nil {
			return page, badCursor()
		}
		at, err := time.Parse(time.RFC3339Nano, pos.CreatedAt)
		if err != nil || !isUUID(pos.ID) {
			return page, badCursor()
		}
		after = &ConnectionPosition{CreatedAt: at, ID: pos.ID}
	}
	all, err := s.store.ListAccounts(ctx, c.UserID)
	if err != nil {
		return page, s.internal(ctx, "list accounts", err)
	}
	var rows []Account
	for _, a := range all {
		if sc.hidesAccount(a.ID) {
			continue
		}
		if after != nil && compareCreatedAt(a.CreatedAt, a.ID, after.CreatedAt, after.ID) <= 0 {
			continue
		}
		rows = append(rows, a)
	}
	if len(rows) > size {
		rows = rows[:size]
		last := rows[size-1]
		page.HasMore = true
		pos := connCursor{CreatedAt: last.CreatedAt.UTC().Format(time.RFC3339Nano), ID: last.ID}
		if page.NextCursor, err = s.cursors.Encode(cursorScope, pos); err != nil {
			return page, s.internal(ctx, "encode cursor", err)
		}
	}
	if sc.grant.Redacts(FieldConnectionInstitution) {
		for i := range rows {
			redactAccount(&rows[i], sc.institutions)
			// A nickname is the user's label for the bank account and
			// often carries part of the brand ("Zorblax joint"), which
			// the phrase match does not catch: dropped whole here.
			rows[i].Nickname = ""
		}
	}
	page.Data = rows
	page.RedactedFields = sc.redacted(FieldConnectionInstitution)
	page.Filtered = len(sc.excludedAccounts) > 0
	return page, nil
}

func compareCreatedAt(aAt time.Time, aID string, bAt time.Time, bID string) int {
	if c := aAt.Compare(bAt); c != 0 {
		return c
	}
	switch {
	case aID < bID:
		return -1
	case aID > bID:
		return 1
	}
	return 0
}
