package finance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/problem"
)

// Length limits of edited text. The spec sets none; these keep one row's
// text bounded and are documented in the README.
const (
	MaxMerchantLength    = 200
	MaxDescriptionLength = 1000
	MaxMemoLength        = 1000
	MaxTagLength         = 64
	MaxTags              = 50
	MaxLocationPart      = 200
)

// TransactionUpdate is PATCH /v1/transactions/{id}. Nil pointers are fields
// the client did not send.
type TransactionUpdate struct {
	ID              string
	ExpectedVersion int64
	Merchant        *string
	Description     *string // "" clears
	Date            *string // YYYY-MM-DD
	// Amount is a decimal string in the row's currency. "12.50 USD" names
	// the currency too: the row's own is accepted, any other is
	// field-immutable, since a row keeps the currency it settled in.
	Amount *string
	// AmountCurrency is set when the client sent amount as the Money object
	// responses carry ({"amount": "-12.50", "currency": "USD"}): Amount is
	// then the object's amount, a plain decimal, and this its currency,
	// checked like a suffix.
	AmountCurrency *string
	CategoryID     *string // "" uncategorizes
	// Tags replace the row's tags; an empty list clears them, nil leaves
	// them unchanged.
	Tags             *[]string
	Memo             *string // "" clears
	Location         *Location
	ClearLocation    bool
	RevertToProvider []string
}

// amountPattern is a plain decimal, optionally followed by a currency code.
// Exponents, thousands separators and signs other than a leading minus are
// refused: an amount is typed exactly as it is stored.
var amountPattern = regexp.MustCompile(`^(-?[0-9]{1,15}(?:\.[0-9]{1,6})?)(?: ([A-Z]{3}))?$`)

// MinTransactionDate is the earliest date a PATCH may give a row; the
// latest is a year after today (UTC). No bank keeps older records, and a
// date far ahead is a typo that would sit on top of every list, which is
// ordered by date.
var MinTransactionDate = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxTransactionDate is the latest date a PATCH may give a row: a year
// after the date of today.
func MaxTransactionDate(today time.Time) time.Time { return Day(today).AddDate(1, 0, 0) }

// UpdateTransaction answers PATCH /v1/transactions/{id}.
//
// Provider ownership: on a bank-synced row, the first edit of amount,
// merchant, date, description or memo copies the bank's value into the
// provider_* twin and marks the field as the user's; later syncs then only
// refresh the twin. revert_to_provider hands a field back: the value returns
// from the twin, the twin is cleared and the next sync writes the field
// again. Manual and imported rows have no bank value, so nothing is captured
// and a revert is 409 no-provider-value.
func (s *Service) UpdateTransaction(ctx context.Context, c Caller, u TransactionUpdate) (Result[Transaction], error) {
	var res Result[Transaction]
	sc, err := s.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	id, in, pw, err := readUpdate(c, sc, &u, s.now().UTC())
	if err != nil {
		return res, err
	}
	old, err := s.store.GetTransaction(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && (sc.HidesAccount(old.AccountID) || sc.HidesCategory(old.CategoryID))) {
		return res, problem.New(problem.NotFound, "transaction not found")
	}
	if err != nil {
		return res, Internal("get transaction", err)
	}
	if old.Version != u.ExpectedVersion {
		if pw.Replays(old.LastWrite, old.Version, u.ExpectedVersion) {
			// The retry of the write that made this version, whose
			// answer was lost: answer it again.
			res = s.txResult(sc, old)
			res.Replayed = true
			return res, nil
		}
		return res, versionConflict(old.Version)
	}
	if err := s.checkUpdateAllowed(ctx, c, sc, id, old, u, in); err != nil {
		return res, err
	}
	t, changed := applyUpdate(old, u, in)
	if !changed {
		// Nothing differs: no new version, and the caller sees the row as is.
		return s.txResult(sc, old), nil
	}
	return s.storeUpdate(ctx, c, sc, id, old, t, pw)
}

// readUpdate checks the request on its own, before the row is read: the
// id, the expected version, the values and the hidden location. It
// fingerprints the request as sent and then lower-cases u.CategoryID, the
// form ids are stored in.
func readUpdate(c Caller, sc Scope, u *TransactionUpdate, now time.Time) (string, parsedUpdate, *PendingWrite, error) {
	id, err := RequiredUUID(u.ID, "id")
	if err != nil {
		return "", parsedUpdate{}, nil, err
	}
	if u.ExpectedVersion <= 0 {
		return "", parsedUpdate{}, nil, Invalid("expected_version", "expected_version is required: send the version you read")
	}
	in, err := parseUpdate(*u, now)
	if err != nil {
		return "", parsedUpdate{}, nil, err
	}
	// The fingerprint is of the request as sent, before any
	// normalisation, with expected_version left out (replays checks it).
	fp := *u
	fp.ExpectedVersion = 0
	pw, err := NewPendingWrite(c, "transaction", fp)
	if err != nil {
		return "", parsedUpdate{}, nil, Internal("fingerprint transaction update", err)
	}
	if u.CategoryID != nil {
		// Compare ids in their stored, lower-case form.
		u.CategoryID = ptrTo(strings.ToLower(*u.CategoryID))
	}
	if (u.Location != nil || u.ClearLocation) && sc.grant.Redacts(FieldTransactionLocation) {
		return "", parsedUpdate{}, nil, problem.New(problem.FieldHidden, "this connection hides the transaction location").WithField("location")
	}
	return id, in, pw, nil
}

// checkUpdateAllowed checks the request against row id as stored (old): the
// amount keeps the row's currency and its minor unit, a split row is
// categorized through its slices, a new category must be one the caller
// sees, and a revert needs a captured bank value.
func (s *Service) checkUpdateAllowed(ctx context.Context, c Caller, sc Scope, id string, old Transaction, u TransactionUpdate, in parsedUpdate) error {
	if in.amount != nil {
		if in.currency != "" && in.currency != old.Amount.Currency {
			return problem.New(problem.FieldImmutable,
				fmt.Sprintf("the transaction settled in %s and keeps that currency", old.Amount.Currency)).WithField("amount")
		}
		if places := MinorUnit(old.Amount.Currency); -in.amount.Exponent() > places {
			return Invalid("amount", fmt.Sprintf("%s amounts have at most %d decimal places", old.Amount.Currency, places))
		}
	}
	if u.CategoryID != nil && *u.CategoryID != old.CategoryID {
		if err := s.checkRecategorize(ctx, c, sc, id, *u.CategoryID); err != nil {
			return err
		}
	}
	for _, f := range u.RevertToProvider {
		if !hasProviderValue(old, f) {
			return problem.New(problem.NoProviderValue,
				"no bank-recorded value was captured for "+f).WithField("revert_to_provider")
		}
	}
	return nil
}

// checkRecategorize checks that row id may move to category ("" is
// uncategorized): a split parent may not, and the category must be one the
// caller sees.
func (s *Service) checkRecategorize(ctx context.Context, c Caller, sc Scope, id, category string) error {
	split, err := s.store.IsSplitParent(ctx, c.UserID, id)
	if err != nil {
		return Internal("is split parent", err)
	}
	if split {
		return problem.New(problem.SplitTransaction,
			"the transaction is split: categorize its slices instead").WithField("category_id")
	}
	if category == "" {
		return nil
	}
	if ok, err := s.categoryVisible(ctx, c, sc, category); err != nil {
		return err
	} else if !ok {
		return Invalid("category_id", "category_id names no category")
	}
	return nil
}

// applyUpdate is old with u's values applied, and whether any differs.
// On a bank-synced row the first edit of a bank field captures the bank's
// value (takeFromBank).
func applyUpdate(old Transaction, u TransactionUpdate, in parsedUpdate) (Transaction, bool) {
	t := old
	t.Tags, t.OwnedByUser = slices.Clone(old.Tags), slices.Clone(old.OwnedByUser)
	changed := false
	if in.amount != nil && !in.amount.Equal(old.Amount.Amount) {
		takeFromBank(&t, old, OwnAmount)
		t.Amount.Amount, changed = *in.amount, true
	}
	if u.Merchant != nil && *u.Merchant != old.Merchant {
		takeFromBank(&t, old, OwnMerchant)
		t.Merchant, changed = *u.Merchant, true
	}
	if in.date != nil && !in.date.Equal(old.Date) {
		takeFromBank(&t, old, OwnDate)
		t.Date, changed = *in.date, true
	}
	if u.Description != nil && *u.Description != old.Description {
		takeFromBank(&t, old, OwnDescription)
		t.Description, changed = *u.Description, true
	}
	if u.Memo != nil && *u.Memo != old.Memo {
		takeFromBank(&t, old, OwnMemo)
		t.Memo, changed = *u.Memo, true
	}
	if in.location != nil || u.ClearLocation {
		var loc *Location
		if in.location != nil && !in.location.IsZero() {
			loc = in.location
		}
		if !EqualLocation(loc, old.Location) {
			takeFromBank(&t, old, OwnLocation)
			t.Location, changed = loc, true
		}
	}
	if u.CategoryID != nil && *u.CategoryID != old.CategoryID {
		t.CategoryID, changed = *u.CategoryID, true
	}
	if u.Tags != nil && !slices.Equal(in.tags, old.Tags) {
		t.Tags, changed = in.tags, true
	}
	for _, f := range u.RevertToProvider {
		revert(&t, f)
		changed = true
	}
	return t, changed
}

// takeFromBank marks field f of t as the user's, first capturing the
// bank's value from old; on a row not from bank sync, or a field the user
// already owns, it does nothing.
func takeFromBank(t *Transaction, old Transaction, f string) {
	if old.Source != SourceBankSync || t.Owns(f) {
		return
	}
	switch f {
	case OwnAmount:
		t.ProviderAmount = &Money{Amount: old.Amount.Amount, Currency: old.Amount.Currency}
	case OwnMerchant:
		t.ProviderMerchantName = ptrTo(old.Merchant)
	case OwnDate:
		t.ProviderTransactionDate = ptrTo(old.Date)
	case OwnDescription:
		t.ProviderDescription = ptrTo(old.Description)
	case OwnMemo:
		t.ProviderMemo = ptrTo(old.Memo)
	}
	t.OwnedByUser = append(t.OwnedByUser, f)
}

// storeUpdate writes t as the next version of row id (old), marked by
// pw, and answers the row as stored.
func (s *Service) storeUpdate(ctx context.Context, c Caller, sc Scope, id string, old, t Transaction, pw *PendingWrite) (Result[Transaction], error) {
	var res Result[Transaction]
	t.Version = old.Version + 1
	t.UpdatedAt = s.now()
	t.LastWrite = pw.Mark(t.Version)
	// The announcement commits with the row (the outbox).
	var notes []Note
	if n, ok := s.Note(NoteTransactions, c.UserID); ok {
		n.AccountIDs = []string{old.AccountID}
		notes = append(notes, n)
	}
	switch err := s.store.UpdateTransaction(ctx, t, old.Version, notes...); {
	case errors.Is(err, ErrVersionConflict):
		return res, versionConflict(0)
	case errors.Is(err, ErrNotFound):
		return res, problem.New(problem.NotFound, "transaction not found")
	case err != nil:
		return res, Internal("update transaction", err)
	}
	s.notifier.Written(ctx, c.UserID)
	got, err := s.store.GetTransaction(ctx, c.UserID, id)
	if err != nil {
		return res, Internal("reread transaction", err)
	}
	return s.txResult(sc, got), nil
}

func (s *Service) txResult(sc Scope, t Transaction) Result[Transaction] {
	rows := []Transaction{t}
	redacted := sc.redactTransactions(rows)
	return Result[Transaction]{Data: rows[0], RedactedFields: redacted, Filtered: sc.grant.Filtered()}
}

func versionConflict(current int64) error {
	detail := "the transaction changed since you read it: read it again and retry"
	if current > 0 {
		detail = fmt.Sprintf("the transaction is at version %d: read it again and retry", current)
	}
	return problem.New(problem.VersionConflict, detail).WithField("expected_version")
}

// parsedUpdate holds the update's values in domain form.
type parsedUpdate struct {
	amount   *decimal.Decimal
	currency string // set only when the amount named one
	date     *time.Time
	location *Location
	tags     []string // the new tags when u.Tags is set; nil clears them
}

// parseUpdate checks u's values; now is the service's clock, for the date
// bounds.
func parseUpdate(u TransactionUpdate, now time.Time) (parsedUpdate, error) {
	var p parsedUpdate
	if u.Amount == nil && u.AmountCurrency != nil {
		return p, Invalid("amount", "amount.amount is required")
	}
	if u.Amount != nil {
		m := amountPattern.FindStringSubmatch(*u.Amount)
		// The object names its currency in its own member, never as a suffix.
		if m == nil || (u.AmountCurrency != nil && m[2] != "") {
			return p, Invalid("amount", `amount must be a decimal string such as "-12.50", or {"amount": "-12.50", "currency": "USD"}; its currency cannot change`)
		}
		d := decimal.RequireFromString(m[1])
		p.amount, p.currency = &d, m[2]
		if u.AmountCurrency != nil {
			if !currencyCode.MatchString(*u.AmountCurrency) {
				return p, Invalid("amount", "amount.currency must be an ISO 4217 code such as USD")
			}
			p.currency = *u.AmountCurrency
		}
	}
	if u.Merchant != nil {
		if n := utf8.RuneCountInString(*u.Merchant); n == 0 || n > MaxMerchantLength || !Printable(*u.Merchant) {
			return p, Invalid("merchant", "merchant must be 1 to 200 printable characters")
		}
	}
	if u.Description != nil && (utf8.RuneCountInString(*u.Description) > MaxDescriptionLength || !Printable(*u.Description)) {
		return p, Invalid("description", "description must be at most 1000 printable characters")
	}
	if u.Memo != nil && (utf8.RuneCountInString(*u.Memo) > MaxMemoLength || !Printable(*u.Memo)) {
		return p, Invalid("memo", "memo must be at most 1000 printable characters")
	}
	if u.Date != nil {
		d, err := ParseDate(*u.Date)
		if err != nil {
			return p, Invalid("date", "date must be a date (YYYY-MM-DD)")
		}
		if latest := MaxTransactionDate(now); d.Before(MinTransactionDate) || d.After(latest) {
			return p, Invalid("date", fmt.Sprintf("date must lie between %s and %s (a year from today)",
				MinTransactionDate.Format(DateLayout), latest.Format(DateLayout)))
		}
		p.date = &d
	}
	if u.CategoryID != nil && *u.CategoryID != "" && !IsUUID(*u.CategoryID) {
		return p, Invalid("category_id", "category_id must be a UUID, or empty to uncategorize")
	}
	if u.Tags != nil {
		if len(*u.Tags) > MaxTags {
			return p, Invalid("tags", "at most 50 tags")
		}
		for _, tag := range *u.Tags {
			if n := utf8.RuneCountInString(tag); n == 0 || n > MaxTagLength || !Printable(tag) {
				return p, Invalid("tags", "each tag must be 1 to 64 printable characters")
			}
			if !slices.Contains(p.tags, tag) {
				p.tags = append(p.tags, tag)
			}
		}
	}
	if u.Location != nil {
		if u.ClearLocation {
			return p, Invalid("clear_location", "send location or clear_location, not both")
		}
		l := *u.Location
		for _, part := range []string{l.Street, l.City, l.State, l.PostalCode, l.Country} {
			if utf8.RuneCountInString(part) > MaxLocationPart || !Printable(part) {
				return p, Invalid("location", "each location component must be at most 200 printable characters")
			}
		}
		p.location = &l
	}
	for i, f := range u.RevertToProvider {
		if !slices.Contains(RevertableFields, f) {
			return p, Invalid("revert_to_provider", fmt.Sprintf("%q cannot be reverted; allowed: %s", f, strings.Join(RevertableFields, ", ")))
		}
		if slices.Contains(u.RevertToProvider[:i], f) || sets(u, f) {
			return p, Invalid("revert_to_provider", fmt.Sprintf("%s is both set and reverted, or reverted twice", f))
		}
	}
	return p, nil
}

// sets reports whether the update also writes field f.
func sets(u TransactionUpdate, f string) bool {
	switch f {
	case OwnAmount:
		return u.Amount != nil
	case OwnMerchant:
		return u.Merchant != nil
	case OwnDate:
		return u.Date != nil
	case OwnDescription:
		return u.Description != nil
	case OwnMemo:
		return u.Memo != nil
	}
	return false
}

func hasProviderValue(t Transaction, f string) bool {
	switch f {
	case OwnAmount:
		return t.ProviderAmount != nil
	case OwnMerchant:
		return t.ProviderMerchantName != nil
	case OwnDate:
		return t.ProviderTransactionDate != nil
	case OwnDescription:
		return t.ProviderDescription != nil
	case OwnMemo:
		return t.ProviderMemo != nil
	}
	return false
}

// revert restores field f from its provider twin, clears the twin and
// gives the field back to the provider.
func revert(t *Transaction, f string) {
	switch f {
	case OwnAmount:
		t.Amount, t.ProviderAmount = *t.ProviderAmount, nil
	case OwnMerchant:
		t.Merchant, t.ProviderMerchantName = *t.ProviderMerchantName, nil
	case OwnDate:
		t.Date, t.ProviderTransactionDate = *t.ProviderTransactionDate, nil
	case OwnDescription:
		t.Description, t.ProviderDescription = *t.ProviderDescription, nil
	case OwnMemo:
		t.Memo, t.ProviderMemo = *t.ProviderMemo, nil
	}
	t.OwnedByUser = slices.DeleteFunc(t.OwnedByUser, func(o string) bool { return o == f })
}

// categoryVisible reports whether id names a category the caller may use:
// a system one or the user's own, not hidden by the grant.
func (s *Service) categoryVisible(ctx context.Context, c Caller, sc Scope, id string) (bool, error) {
	id = strings.ToLower(id)
	if sc.HidesCategory(id) {
		return false, nil
	}
	_, err := s.store.GetCategory(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, Internal("get category", err)
	}
	return true, nil
}

// Printable refuses control characters, which have no place in a label
// (transactions, categories, goals).
func Printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func ptrTo[T any](v T) *T { return &v }

// MaxBulkItems caps one bulk-categorize request. The spec sets no number;
// 500 rows is a long screen of selections and bounds the request's work.
const MaxBulkItems = 500

// Bulk-categorize row statuses, the spec's values.
const (
	BulkApplied         = "applied"
	BulkNotFound        = "not_found"
	BulkInvalidCategory = "invalid_category"
	BulkVersionConflict = "version_conflict"
	BulkSplit           = "split"
)

// BulkItem assigns one category to one transaction.
type BulkItem struct {
	TransactionID   string
	CategoryID      string
	ExpectedVersion int64
}

// BulkRow is one item's outcome.
type BulkRow struct {
	TransactionID string
	Status        string
}

// BulkResult is the answer of a bulk categorize.
type BulkResult struct {
	AppliedCount int
	Results      []BulkRow
}

// BulkCategorize answers POST /v1/transactions/bulk-categorize. It is
// partial by design: each item is checked and written on its own
// (compare-and-swap on its expected_version), and reports its own status;
// a mixed outcome is still a success. Statuses are checked in the order
// not_found, invalid_category, version_conflict, split. A row or category
// the grant hides reports exactly what a missing one does. An item whose
// row already has the category is applied without a new version.
func (s *Service) BulkCategorize(ctx context.Context, c Caller, items []BulkItem) (Result[BulkResult], error) {
	var res Result[BulkResult]
	sc, err := s.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	switch {
	case len(items) == 0:
		return res, Invalid("items", "items is required: at least one {transaction_id, category_id, expected_version}")
	case len(items) > MaxBulkItems:
		return res, Invalid("items", "at most 500 items per request")
	}
	cats, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return res, Internal("list categories", err)
	}
	usable := map[string]bool{}
	for _, cat := range cats {
		usable[cat.ID] = !sc.HidesCategory(cat.ID)
	}
	out := BulkResult{Results: make([]BulkRow, 0, len(items))}
	// touched is the accounts of applied rows: the first row applied on
	// each stores the note announcing the account with it (the outbox), so
	// rows applied before a failure are announced too.
	var touched []string
	defer func() {
		if len(touched) > 0 {
			s.notifier.Written(ctx, c.UserID)
		}
	}()
	for _, it := range items {
		status, account, err := s.categorizeOne(ctx, c, sc, usable, it, touched)
		if err != nil {
			return res, err
		}
		if status == BulkApplied {
			out.AppliedCount++
			if account != "" && !slices.Contains(touched, account) {
				touched = append(touched, account)
			}
		}
		out.Results = append(out.Results, BulkRow{TransactionID: it.TransactionID, Status: status})
	}
	res.Data = out
	res.Filtered = sc.grant.Filtered()
	return res, nil
}

func (s *Service) categorizeOne(ctx context.Context, c Caller, sc Scope, usable map[string]bool, it BulkItem,
	touched []string) (status, accountID string, err error) {
	if !IsUUID(it.TransactionID) {
		return BulkNotFound, "", nil
	}
	t, err := s.store.GetTransaction(ctx, c.UserID, strings.ToLower(it.TransactionID))
	if errors.Is(err, ErrNotFound) || (err == nil && (sc.HidesAccount(t.AccountID) || sc.HidesCategory(t.CategoryID))) {
		return BulkNotFound, "", nil
	}
	if err != nil {
		return "", "", Internal("get transaction", err)
	}
	category := strings.ToLower(it.CategoryID)
	if !IsUUID(category) || !usable[category] {
		return BulkInvalidCategory, "", nil
	}
	if t.Version != it.ExpectedVersion {
		return BulkVersionConflict, "", nil
	}
	if t.CategoryID == category {
		return BulkApplied, "", nil
	}
	split, err := s.store.IsSplitParent(ctx, c.UserID, t.ID)
	if err != nil {
		return "", "", Internal("is split parent", err)
	}
	if split {
		return BulkSplit, "", nil
	}
	t.CategoryID = category
	t.Version++
	t.UpdatedAt = s.now()
	var notes []Note
	if n, ok := s.Note(NoteTransactions, c.UserID); ok && !slices.Contains(touched, t.AccountID) {
		n.AccountIDs = []string{t.AccountID}
		notes = append(notes, n)
	}
	switch err := s.store.UpdateTransaction(ctx, t, it.ExpectedVersion, notes...); {
	case errors.Is(err, ErrVersionConflict):
		return BulkVersionConflict, "", nil
	case errors.Is(err, ErrNotFound):
		return BulkNotFound, "", nil
	case err != nil:
		return "", "", Internal("update transaction", err)
	}
	return BulkApplied, t.AccountID, nil
}
