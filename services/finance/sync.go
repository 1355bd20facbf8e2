package finance

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
)

// The change feed, GET /v1/transactions/sync (docs/transactions-sync.md).
//
// Every write of a transaction row (insert, update, delete; whatever path:
// PATCH, bulk recategorize, category merge, bank sync, import, splits,
// recurring links) stamps the row with the next value of one monotonically
// increasing change sequence; a deleted row leaves a tombstone with its own
// sequence value. A cursor holds the last sequence value delivered, and a
// page reads the changes above it in sequence order, so a row changed twice
// between calls appears once, in its latest form.
//
// Visibility is decided at read time. A row is shown as the client would
// see it now (redacted and filtered by the grant). Whether the client may
// already hold it is worked out from its history up to the cursor
// (heldUnder): it existed then (CreatedSeq), its account and one of the
// categories it had up to then (the category log keeps the old category of
// every recategorisation) were not excluded by the scope the cursor
// recorded. A grant whose exclusions or redactions changed since the
// cursor is caught up first by a transition over the affected rows
// (syncTransition), which moves the client's copy from the cursor's scope
// to the grant's current one.
//
// Nothing is skipped when writes race the read: the store hands out
// sequence values only up to a point below which every writer has
// committed (each store says how: one lock in memory, a per-user advisory
// lock in PostgreSQL).

// Feed bounds.
const (
	DefaultSyncCount = 100
	MaxSyncCount     = 500
	// SyncRetention is how long tombstones and the category log are kept,
	// and so how old a cursor may be: an older one is sync-cursor-expired.
	SyncRetention = 30 * 24 * time.Hour
	// SyncPath names the route; its cursors are bound to it.
	SyncPath = "/v1/transactions/sync"
)

// TxChange is one transaction's latest change as the feed reads it.
type TxChange struct {
	// Seq is the change sequence of the row's latest write (or of its
	// deletion); CreatedSeq the one of its insert.
	Seq        int64
	CreatedSeq int64
	Deleted    bool
	// Tx is the row; of a deleted row only ID, UserID, AccountID and
	// CategoryID (as they were when it was deleted).
	Tx Transaction
	// CategoryLog is the row's recategorisations kept (SyncRetention), by
	// sequence: what its category was before each.
	CategoryLog []CategoryChange
}

// CategoryChange is one recategorisation of a row: at sequence Seq its
// category stopped being Old.
type CategoryChange struct {
	Seq int64
	Old string
}

// categoriesUpTo is every category the row had in a version at or below
// position at (oldest first): the client may hold any of those versions
// (the one current when a page last covered it), not only the last.
func (ch TxChange) categoriesUpTo(at int64) []string {
	var out []string
	start := ch.CreatedSeq
	for _, e := range ch.CategoryLog {
		if start <= at {
			out = append(out, e.Old)
		}
		start = e.Seq
	}
	if start <= at {
		out = append(out, ch.Tx.CategoryID)
	}
	return out
}

// heldUnder reports whether the client, whose copy reflects v up to
// position at, may hold a version of the row: one at or below at that v
// showed. It can say yes for a row the client never received (a version
// superseded before a page covered it); it never says no for one it holds.
func (ch TxChange) heldUnder(v syncScope, at int64) bool {
	if ch.CreatedSeq > at || slices.Contains(v.Accounts, ch.Tx.AccountID) {
		return false
	}
	return slices.ContainsFunc(ch.categoriesUpTo(at), func(cat string) bool { return !v.hides(ch.Tx.AccountID, cat) })
}

// ChangeBatch is one read of the feed: the changes and the horizon.
type ChangeBatch struct {
	Changes []TxChange
	// Horizon is the highest sequence value whose tombstone or category
	// log entry was pruned: a cursor below it cannot be served.
	Horizon int64
}

// ChangeStore is the feed's part of the Store.
type ChangeStore interface {
	// TransactionChanges returns up to limit of the user's changes whose
	// sequence is above after, in sequence order, each with its
	// CategoryLog. Every sequence value at or below the highest one
	// returned belongs to a committed write: no write can later commit
	// below it. It first prunes the user's tombstones and category log
	// entries older than retention.
	TransactionChanges(ctx context.Context, userID string, after int64, limit int, retention time.Duration) (ChangeBatch, error)
	// TransactionsAt returns, by id above afterID, up to limit of the
	// user's rows and tombstones that a scope transition at position at
	// must look at, each with its CategoryLog: rows on accountIDs or in
	// categoryIDs (all rows when all), and every row or tombstone changed
	// since at. The int64 is the horizon, as for TransactionChanges.
	TransactionsAt(ctx context.Context, userID string, at int64, accountIDs, categoryIDs []string, all bool, afterID string, limit int) ([]TxChange, int64, error)
	// UpdateGrant is a compare-and-swap: it replaces the settings of grant
	// g (redacted fields, exclusions, writes_enabled, version, updated_at,
	// LastWrite) only if the stored grant's version is expectedVersion.
	// ErrNotFound when the user has no such grant, ErrVersionConflict when
	// the version differs. The notes are stored in the outbox in the same
	// transaction (none when the write is refused).
	UpdateGrant(ctx context.Context, g Grant, expectedVersion int64, notes ...Note) error
}

// SyncQuery is GET /v1/transactions/sync.
type SyncQuery struct {
	Cursor string
	Count  *int32 // nil: DefaultSyncCount
}

// SyncPage is one answer of the feed.
type SyncPage struct {
	Added    []Transaction
	Modified []Transaction
	Removed  []string
	// NextCursor is always set: the position to ask from next.
	NextCursor     string
	HasMore        bool
	RedactedFields []string
	Filtered       bool
}

// syncScope is what decides which rows a client holds and how it sees them:
// the grant's exclusions (categories with their subcategories) and
// redactions, sorted.
type syncScope struct {
	Accounts   []string `json:"xa,omitempty"`
	Categories []string `json:"xc,omitempty"`
	Redacted   []string `json:"r,omitempty"`
}

// newSyncScope is the scope of sc (loaded with categories).
func newSyncScope(sc Scope) syncScope {
	sorted := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		s = slices.Clone(s)
		slices.Sort(s)
		return slices.Compact(s)
	}
	return syncScope{Accounts: sorted(sc.excludedAccounts), Categories: sorted(sc.excludedCategories),
		Redacted: sorted(sc.grant.RedactedFields)}
}

func (v syncScope) equal(o syncScope) bool {
	return slices.Equal(v.Accounts, o.Accounts) && slices.Equal(v.Categories, o.Categories) && slices.Equal(v.Redacted, o.Redacted)
}

func (v syncScope) hides(accountID, categoryID string) bool {
	return slices.Contains(v.Accounts, accountID) || (categoryID != "" && slices.Contains(v.Categories, categoryID))
}

// syncCursor is the signed position of the feed.
type syncCursor struct {
	// Seq: every change at or below it has been delivered.
	Seq int64 `json:"s"`
	// Issued is when the client was last caught up (a page with has_more
	// false) or started (service clock, Unix seconds): every version it
	// holds was current at or after it, so the history kept for the
	// retention after it is enough to serve it.
	Issued int64 `json:"t"`
	// Scope is the scope the client's copy reflects.
	Scope syncScope `json:"v"`
	// To and After are set during a transition: the scope it moves the
	// copy to, and the last id it has looked at.
	To    *syncScope `json:"to,omitempty"`
	After string     `json:"a,omitempty"`
}

// syncCount reads count: default 100, 1 to 500.
func syncCount(n *int32) (int, error) {
	switch {
	case n == nil:
		return DefaultSyncCount, nil
	case *n < 1 || *n > MaxSyncCount:
		return 0, Invalid("count", "count must be between 1 and "+strconv.Itoa(MaxSyncCount))
	}
	return int(*n), nil
}

func expiredCursor() error {
	return problem.New(problem.SyncCursorExpired,
		"the cursor is older than the feed's 30-day retention: sync again from an empty cursor and replace your copy").
		WithField("cursor")
}

// SyncTransactions answers GET /v1/transactions/sync: the changes to the
// transactions this grant sees since the cursor (none: everything, as
// added), in pages of count changes.
func (s *Service) SyncTransactions(ctx context.Context, c Caller, q SyncQuery) (SyncPage, error) {
	var page SyncPage
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return page, err
	}
	count, err := syncCount(q.Count)
	if err != nil {
		return page, err
	}
	bound := scopeString(c, SyncPath)
	var cur *syncCursor
	if q.Cursor != "" {
		cur = new(syncCursor)
		if err := s.cursors.Decode(q.Cursor, bound, cur); err != nil || cur.Seq < 0 {
			return page, badCursor()
		}
		if s.now().Sub(time.Unix(cur.Issued, 0)) > SyncRetention {
			return page, expiredCursor()
		}
	}
	// Taken before the read: a page that catches the client up holds
	// versions current at the read, never before this.
	start := s.now().Unix()
	issued := start
	if cur != nil {
		issued = cur.Issued
	}
	var next syncCursor
	switch {
	case cur != nil && cur.To != nil:
		next, err = s.syncTransition(ctx, c, sc, *cur, count, &page)
	default:
		next, err = s.syncChanges(ctx, c, sc, cur, count, &page)
	}
	if err != nil {
		return page, err
	}
	next.Issued = issued
	if !page.HasMore {
		next.Issued = start
	}
	if page.NextCursor, err = s.cursors.Encode(bound, next); err != nil {
		return page, Internal("encode cursor", err)
	}
	page.RedactedFields = sc.Redacted(FieldTransactionLocation, FieldConnectionInstitution)
	page.Filtered = sc.grant.Filtered()
	return page, nil
}

// syncChanges is a page of the changes after the cursor (nil: from the
// start). When the grant's scope is no longer the cursor's, it answers the
// first page of a transition instead.
func (s *Service) syncChanges(ctx context.Context, c Caller, sc Scope, cur *syncCursor, count int, page *SyncPage) (syncCursor, error) {
	var after int64
	if cur != nil {
		after = cur.Seq
	}
	b, err := s.store.TransactionChanges(ctx, c.UserID, after, count+1, SyncRetention)
	if err != nil {
		return syncCursor{}, Internal("read transaction changes", err)
	}
	if cur != nil && after < b.Horizon {
		return syncCursor{}, expiredCursor()
	}
	// The rows are judged by the request's scope, and the cursor records
	// it: a grant that changes after it was loaded is caught up by a
	// transition on the next page, so the two need not be read together.
	now := newSyncScope(sc)
	if cur != nil && !cur.Scope.equal(now) {
		return s.syncTransition(ctx, c, sc, syncCursor{Seq: after, Scope: cur.Scope, To: &now}, count, page)
	}
	changes := b.Changes
	if len(changes) > count {
		changes, page.HasMore = changes[:count], true
	}
	next := syncCursor{Seq: after, Scope: now}
	for _, ch := range changes {
		next.Seq = ch.Seq
		then := cur != nil && ch.heldUnder(cur.Scope, after)
		visible := !ch.Deleted && !now.hides(ch.Tx.AccountID, ch.Tx.CategoryID)
		emit(page, sc, ch, then, visible)
	}
	return next, nil
}

// syncTransition moves the client's copy from the cursor's scope to
// cur.To, a page of count rows at a time by id, without moving the
// sequence position: every row is judged by its state at cur.Seq (which
// history keeps: CreatedSeq, the category log, tombstones), so writes
// racing the transition change nothing it decides, and the changes after
// cur.Seq follow as usual once it is done, judged by cur.To.
//
//   - a row unchanged since the position is held by the client exactly when
//     the old scope shows it: when the new one hides it, it is removed;
//     one the new scope shows and the old one hid is added as it is; with
//     other redactions every row both show is modified;
//   - a row changed or deleted since the position may be held in any of its
//     versions up to the position (heldUnder): it is removed when the old
//     scope may have shown one and the new one showed none, so that what
//     the client may hold is again what the new scope may have shown; the
//     changes that follow bring the rest (a row the new scope showed but the
//     client never got arrives as modified: clients apply added and
//     modified alike, as upserts).
func (s *Service) syncTransition(ctx context.Context, c Caller, sc Scope, cur syncCursor, count int, page *SyncPage) (syncCursor, error) {
	from, to := cur.Scope, *cur.To
	accounts := symmetricDiff(from.Accounts, to.Accounts)
	categories := symmetricDiff(from.Categories, to.Categories)
	all := !slices.Equal(from.Redacted, to.Redacted)
	rows, horizon, err := s.store.TransactionsAt(ctx, c.UserID, cur.Seq, accounts, categories, all, cur.After, count+1)
	if err != nil {
		return cur, Internal("read transactions at a position", err)
	}
	if cur.Seq < horizon {
		return cur, expiredCursor()
	}
	// The page is shown with the transition's target scope, which may lag
	// the grant's (a later transition follows): the cursor says the copy
	// reflects it, so its rows must be redacted by it.
	shown, err := s.showing(ctx, c, sc, to)
	if err != nil {
		return cur, err
	}
	next := cur
	page.HasMore = true
	if len(rows) > count {
		rows = rows[:count]
	} else {
		// Done: the copy now reflects the target scope at the position.
		next = syncCursor{Seq: cur.Seq, Scope: to}
	}
	for _, ch := range rows {
		if next.To != nil {
			next.After = ch.Tx.ID
		}
		if ch.Seq > cur.Seq {
			if ch.heldUnder(from, cur.Seq) && !ch.heldUnder(to, cur.Seq) {
				page.Removed = append(page.Removed, ch.Tx.ID)
			}
			continue
		}
		then := !from.hides(ch.Tx.AccountID, ch.Tx.CategoryID)
		atPosition := !to.hides(ch.Tx.AccountID, ch.Tx.CategoryID)
		if then && atPosition && !all {
			continue
		}
		emit(page, shown, ch, then, atPosition)
	}
	return next, nil
}

// showing is sc made to show rows as scope v does: its exclusions and
// redactions (loading the institutions' names when v redacts them and sc
// did not).
func (s *Service) showing(ctx context.Context, c Caller, sc Scope, v syncScope) (Scope, error) {
	sc.grant.RedactedFields = v.Redacted
	sc.excludedAccounts, sc.excludedCategories = v.Accounts, v.Categories
	if sc.grant.Redacts(FieldConnectionInstitution) && sc.institutions == nil {
		var err error
		if sc.institutions, err = s.institutionPhrases(ctx, c.UserID); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// emit puts one change on the page: then is whether the client holds the
// row, visible whether it should.
func emit(page *SyncPage, sc Scope, ch TxChange, then, visible bool) {
	switch {
	case visible:
		rows := []Transaction{ch.Tx}
		sc.redactTransactions(rows)
		if then {
			page.Modified = append(page.Modified, rows[0])
		} else {
			page.Added = append(page.Added, rows[0])
		}
	case then:
		page.Removed = append(page.Removed, ch.Tx.ID)
	}
}

// symmetricDiff is what is in exactly one of two sorted lists.
func symmetricDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}
