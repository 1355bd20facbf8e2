package finance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
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
	Location              *Location
	Removed               bool
	PaymentChannel        string
	CheckNumber           string
}

var (
	plainDecimal  = regexp.MustCompile(`^-?[0-9]{1,15}(\.[0-9]{1,6})?$`)
	maxProviderID = 256
)

// PlainDecimal reports whether s is an exact decimal as providers and
// statement files write amounts: an optional minus, 1 to 15 integer digits
// and at most 6 decimals.
func PlainDecimal(s string) bool { return plainDecimal.MatchString(s) }

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
	if !IsUUID(connectionID) {
		return res, Invalid("connection_id", "connection_id must be a UUID")
	}
	conn, err := s.store.GetConnection(ctx, connectionID)
	if errors.Is(err, ErrNotFound) {
		return res, problem.New(problem.NotFound, "connection not found")
	}
	if err != nil {
		return res, Internal("get connection", err)
	}
	if conn.Provider == ProviderManual {
		return res, Invalid("connection_id", "a manual connection has no provider to sync from")
	}
	accounts, err := s.store.ListAccounts(ctx, conn.UserID)
	if err != nil {
		return res, Internal("list accounts", err)
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
				s.log.ErrorContext(ctx, "record sync error", "err", rerr)
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
			return res, Internal("transactions by external ref", err)
		}
		w, res := s.mergeSync(conn, rows, existing)
		err = s.store.ApplySync(ctx, w)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, ErrVersionConflict) && !errors.Is(err, ErrAlreadyExists) || attempt == syncAttempts {
			return SyncResult{}, Internal("apply sync", err)
		}
		// A user edit (or a concurrent sync) got in between: merge again.
	}
}

// RecordSyncError records a failed sync on the connection: status
// login_required for that code, error otherwise. The last successful sync
// time stays as it was.
func (s *Service) RecordSyncError(ctx context.Context, connectionID, code, message string) error {
	status := ConnectionError
	if code == ConnectionLoginRequired {
		status = ConnectionLoginRequired
	}
	err := s.store.RecordConnectionSync(ctx, ConnectionSyncState{ID: connectionID, Status: status,
		ErrorCode: code, ErrorMessage: message, UpdatedAt: s.now()})
	if errors.Is(err, ErrNotFound) {
		return problem.New(problem.NotFound, "connection not found")
	}
	if err != nil {
		return Internal("record sync error", err)
	}
	return nil
}

// providerRow is a validated ProviderTransaction.
type providerRow struct {
	ProviderTransaction
	amount Money
	date   time.Time
}

func parseProviderRows(txs []ProviderTransaction, accountIDs []string) ([]providerRow, error) {
	if len(txs) > MaxSyncBatch {
		return nil, Invalid("transactions", fmt.Sprintf("at most %d transactions per call", MaxSyncBatch))
	}
	seen := map[string]bool{}
	out := make([]providerRow, 0, len(txs))
	for i, p := range txs {
		field := func(f string) string { return fmt.Sprintf("transactions[%d].%s", i, f) }
		if p.ProviderTransactionID == "" || len(p.ProviderTransactionID) > maxProviderID {
			return nil, Invalid(field("provider_transaction_id"), "provider_transaction_id must be 1 to 256 characters")
		}
		if seen[p.AccountID+"|"+p.ProviderTransactionID] {
			return nil, Invalid(field("provider_transaction_id"), "provider_transaction_id repeats within the call")
		}
		seen[p.AccountID+"|"+p.ProviderTransactionID] = true
		if !slices.Contains(accountIDs, p.AccountID) {
			return nil, Invalid(field("account_id"), "account_id names no account of this connection")
		}
		r := providerRow{ProviderTransaction: p}
		if !p.Removed {
			if !plainDecimal.MatchString(p.Amount) {
				return nil, Invalid(field("amount"), "amount must be a decimal string")
			}
			if !currencyCode.MatchString(p.Currency) {
				return nil, Invalid(field("amount"), "amount.currency must be an ISO 4217 code")
			}
			d, err := ParseDate(p.Date)
			if err != nil {
				return nil, Invalid(field("transaction_date"), "transaction_date must be a date (YYYY-MM-DD)")
			}
			r.amount, r.date = Money{Amount: decimal.RequireFromString(p.Amount), Currency: p.Currency}, d
			if p.Location != nil && p.Location.IsZero() {
				r.Location = nil
			}
			if p.PostedAt != nil {
				// Stores keep microseconds; finer input would look like a
				// change on every sync.
				r.PostedAt = ptrTo(p.PostedAt.UTC().Truncate(time.Microsecond))
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// mergeSync works out the write for rows against what is stored.
func (s *Service) mergeSync(conn Connection, rows []providerRow, existing []Transaction) (SyncWrite, SyncResult) {
	now := s.now()
	byRef := map[string]Transaction{}
	for _, t := range existing {
		byRef[t.AccountID+"|"+t.ExternalRef] = t
	}
	w := SyncWrite{UserID: conn.UserID}
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
			t := Transaction{ID: uuid.NewString(), UserID: conn.UserID, AccountID: r.AccountID,
				Source: SourceBankSync, ExternalRef: r.ProviderTransactionID, DisplayName: r.MerchantName,
				Version: 1, CreatedAt: now, UpdatedAt: now}
			applyProvider(&t, r)
			w.Inserts = append(w.Inserts, t)
			res.Inserted++
		}
	}
	w.Connection = ConnectionSyncState{ID: conn.ID, Status: ConnectionActive, LastSyncedAt: &now, UpdatedAt: now}
	if res != (SyncResult{}) {
		// The rows changed, so the recurring streams may have. Detection
		// reads the user's whole history (seconds at a million rows), so the
		// sync only marks the user, with its rows, and the recurring job
		// (recurring_job.go) detects.
		w.RecurringDueAt = now
	}
	return w, res
}

// applyProvider merges r into t and reports whether anything changed.
func applyProvider(t *Transaction, r providerRow) bool {
	before := cloneTransaction(*t)
	if t.Owns(OwnAmount) {
		t.ProviderAmount = &Money{Amount: r.amount.Amount, Currency: r.amount.Currency}
	} else {
		t.Amount = r.amount
	}
	syncString(t, OwnMerchant, &t.Merchant, &t.ProviderMerchantName, r.MerchantName)
	syncString(t, OwnDescription, &t.Description, &t.ProviderDescription, r.Description)
	syncString(t, OwnMemo, &t.Memo, &t.ProviderMemo, r.Memo)
	if t.Owns(OwnDate) {
		t.ProviderTransactionDate = ptrTo(r.date)
	} else {
		t.Date = r.date
	}
	if !t.Owns(OwnLocation) {
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

func syncString(t *Transaction, f string, value *string, twin **string, bank string) {
	if t.Owns(f) {
		*twin = ptrTo(bank)
	} else {
		*value = bank
	}
}

func cloneTransaction(t Transaction) Transaction {
	clonePtr := func(p *string) *string {
		if p == nil {
			return nil
		}
		return ptrTo(*p)
	}
	t.ProviderMerchantName, t.ProviderDescription, t.ProviderMemo =
		clonePtr(t.ProviderMerchantName), clonePtr(t.ProviderDescription), clonePtr(t.ProviderMemo)
	if t.ProviderAmount != nil {
		t.ProviderAmount = ptrTo(*t.ProviderAmount)
	}
	if t.ProviderTransactionDate != nil {
		t.ProviderTransactionDate = ptrTo(*t.ProviderTransactionDate)
	}
	if t.Location != nil {
		t.Location = ptrTo(*t.Location)
	}
	if t.PostedAt != nil {
		t.PostedAt = ptrTo(*t.PostedAt)
	}
	return t
}

// sameContent compares what a sync can change. Amounts compare by value
// and scale, so "12.5" becoming "12.50" is a change the client can see.
func sameContent(a, b Transaction) bool {
	eqStr := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqMoney := func(x, y *Money) bool {
		return (x == nil) == (y == nil) && (x == nil || sameMoney(*x, *y))
	}
	eqTime := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return sameMoney(a.Amount, b.Amount) && a.Merchant == b.Merchant && a.Description == b.Description &&
		a.Memo == b.Memo && a.Date.Equal(b.Date) && equalLocation(a.Location, b.Location) &&
		a.IsPending == b.IsPending && eqTime(a.PostedAt, b.PostedAt) && a.PaymentChannel == b.PaymentChannel &&
		a.CheckNumber == b.CheckNumber && eqMoney(a.ProviderAmount, b.ProviderAmount) &&
		eqStr(a.ProviderMerchantName, b.ProviderMerchantName) && eqStr(a.ProviderDescription, b.ProviderDescription) &&
		eqStr(a.ProviderMemo, b.ProviderMemo) && eqTime(a.ProviderTransactionDate, b.ProviderTransactionDate)
}

func sameMoney(a, b Money) bool {
	return a.Currency == b.Currency && a.Amount.Equal(b.Amount) && a.Amount.Exponent() == b.Amount.Exponent()
}
