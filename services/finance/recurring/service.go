// Package recurring owns the recurring streams: their detection from a
// user's rows (DetectStreams, a plain function) stored as recurring rules,
// the detection job that runs after bank syncs mark a user due (DetectDue,
// RunDetection), the rules as reads see them (Rules, which detects on the
// first read of a user never detected), the upcoming bills and the
// cash-flow forecast built from them.
//
// It may import the kernel (finance) and nothing else of finance. budgets
// imports it (a budget period's upcoming recurring outflows come from
// Rules); nothing else of the domain does: a bank sync marks a user due
// in its own atomic write (banksync.Write.RecurringDueAt), not through
// this package.
package recurring

import (
	"context"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/finance"
)

// Config assembles a Service from the kernel, which gives it the caller's
// scope, the user's main currency, the clock and the logger, and the
// subdomain's Store.
type Config = finance.Subdomain[Store]

// Service detects recurring streams and answers the bills and forecast
// routes with the caller's grant applied.
type Service struct {
	k     *finance.Service
	store Store
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service { return &Service{k: cfg.Kernel, store: cfg.Store} }

// Detect runs stream detection (DetectStreams) over all of the
// user's rows and stores the result as the user's recurring rules:
//
//   - a stream that matches an existing rule (same account, normalized
//     counterparty, direction and currency) keeps that rule's id, display
//     name, logo and creation time, so transactions and clients keep
//     pointing at it; a new stream's id derives from the user and the
//     stream's key, so replicas detecting at once write the same rule;
//   - frequency, expected amount (the latest occurrence's), dates,
//     category, status and occurrences come from the detection; a stale
//     stream is kept inactive;
//   - a rule no stream matches any more (including rules written before
//     detection, such as the demo's seeded ones) is kept, inactive, with
//     status stale, so old references stay valid;
//   - Transaction.recurring_rule_id becomes exactly the detection's
//     membership.
//
// It runs off the sync path: a bank sync that changed rows marks the user
// due (UpsertProviderTransactions), and the recurring job (DetectDue) or
// the first read of a user never detected (Rules) runs it. It
// returns the user's rules as stored.
func (s *Service) Detect(ctx context.Context, userID string) ([]Rule, error) {
	rows, err := s.store.ListBudgetRows(ctx, userID, finance.TransactionFilter{})
	if err != nil {
		return nil, finance.Internal("list rows", err)
	}
	existing, err := s.store.ListRecurringRules(ctx, userID)
	if err != nil {
		return nil, finance.Internal("list recurring rules", err)
	}
	accounts, err := s.store.ListAccounts(ctx, userID)
	if err != nil {
		return nil, finance.Internal("list accounts", err)
	}
	rows = streamRows(rows, accounts)
	now := s.k.Now()
	streams := DetectStreams(rows, now)
	byKey := map[string]Rule{}
	for _, r := range existing {
		k := StreamKey(r.AccountID, r.Merchant, r.StreamType, r.ExpectedAmount.Currency)
		if old, ok := byKey[k]; !ok || r.CreatedAt.Before(old.CreatedAt) {
			byKey[k] = r
		}
	}
	ns, err := uuid.Parse(userID)
	if err != nil {
		return nil, finance.Internal("user id", err)
	}
	members := map[string][]string{}
	matched := map[string]bool{}
	var out []Rule
	fresh := map[string]string{} // new streams: id → account
	for _, st := range streams {
		r, ok := byKey[st.Key]
		if !ok {
			r = Rule{ID: uuid.NewSHA1(ns, []byte("recurring/"+st.Key)).String(), UserID: userID,
				DisplayName: st.Merchant, CreatedAt: now}
			fresh[r.ID] = st.AccountID
		}
		matched[r.ID] = true
		last := st.LastDate
		r.AccountID, r.CategoryID, r.Merchant = st.AccountID, st.CategoryID, st.Merchant
		r.ExpectedAmount, r.Frequency, r.StreamType = st.ExpectedAmount, st.Frequency, st.StreamType
		r.NextExpectedDate, r.LastSeenDate = st.NextExpectedDate, &last
		r.Status, r.Occurrences, r.IsActive = st.Status, len(st.TransactionIDs), st.Status != StreamStale
		r.UpdatedAt = now
		members[r.ID] = st.TransactionIDs
		out = append(out, r)
	}
	for _, r := range existing {
		if matched[r.ID] || (!r.IsActive && r.Status == StreamStale) {
			continue
		}
		r.IsActive, r.Status, r.UpdatedAt = false, StreamStale, now
		out = append(out, r)
	}
	var notes []finance.Note
	if len(fresh) > 0 {
		if n, ok := s.k.Note(finance.NoteRecurring, userID); ok {
			n.Streams = fresh
			notes = append(notes, n)
		}
	}
	if err := s.store.SaveRecurringStreams(ctx, userID, out, members, notes...); err != nil {
		return nil, finance.Internal("save recurring streams", err)
	}
	if len(notes) > 0 {
		s.k.Notify().Written(ctx, userID)
	}
	return s.store.ListRecurringRules(ctx, userID)
}

// streamRows prepares a user's rows for detection: rows on loan accounts
// are left out (their interest charges and incoming payments are the
// lender's side; the payment is detected on the account it leaves), and
// the outgoing leg of a transfer to one of the user's card or loan
// accounts counts as a payment (a bill), not as an own-account transfer.
func streamRows(rows []finance.BudgetRow, accounts []finance.Account) []finance.BudgetRow {
	kind := map[string]string{}
	for _, a := range accounts {
		kind[a.ID] = a.Type
	}
	toDebt := map[string]bool{}
	for _, r := range rows {
		if t := kind[r.AccountID]; r.TransferPairID != "" && r.Amount.Amount.IsPositive() && (t == finance.AccountCredit || t == finance.AccountLoan) {
			toDebt[r.TransferPairID] = true
		}
	}
	out := make([]finance.BudgetRow, 0, len(rows))
	for _, r := range rows {
		if kind[r.AccountID] == finance.AccountLoan {
			continue
		}
		// transfer_pair_id names the other leg.
		if r.TransferPairID != "" && r.Amount.Amount.IsNegative() && (toDebt[r.ID] || toDebt[r.TransferPairID]) {
			r.TransferPairID = ""
		}
		out = append(out, r)
	}
	return out
}
