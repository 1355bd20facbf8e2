// Package postgres is the PostgreSQL finance.Store. Money is NUMERIC and
// crosses the driver as text, so no amount ever passes through a float.
package postgres

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/networth"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the goose SQL migrations at its root, for pg.Open.
var Migrations fs.FS = pg.MigrationsFS(migrationFiles, "migrations")

// Store is a finance.Store on a pool whose search_path is the finance schema.
type Store struct {
	pool *pgxpool.Pool
}

var (
	_ finance.Store  = (*Store)(nil)
	_ debt.Store     = (*Store)(nil)
	_ imports.Store  = (*Store)(nil)
	_ networth.Store = (*Store)(nil)
)

// New returns a Store on pool; the schema must be migrated (pg.Open does it).
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// CreateUser implements finance.Store.
func (s *Store) CreateUser(ctx context.Context, u finance.User) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO users (id, name, owner_account_id, created_at, mode) VALUES ($1, $2, $3, $4, $5)`,
		u.ID, nullStr(u.Name), nullStr(u.OwnerAccountID), u.CreatedAt, finance.ModeOf(u.Mode))
	return storeErr("create user", err)
}

// GetUser implements finance.Store.
func (s *Store) GetUser(ctx context.Context, id string) (finance.User, error) {
	if !isUUID(id) {
		return finance.User{}, fmt.Errorf("user %q: %w", id, finance.ErrNotFound)
	}
	var u finance.User
	err := s.pool.QueryRow(ctx, `
		SELECT id::text, COALESCE(name, ''), COALESCE(owner_account_id::text, ''), created_at, mode
		FROM users WHERE id = $1`, id).
		Scan(&u.ID, &u.Name, &u.OwnerAccountID, &u.CreatedAt, &u.Mode)
	if err != nil {
		return finance.User{}, storeErr("get user", err)
	}
	return u, nil
}

// CreateGrant implements finance.Store.
func (s *Store) CreateGrant(ctx context.Context, g finance.Grant) error {
	_, err := s.pool.Exec(ctx, insertGrant, grantArgs(g)...)
	return storeErr("create grant", err)
}

const insertGrant = `
	INSERT INTO grants (id, user_id, redacted_fields, excluded_account_ids, excluded_category_ids, writes_enabled, created_at,
		version, updated_at, last_write)
	VALUES ($1, $2, $3, $4, $5, $6, $7, GREATEST($8::bigint, 1), $9, $10)`

func grantArgs(g finance.Grant) []any {
	return []any{g.ID, g.UserID, list(g.RedactedFields), list(g.ExcludedAccountIDs), list(g.ExcludedCategoryIDs), g.WritesEnabled, g.CreatedAt,
		g.Version, nullTime(g.UpdatedAt), markArg(g.LastWrite)}
}

// nullTime is a zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// GetGrant implements finance.Store.
func (s *Store) GetGrant(ctx context.Context, id string) (finance.Grant, error) {
	if !isUUID(id) {
		return finance.Grant{}, fmt.Errorf("grant %q: %w", id, finance.ErrNotFound)
	}
	g, err := scanGrant(s.pool.QueryRow(ctx, `SELECT `+grantCols+` FROM grants WHERE id = $1`, id))
	if err != nil {
		return finance.Grant{}, storeErr("get grant", err)
	}
	return g, nil
}

// ListGrants implements events.Store: the user's grants, oldest first.
func (s *Store) ListGrants(ctx context.Context, userID string) ([]finance.Grant, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+grantCols+` FROM grants WHERE user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, storeErr("list grants", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.Grant, error) { return scanGrant(r) })
	if err != nil {
		return nil, storeErr("list grants", err)
	}
	return out, nil
}

const grantCols = `id::text, user_id::text, redacted_fields, excluded_account_ids::text[], excluded_category_ids::text[], writes_enabled, created_at,
	version, updated_at, last_write`

func scanGrant(row pgx.Row) (finance.Grant, error) {
	var g finance.Grant
	var updated *time.Time
	var mark []byte
	if err := row.Scan(&g.ID, &g.UserID, &g.RedactedFields, &g.ExcludedAccountIDs, &g.ExcludedCategoryIDs, &g.WritesEnabled, &g.CreatedAt,
		&g.Version, &updated, &mark); err != nil {
		return finance.Grant{}, err
	}
	if updated != nil {
		g.UpdatedAt = *updated
	}
	var err error
	if g.LastWrite, err = scanMark(mark); err != nil {
		return finance.Grant{}, err
	}
	g.RedactedFields = nilIfEmpty(g.RedactedFields)
	g.ExcludedAccountIDs = nilIfEmpty(g.ExcludedAccountIDs)
	g.ExcludedCategoryIDs = nilIfEmpty(g.ExcludedCategoryIDs)
	return g, nil
}

// CreateConnection implements finance.Store.
func (s *Store) CreateConnection(ctx context.Context, c finance.Connection) error {
	_, err := s.pool.Exec(ctx, insertConnection, connectionArgs(c)...)
	return storeErr("create connection", err)
}

const insertConnection = `
	INSERT INTO connections (id, user_id, provider, source_aggregator, institution, institution_logo_url,
		status, last_synced_at, error_code, error_message, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

func connectionArgs(c finance.Connection) []any {
	return []any{c.ID, c.UserID, c.Provider, nullStr(c.SourceAggregator), nullStr(c.Institution), nullStr(c.InstitutionLogoURL),
		c.Status, c.LastSyncedAt, nullStr(c.ErrorCode), nullStr(c.ErrorMessage), c.CreatedAt, c.UpdatedAt}
}

// ListConnections implements finance.Store.
func (s *Store) ListConnections(ctx context.Context, userID string, after *finance.ConnectionPosition, limit int) ([]finance.Connection, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	q := query{args: []any{userID}}
	q.sql.WriteString(`
		SELECT id::text, user_id::text, provider, COALESCE(source_aggregator, ''), COALESCE(institution, ''),
			COALESCE(institution_logo_url, ''), status, last_synced_at, COALESCE(error_code, ''),
			COALESCE(error_message, ''), created_at, updated_at
		FROM connections WHERE user_id = $1`)
	if after != nil {
		q.where("(created_at, id) > (%s, %s)", after.CreatedAt, uuidOrZero(after.ID))
	}
	q.sql.WriteString(" ORDER BY created_at, id")
	q.limit(limit)
	rows, err := s.pool.Query(ctx, q.sql.String(), q.args...)
	if err != nil {
		return nil, storeErr("list connections", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.Connection, error) {
		var c finance.Connection
		err := r.Scan(&c.ID, &c.UserID, &c.Provider, &c.SourceAggregator, &c.Institution, &c.InstitutionLogoURL,
			&c.Status, &c.LastSyncedAt, &c.ErrorCode, &c.ErrorMessage, &c.CreatedAt, &c.UpdatedAt)
		return c, err
	})
	return out, storeErr("list connections", err)
}

// CreateAccount implements finance.Store.
func (s *Store) CreateAccount(ctx context.Context, a finance.Account) error {
	_, err := s.pool.Exec(ctx, insertAccount, accountArgs(a)...)
	return storeErr("create account", err)
}

const insertAccount = `
	INSERT INTO accounts (id, user_id, connection_id, name, nickname, type, subtype, mask, currency,
		balance, balance_currency, available_balance, available_balance_currency, balance_as_of,
		is_hidden, provider, institution_name, institution_logo_url, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`

func accountArgs(a finance.Account) []any {
	availAmount, availCurrency := moneyArgs(a.AvailableBalance)
	return []any{a.ID, a.UserID, a.ConnectionID, nullStr(a.Name), nullStr(a.Nickname), nullStr(a.Type), nullStr(a.Subtype),
		nullStr(a.Mask), a.Currency, numeric(a.Balance.Amount), a.Balance.Currency, availAmount, availCurrency,
		a.BalanceAsOf, a.IsHidden, nullStr(a.Provider), nullStr(a.InstitutionName), nullStr(a.InstitutionLogoURL),
		a.CreatedAt, a.UpdatedAt}
}

const accountColumns = `id::text, user_id::text, connection_id::text, COALESCE(name, ''), COALESCE(nickname, ''),
	COALESCE(type, ''), COALESCE(subtype, ''), COALESCE(mask, ''), currency, balance::text, balance_currency,
	available_balance::text, available_balance_currency, balance_as_of, is_hidden, COALESCE(provider, ''),
	COALESCE(institution_name, ''), COALESCE(institution_logo_url, ''), created_at, updated_at`

func scanAccount(r pgx.Row) (finance.Account, error) {
	var (
		a                          finance.Account
		balance                    string
		availAmount, availCurrency *string
	)
	err := r.Scan(&a.ID, &a.UserID, &a.ConnectionID, &a.Name, &a.Nickname, &a.Type, &a.Subtype, &a.Mask,
		&a.Currency, &balance, &a.Balance.Currency, &availAmount, &availCurrency, &a.BalanceAsOf, &a.IsHidden,
		&a.Provider, &a.InstitutionName, &a.InstitutionLogoURL, &a.CreatedAt, &a.UpdatedAt)
	if err != nil {
		return a, err
	}
	if a.Balance.Amount, err = decimal.NewFromString(balance); err != nil {
		return a, err
	}
	a.AvailableBalance, err = moneyFrom(availAmount, availCurrency)
	return a, err
}

// GetAccount implements finance.Store.
func (s *Store) GetAccount(ctx context.Context, userID, id string) (finance.Account, error) {
	if !isUUID(id) || !isUUID(userID) {
		return finance.Account{}, fmt.Errorf("account %q: %w", id, finance.ErrNotFound)
	}
	a, err := scanAccount(s.pool.QueryRow(ctx,
		`SELECT `+accountColumns+` FROM accounts WHERE id = $1 AND user_id = $2`, id, userID))
	return a, storeErr("get account", err)
}

// ListAccounts implements finance.Store.
func (s *Store) ListAccounts(ctx context.Context, userID string) ([]finance.Account, error) {
	if !isUUID(userID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+accountColumns+` FROM accounts WHERE user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, storeErr("list accounts", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.Account, error) { return scanAccount(r) })
	return out, storeErr("list accounts", err)
}

// CreateCategory implements finance.Store.
func (s *Store) CreateCategory(ctx context.Context, c finance.Category) error {
	_, err := s.pool.Exec(ctx, insertCategory, categoryArgs(c)...)
	return storeErr("create category", err)
}

const insertCategory = `
	INSERT INTO categories (id, user_id, parent_id, name, icon, color, type_tag, sort_order, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func categoryArgs(c finance.Category) []any {
	return []any{c.ID, nullStr(c.UserID), nullStr(c.ParentID), c.Name, nullStr(c.Icon), nullStr(c.Color), nullStr(c.TypeTag),
		c.SortOrder, c.CreatedAt, c.UpdatedAt}
}

// ListCategories implements finance.Store.
func (s *Store) ListCategories(ctx context.Context, userID string) ([]finance.Category, error) {
	if !isUUID(userID) {
		userID = uuid.Nil.String() // still answers the system categories
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id::text, COALESCE(user_id::text, ''), COALESCE(parent_id::text, ''), name, COALESCE(icon, ''),
			COALESCE(color, ''), COALESCE(type_tag, ''), sort_order, created_at, updated_at
		FROM categories WHERE user_id IS NULL OR user_id = $1
		ORDER BY sort_order, name COLLATE "C", id`, userID)
	if err != nil {
		return nil, storeErr("list categories", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.Category, error) {
		var c finance.Category
		err := r.Scan(&c.ID, &c.UserID, &c.ParentID, &c.Name, &c.Icon, &c.Color, &c.TypeTag, &c.SortOrder,
			&c.CreatedAt, &c.UpdatedAt)
		return c, err
	})
	return out, storeErr("list categories", err)
}

const insertTransaction = `
	INSERT INTO transactions (id, user_id, account_id, category_id, amount, currency, merchant, display_name,
		description, date, posted_at, is_pending, source, payment_channel, transfer_pair_id, recurring_rule_id,
		external_ref, tags, check_number, memo, location_street, location_city, location_state,
		location_postal_code, location_country, provider_amount, provider_currency, provider_merchant_name,
		provider_transaction_date, provider_description, provider_memo, owned_by_user, version, split_parent_id,
		created_at, updated_at, last_write)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		$23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37)`

// InsertTransactions implements finance.Store. The rows go in one database
// transaction, sent as one batch.
func (s *Store) InsertTransactions(ctx context.Context, txs []finance.Transaction) error {
	if len(txs) == 0 {
		return nil
	}
	return storeErr("insert transactions", pg.InTx(ctx, s.pool, func(dbtx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, t := range txs {
			b.Queue(insertTransaction, insertArgs(t)...)
		}
		return dbtx.SendBatch(ctx, b).Close()
	}))
}

func insertArgs(t finance.Transaction) []any {
	var loc finance.Location
	if t.Location != nil {
		loc = *t.Location
	}
	provAmount, provCurrency := moneyArgs(t.ProviderAmount)
	return []any{
		t.ID, t.UserID, t.AccountID, nullStr(t.CategoryID), numeric(t.Amount.Amount), t.Amount.Currency,
		nullStr(t.Merchant), nullStr(t.DisplayName), nullStr(t.Description), finance.Day(t.Date), t.PostedAt,
		t.IsPending, t.Source, nullStr(t.PaymentChannel), nullStr(t.TransferPairID),
		nullStr(t.RecurringRuleID), nullStr(t.ExternalRef), list(t.Tags), nullStr(t.CheckNumber),
		nullStr(t.Memo), nullStr(loc.Street), nullStr(loc.City), nullStr(loc.State),
		nullStr(loc.PostalCode), nullStr(loc.Country), provAmount, provCurrency, t.ProviderMerchantName,
		dayPtr(t.ProviderTransactionDate), t.ProviderDescription, t.ProviderMemo, list(t.OwnedByUser),
		t.Version, nullStr(t.SplitParentID), t.CreatedAt, t.UpdatedAt, markArg(t.LastWrite)}
}

// markArg is a WriteMark as a jsonb parameter: NULL for none.
func markArg(m *finance.WriteMark) any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m) // cannot fail: two strings and an integer
	return string(b)
}

// scanMark reads a jsonb WriteMark column (nil for NULL).
func scanMark(raw []byte) (*finance.WriteMark, error) {
	if raw == nil {
		return nil, nil
	}
	var m finance.WriteMark
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("last_write: %w", err)
	}
	return &m, nil
}

const transactionColumns = `id::text, user_id::text, account_id::text, COALESCE(category_id::text, ''),
	amount::text, currency, COALESCE(merchant, ''), COALESCE(display_name, ''), COALESCE(description, ''), date,
	posted_at, is_pending, source, COALESCE(payment_channel, ''), COALESCE(transfer_pair_id::text, ''),
	COALESCE(recurring_rule_id::text, ''), COALESCE(external_ref, ''), tags, COALESCE(check_number, ''),
	COALESCE(memo, ''), COALESCE(location_street, ''), COALESCE(location_city, ''), COALESCE(location_state, ''),
	COALESCE(location_postal_code, ''), COALESCE(location_country, ''), provider_amount::text, provider_currency,
	provider_merchant_name, provider_transaction_date, provider_description, provider_memo, owned_by_user,
	version, COALESCE(split_parent_id::text, ''), created_at, updated_at, last_write`

func scanTransaction(r pgx.Row) (finance.Transaction, error) {
	var (
		t                      finance.Transaction
		amount                 string
		loc                    finance.Location
		provAmount, provCurrcy *string
		lastWrite              []byte
	)
	err := r.Scan(&t.ID, &t.UserID, &t.AccountID, &t.CategoryID, &amount, &t.Amount.Currency, &t.Merchant,
		&t.DisplayName, &t.Description, &t.Date, &t.PostedAt, &t.IsPending, &t.Source, &t.PaymentChannel,
		&t.TransferPairID, &t.RecurringRuleID, &t.ExternalRef, &t.Tags, &t.CheckNumber, &t.Memo,
		&loc.Street, &loc.City, &loc.State, &loc.PostalCode, &loc.Country, &provAmount, &provCurrcy,
		&t.ProviderMerchantName, &t.ProviderTransactionDate, &t.ProviderDescription, &t.ProviderMemo,
		&t.OwnedByUser, &t.Version, &t.SplitParentID, &t.CreatedAt, &t.UpdatedAt, &lastWrite)
	if err != nil {
		return t, err
	}
	if t.LastWrite, err = scanMark(lastWrite); err != nil {
		return t, err
	}
	if t.Amount.Amount, err = decimal.NewFromString(amount); err != nil {
		return t, err
	}
	if t.ProviderAmount, err = moneyFrom(provAmount, provCurrcy); err != nil {
		return t, err
	}
	if !loc.IsZero() {
		t.Location = &loc
	}
	t.Tags = nilIfEmpty(t.Tags)
	t.OwnedByUser = nilIfEmpty(t.OwnedByUser)
	return t, nil
}

// GetTransaction implements finance.Store.
func (s *Store) GetTransaction(ctx context.Context, userID, id string) (finance.Transaction, error) {
	if !isUUID(id) || !isUUID(userID) {
		return finance.Transaction{}, fmt.Errorf("transaction %q: %w", id, finance.ErrNotFound)
	}
	t, err := scanTransaction(s.pool.QueryRow(ctx,
		`SELECT `+transactionColumns+` FROM transactions WHERE id = $1 AND user_id = $2`, id, userID))
	return t, storeErr("get transaction", err)
}

// ListTransactions implements finance.Store.
func (s *Store) ListTransactions(ctx context.Context, userID string, f finance.TransactionFilter, after *finance.TxPosition, limit int) ([]finance.Transaction, error) {
	return s.listTransactions(ctx, userID, f, after, limit, "")
}

// listTransactions is the listing, narrowed by a tsquery when tsq is set.
func (s *Store) listTransactions(ctx context.Context, userID string, f finance.TransactionFilter, after *finance.TxPosition, limit int, tsq string) ([]finance.Transaction, error) {
	q, ok := txQuery(`SELECT `+transactionColumns, userID, f, after, tsq)
	if !ok {
		return nil, nil
	}
	q.sql.WriteString(" ORDER BY date DESC, id DESC")
	q.limit(limit)
	return collectTransactions(ctx, s.pool, q)
}

func collectTransactions(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, q *query) ([]finance.Transaction, error) {
	rows, err := db.Query(ctx, q.sql.String(), q.args...)
	if err != nil {
		return nil, storeErr("list transactions", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (finance.Transaction, error) { return scanTransaction(r) })
	return out, storeErr("list transactions", err)
}

// txQuery starts "<sel> FROM transactions WHERE …" with every condition of
// the listing; ok is false when nothing can match.
func txQuery(sel, userID string, f finance.TransactionFilter, after *finance.TxPosition, tsq string) (*query, bool) {
	if !isUUID(userID) {
		return nil, false
	}
	// A filter on an id that is not a UUID cannot match any row.
	if (f.AccountID != "" && !isUUID(f.AccountID)) || (f.CategoryID != "" && !isUUID(f.CategoryID)) {
		return nil, false
	}
	q := &query{args: []any{userID}}
	q.sql.WriteString(sel + ` FROM transactions WHERE user_id = $1`)
	if ids := uuids(f.ExcludeAccountIDs); len(ids) > 0 {
		q.where("account_id <> ALL(%s::uuid[])", ids)
	}
	if ids := uuids(f.ExcludeCategoryIDs); len(ids) > 0 {
		q.where("(category_id IS NULL OR category_id <> ALL(%s::uuid[]))", ids)
	}
	if f.AccountID != "" {
		q.where("account_id = %s", f.AccountID)
	}
	if f.CategoryID != "" {
		q.where("category_id = %s", f.CategoryID)
	}
	if !f.StartDate.IsZero() {
		q.where("date >= %s", finance.Day(f.StartDate))
	}
	if !f.EndDate.IsZero() {
		q.where("date <= %s", finance.Day(f.EndDate))
	}
	if f.Pending != nil {
		q.where("is_pending = %s", *f.Pending)
	}
	if f.Source != "" {
		q.where("source = %s", f.Source)
	}
	if f.Uncategorized {
		q.sql.WriteString(" AND category_id IS NULL")
	}
	if tsq != "" {
		q.where("search @@ to_tsquery('simple', %s)", tsq)
	}
	if after != nil {
		q.where("(date, id) < (%s, %s)", finance.Day(after.Date), uuidOrZero(after.ID))
	}
	return q, true
}

// query builds a statement whose conditions are added with numbered
// placeholders; values never enter the SQL text.
type query struct {
	sql  strings.Builder
	args []any
}

// where appends " AND cond", each %s in cond taking the next argument.
func (q *query) where(cond string, args ...any) {
	ph := make([]any, len(args))
	for i, a := range args {
		q.args = append(q.args, a)
		ph[i] = "$" + strconv.Itoa(len(q.args))
	}
	q.sql.WriteString(" AND " + fmt.Sprintf(cond, ph...))
}

func (q *query) limit(n int) {
	if n > 0 {
		q.args = append(q.args, n)
		q.sql.WriteString(" LIMIT $" + strconv.Itoa(len(q.args)))
	}
}

// storeErr maps an error the adapter returns the way every adapter does
// (pg.Error): no rows or a malformed id is finance.ErrNotFound, a unique
// violation finance.ErrAlreadyExists, the database not answering the 503
// unavailable problem wrapped with op and its cause, anything else err
// wrapped with op. Every error a Store method returns passes through it.
func storeErr(op string, err error) error {
	return pg.Error("finance postgres: "+op, err, finance.ErrNotFound, finance.ErrAlreadyExists)
}

func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil
}

// uuidOrZero keeps a malformed keyset id from failing the query; the service
// only hands over positions it signed.
func uuidOrZero(s string) string {
	if isUUID(s) {
		return s
	}
	return uuid.Nil.String()
}

// uuids drops entries that are not UUIDs: they cannot name a row.
func uuids(ids []string) []string {
	var out []string
	for _, id := range ids {
		if isUUID(id) {
			out = append(out, id)
		}
	}
	return out
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// list keeps NOT NULL array columns from receiving a NULL for a nil slice.
func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func dayPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return finance.Day(*t)
}

func moneyArgs(m *finance.Money) (amount, currency any) {
	if m == nil {
		return nil, nil
	}
	return numeric(m.Amount), m.Currency
}

// numeric writes d with its own scale, so "10.50" reads back as "10.50"
// (decimal's String would trim it to "10.5").
func numeric(d decimal.Decimal) string {
	if exp := d.Exponent(); exp < 0 {
		return d.StringFixed(-exp)
	}
	return d.String()
}

func moneyFrom(amount, currency *string) (*finance.Money, error) {
	if amount == nil {
		return nil, nil
	}
	d, err := decimal.NewFromString(*amount)
	if err != nil {
		return nil, err
	}
	m := &finance.Money{Amount: d}
	if currency != nil {
		m.Currency = *currency
	}
	return m, nil
}
