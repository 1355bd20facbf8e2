// Package banksync owns bank sync: the provider rows an aggregator sends
// (UpsertProviderTransactions, over the internal SyncService), merged with
// the stored rows field by field (a field the user edited keeps the user's
// value, its provider_* twin takes the bank's), and failed syncs recorded on
// the connection (RecordSyncError). One sync is one atomic store write
// (Write), which also marks the user due for recurring detection when rows
// changed (Write.RecurringDueAt): the recurring job detects later, so this
// package does not import recurring.
//
// It may import the kernel (finance) and nothing else of finance. Named
// banksync, not sync, so that the wiring and the tests, which use the
// standard library's sync, need no import alias.
package banksync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// MaxSyncBatch caps the rows of one sync call; providers page their
// updates, and so must a caller.
const MaxSyncBatch = 1000

// syncAttempts bounds retries when a user edit races a sync: the sync
// rereads the rows and merges again.
const syncAttempts = 3

// SyncErrorInvalidData is the error code recorded on a connection whose
// provider sent data the service refused.
const SyncErrorInvalidData = "invalid_provider_data"

// ProviderTransaction is one row as the bank reports it, with amounts and
// dates as the provider sent them; UpsertProviderTransactions validates.
type ProviderTransaction struct {
	ProviderTransactionID string
	AccountID             string
	Amount                string // decimal string
	Currency              string
	MerchantName          string
	Date                  string // YYYY-MM-DD
	Description           string
	Memo                  string
	IsPending             bool
	PostedAt              *time.Time
	Location              *finance.Location
	Removed               bool
	PaymentChannel        string
	CheckNumber           string
}

// maxProviderID bounds a provider's transaction id.
const maxProviderID = 256

// Config assembles a Service from the kernel, which gives it the clock and
// the logger, and the subdomain's Store.
type Config = finance.Subdomain[Store]

// Service applies provider rows and records failed syncs. No grant
// applies: it is internal, reached only over the SyncService, which has no
// HTTP route.
type Service struct {
	k     *finance.Service
	store Store
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service { return &Service{k: cfg.Kernel, store: cfg.Store} }

// SyncResult counts what a sync changed. Rows that came back unchanged
// count nowhere.
type SyncResult struct {
	Inserted, Updated, Removed int
}

// UpsertProviderTransactions applies one connection's provider rows: new
// ones are inserted (uncategorized, version 1), known ones (same account
// and provider id, surfaced as external_ref) are merged, removed ones are
// deleted. Merging writes the bank's value into every field the provider
// owns; a field the user edited keeps the user's value while its provider_*
// twin takes the bank's. A row whose content changed gets a new version.
// Everything is applied atomically with the connection's new sync state;
// data the service refuses is recorded on the connection as an error.
//
// This is internal: no grant applies, and it is reached only over the
// SyncService, which has no HTTP route.
func (s *Service) UpsertProviderTransactions(ctx context.Context, connectionID string, txs []ProviderTransaction) (SyncResult, error) {
	var res SyncResult
	if !finance.IsUUID(connectionID) {
		return res, finance.Invalid("connection_id", "connection_id must be a UUID")
	}
	conn, err := s.store.GetConnection(ctx, connectionID)
	if errors.Is(err, finance.ErrNotFound) {
		return res, problem.New(problem.NotFound, "connection not found")
	}
	if err != nil {
		return res, finance.Internal("get connection", err)
	}
	if conn.Provider == finance.ProviderManual {
		return res, finance.Invalid("connection_id", "a manual connection has no provider to sync from")
	}
	accounts, err := s.store.ListAccounts(ctx, conn.UserID)
	if err != nil {
		return res, finance.Internal("list accounts", err)
	}
	var accountIDs []string
	for _, a := range accounts {
		if a.ConnectionID == conn.ID {
			accountIDs = append(accountIDs, a.ID)
		}
	}
	rows, err := parseProviderRows(txs, accountIDs)
	if err != nil {
		var p *problem.Problem
		if errors.As(err, &p) {
			if rerr := s.RecordSyncError(ctx, conn.ID, SyncErrorInvalidData, p.Detail); rerr != nil {
				s.k.Log().ErrorContext(ctx, "record sync error", "err", rerr)
			}
		}
		return res, err
	}
	refs := make([]string, len(rows))
	for i, r := range rows {
		refs[i] = r.ProviderTransactionID
	}
	for attempt := 1; ; attempt++ {
		existing, err := s.store.TransactionsByExternalRef(ctx, conn.UserID, accountIDs, refs)
		if err != nil {
			return res, finance.Internal("transactions by external ref", err)
		}
		w, res := s.mergeSync(conn, rows, existing)
		// The announcements commit with the sync (the outbox).
		if n, ok := s.k.Note(finance.NoteTransactions, conn.UserID); ok && res != (SyncResult{}) {
			n.AccountIDs = accountIDs
			w.Connection.Notes = append(w.Connection.Notes, n)
		}
		if n, ok := s.k.Note(finance.NoteConnection, conn.UserID); ok && conn.Status != finance.ConnectionActive {
			n.ConnectionID, n.OldStatus, n.NewStatus = conn.ID, conn.Status, finance.ConnectionActive
			w.Connection.Notes = append(w.Connection.Notes, n)
		}
		err = s.store.ApplySync(ctx, w)
		if err == nil {
			if len(w.Connection.Notes) > 0 {
				s.k.Notify().Written(ctx, conn.UserID)
			}
			return res, nil
		}
		if !errors.Is(err, finance.ErrVersionConflict) && !errors.Is(err, finance.ErrAlreadyExists) || attempt == syncAttempts {
			return SyncResult{}, finance.Internal("apply sync", err)
		}
		// A user edit (or a concurrent sync) got in between: merge again.
	}
}

// RecordSyncError records a failed sync on the connection: status
// login_required for that code, error otherwise. The last successful sync
// time stays as it was.
func (s *Service) RecordSyncError(ctx context.Context, connectionID, code, message string) error {
	status := finance.ConnectionError
	if code == finance.ConnectionLoginRequired {
		status = finance.ConnectionLoginRequired
	}
	// The status before, for connection.status_changed. Two replicas
	// recording the same failure at once may both announce it; the
	// receiver sees the same old and new status twice.
	conn, err := s.store.GetConnection(ctx, connectionID)
	var notes []finance.Note
	if n, ok := s.k.Note(finance.NoteConnection, conn.UserID); ok && err == nil && conn.Status != status {
		n.ConnectionID, n.OldStatus, n.NewStatus, n.ErrorCode = conn.ID, conn.Status, status, code
		notes = append(notes, n) // committed with the status (the outbox)
	}
	if err == nil {
		err = s.store.RecordConnectionSync(ctx, ConnectionState{ID: connectionID, Status: status,
			ErrorCode: code, ErrorMessage: message, UpdatedAt: s.k.Now(), Notes: notes})
	}
	if errors.Is(err, finance.ErrNotFound) {
		return problem.New(problem.NotFound, "connection not found")
	}
	if err != nil {
		return finance.Internal("record sync error", err)
	}
	if len(notes) > 0 {
		s.k.Notify().Written(ctx, conn.UserID)
	}
	return nil
}

// providerRow is a validated ProviderTransaction.
type providerRow struct {
	ProviderTransaction
	amount finance.Money
	date   time.Time
}

func parseProviderRows(txs []ProviderTransaction, accountIDs []string) ([]providerRow, error) {
	if len(txs) > MaxSyncBatch {
		return nil, finance.Invalid("transactions", fmt.Sprintf("at most %d transactions per call", MaxSyncBatch))
	}
	seen := map[string]bool{}
	out := make([]providerRow, 0, len(txs))
	for i, p := range txs {
		field := func(f string) string { return fmt.Sprintf("transactions[%d].%s", i, f) }
		if p.ProviderTransactionID == "" || len(p.ProviderTransactionID) > maxProviderID {
			return nil, finance.Invalid(field("provider_transaction_id"), "provider_transaction_id must be 1 to 256 characters")
		}
		if seen[p.AccountID+"|"+p.ProviderTransactionID] {
			return nil, finance.Invalid(field("provider_transaction_id"), "provider_transaction_id repeats within the call")
		}
		seen[p.AccountID+"|"+p.ProviderTransactionID] = true
		if !slices.Contains(accountIDs, p.AccountID) {
			return nil, finance.Invalid(field("account_id"), "account_id names no account of this connection")
		}
		r := providerRow{ProviderTransaction: p}
		if !p.Removed {
			if !finance.PlainDecimal(p.Amount) {
				return nil, finance.Invalid(field("amount"), "amount must be a decimal string")
			}
			if !finance.ValidCurrency(p.Currency) {
				return nil, finance.Invalid(field("amount"), "amount.currency must be an ISO 4217 code")
			}
			d, err := finance.ParseDate(p.Date)
			if err != nil {
				return nil, finance.Invalid(field("transaction_date"), "transaction_date must be a date (YYYY-MM-DD)")
			}
			r.amount, r.date = finance.Money{Amount: decimal.RequireFromString(p.Amount), Currency: p.Currency}, d
			if p.Location != nil && p.Location.IsZero() {
				r.Location = nil
			}
			if p.PostedAt != nil {
				// Stores keep microseconds; finer input would look like a
				// change on every sync.
				r.PostedAt = ptr(p.PostedAt.UTC().Truncate(time.Microsecond))
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// mergeSync works out the write for rows against what is stored.
func (s *Service) mergeSync(conn finance.Connection, rows []providerRow, existing []finance.Transaction) (Write, SyncResult) {
	now := s.k.Now()
	byRef := map[string]finance.Transaction{}
	for _, t := range existing {
		byRef[t.AccountID+"|"+t.ExternalRef] = t
	}
	w := Write{UserID: conn.UserID}
	var res SyncResult
	for _, r := range rows {
		t, ok := byRef[r.AccountID+"|"+r.ProviderTransactionID]
		switch {
		case r.Removed && ok:
			w.Deletes = append(w.Deletes, t.ID)
			res.Removed++
		case r.Removed:
			// Withdrawn before we ever saw it: nothing to do.
		case ok:
			if applyProvider(&t, r) {
				t.Version++
				t.UpdatedAt = now
				w.Updates = append(w.Updates, t)
				res.Updated++
			}
		default:
			t := finance.Transaction{ID: uuid.NewString(), UserID: conn.UserID, AccountID: r.AccountID,
				Source: finance.SourceBankSync, ExternalRef: r.ProviderTransactionID, DisplayName: r.MerchantName,
				Version: 1, CreatedAt: now, UpdatedAt: now}
			applyProvider(&t, r)
			w.Inserts = append(w.Inserts, t)
			res.Inserted++
		}
	}
	w.Connection = ConnectionState{ID: conn.ID, Status: finance.ConnectionActive, LastSyncedAt: &now, UpdatedAt: now}
	if res != (SyncResult{}) {
		// The rows changed, so the recurring streams may have. Detection
		// reads the user's whole history (seconds at a million rows), so the
		// sync only marks the user, with its rows, and the recurring
		// package's job detects.
		w.RecurringDueAt = now
	}
	return w, res
}

// applyProvider merges r into t and reports whether anything changed.
func applyProvider(t *finance.Transaction, r providerRow) bool {
	before := cloneTransaction(*t)
	if t.Owns(finance.OwnAmount) {
		t.ProviderAmount = &finance.Money{Amount: r.amount.Amount, Currency: r.amount.Currency}
	} else {
		t.Amount = r.amount
	}
	syncString(t, finance.OwnMerchant, &t.Merchant, &t.ProviderMerchantName, r.MerchantName)
	syncString(t, finance.OwnDescription, &t.Description, &t.ProviderDescription, r.Description)
	syncString(t, finance.OwnMemo, &t.Memo, &t.ProviderMemo, r.Memo)
	if t.Owns(finance.OwnDate) {
		t.ProviderTransactionDate = ptr(r.date)
	} else {
		t.Date = r.date
	}
	if !t.Owns(finance.OwnLocation) {
		t.Location = r.Location
	}
	t.IsPending = r.IsPending
	t.PostedAt = r.PostedAt
	if r.IsPending {
		t.PostedAt = nil // a pending row has not posted, whatever was sent
	}
	t.PaymentChannel, t.CheckNumber = r.PaymentChannel, r.CheckNumber
	return !sameContent(before, *t)
}

func syncString(t *finance.Transaction, f string, value *string, twin **string, bank string) {
	if t.Owns(f) {
		*twin = ptr(bank)
	} else {
		*value = bank
	}
}

func cloneTransaction(t finance.Transaction) finance.Transaction {
	clonePtr := func(p *string) *string {
		if p == nil {
			return nil
		}
		return ptr(*p)
	}
	t.ProviderMerchantName, t.ProviderDescription, t.ProviderMemo =
		clonePtr(t.ProviderMerchantName), clonePtr(t.ProviderDescription), clonePtr(t.ProviderMemo)
	if t.ProviderAmount != nil {
		t.ProviderAmount = ptr(*t.ProviderAmount)
	}
	if t.ProviderTransactionDate != nil {
		t.ProviderTransactionDate = ptr(*t.ProviderTransactionDate)
	}
	if t.Location != nil {
		t.Location = ptr(*t.Location)
	}
	if t.PostedAt != nil {
		t.PostedAt = ptr(*t.PostedAt)
	}
	return t
}

// sameContent compares what a sync can change. Amounts compare by value
// and scale, so "12.5" becoming "12.50" is a change the client can see.
func sameContent(a, b finance.Transaction) bool {
	eqStr := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqMoney := func(x, y *finance.Money) bool {
		return (x == nil) == (y == nil) && (x == nil || sameMoney(*x, *y))
	}
	eqTime := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return sameMoney(a.Amount, b.Amount) && a.Merchant == b.Merchant && a.Description == b.Description &&
		a.Memo == b.Memo && a.Date.Equal(b.Date) && finance.EqualLocation(a.Location, b.Location) &&
		a.IsPending == b.IsPending && eqTime(a.PostedAt, b.PostedAt) && a.PaymentChannel == b.PaymentChannel &&
		a.CheckNumber == b.CheckNumber && eqMoney(a.ProviderAmount, b.ProviderAmount) &&
		eqStr(a.ProviderMerchantName, b.ProviderMerchantName) && eqStr(a.ProviderDescription, b.ProviderDescription) &&
		eqStr(a.ProviderMemo, b.ProviderMemo) && eqTime(a.ProviderTransactionDate, b.ProviderTransactionDate)
}

func sameMoney(a, b finance.Money) bool {
	return a.Currency == b.Currency && a.Amount.Equal(b.Amount) && a.Amount.Exponent() == b.Amount.Exponent()
}

func ptr[T any](v T) *T { return &v }
