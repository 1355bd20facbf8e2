package finance

import (
	"context"

	"github.com/google/uuid"
)

// RecurringStore is the part of Store that keeps detected streams
// (embedded in Store).
type RecurringStore interface {
	// SaveRecurringStreams stores one user's detection in one atomic step:
	// every rule in rules is written whole (inserted, or replacing the
	// user's rule with its id); the rows listed in members (rule id →
	// transaction ids) point at their rule, and every other row of the
	// user that points at a rule no longer does. Row versions do not
	// change: recurring_rule_id is derived, never edited.
	SaveRecurringStreams(ctx context.Context, userID string, rules []RecurringRule, members map[string][]string) error
}

// DetectRecurring runs stream detection (DetectStreams) over all of the
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
// the first read of a user never detected (RecurringRules) runs it. It
// returns the user's rules as stored.
func (s *Service) DetectRecurring(ctx context.Context, userID string) ([]RecurringRule, error) {
	rows, err := s.store.ListBudgetRows(ctx, userID, TransactionFilter{})
	if err != nil {
		return nil, Internal("list rows", err)
	}
	existing, err := s.store.ListRecurringRules(ctx, userID)
	if err != nil {
		return nil, Internal("list recurring rules", err)
	}
	accounts, err := s.store.ListAccounts(ctx, userID)
	if err != nil {
		return nil, Internal("list accounts", err)
	}
	rows = streamRows(rows, accounts)
	now := s.now()
	streams := DetectStreams(rows, now)
	byKey := map[string]RecurringRule{}
	for _, r := range existing {
		k := StreamKey(r.AccountID, r.Merchant, r.StreamType, r.ExpectedAmount.Currency)
		if old, ok := byKey[k]; !ok || r.CreatedAt.Before(old.CreatedAt) {
			byKey[k] = r
		}
	}
	ns, err := uuid.Parse(userID)
	if err != nil {
		return nil, Internal("user id", err)
	}
	members := map[string][]string{}
	matched := map[string]bool{}
	var out []RecurringRule
	for _, st := range streams {
		r, ok := byKey[st.Key]
		if !ok {
			r = RecurringRule{ID: uuid.NewSHA1(ns, []byte("recurring/"+st.Key)).String(), UserID: userID,
				DisplayName: st.Merchant, CreatedAt: now}
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
	if err := s.store.SaveRecurringStreams(ctx, userID, out, members); err != nil {
		return nil, Internal("save recurring streams", err)
	}
	return s.store.ListRecurringRules(ctx, userID)
}

// streamRows prepares a user's rows for detection: rows on loan accounts
// are left out (their interest charges and incoming payments are the
// lender's side; the payment is detected on the account it leaves), and
// the outgoing leg of a transfer to one of the user's card or loan
// accounts counts as a payment (a bill), not as an own-account transfer.
func streamRows(rows []BudgetRow, accounts []Account) []BudgetRow {
	kind := map[string]string{}
	for _, a := range accounts {
		kind[a.ID] = a.Type
	}
	toDebt := map[string]bool{}
	for _, r := range rows {
		if t := kind[r.AccountID]; r.TransferPairID != "" && r.Amount.Amount.IsPositive() && (t == AccountCredit || t == AccountLoan) {
			toDebt[r.TransferPairID] = true
		}
	}
	out := make([]BudgetRow, 0, len(rows))
	for _, r := range rows {
		if kind[r.AccountID] == AccountLoan {
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
