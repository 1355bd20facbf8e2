// Package memory is an in-process finance.Store for tests and local runs. It
// mirrors what PostgreSQL does to values on the way through (dates lose their
// time of day, timestamps keep microseconds, empty lists and locations read
// back as nil) so the conformance suite holds for both.
package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/memtable"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

// Store is a finance.Store held in maps behind one lock.
type Store struct {
	mu            sync.RWMutex
	users         map[string]finance.User
	grants        map[string]finance.Grant
	connections   map[string]finance.Connection
	accounts      map[string]finance.Account
	categories    map[string]finance.Category
	rules         map[string]recurring.Rule
	transactions  map[string]finance.Transaction
	budgetState   // budgets.go; liabilities: debt.go
	holdingState  // networth.go
	netWorthState // networth.go
	importState   // imports.go
	feedState     // sync.go
	linkState     // sandboxlink.go
	outboxState   // outbox.go
	liabilities   map[string]debt.Liability
	// recurringDue holds the users due for recurring detection
	// (recurring.go), by user id.
	recurringDue map[string]recurringDue
	// recurringRuns: when detection last finished, by user id.
	recurringRuns map[string]time.Time
}

var (
	_ finance.Store  = (*Store)(nil)
	_ debt.Store     = (*Store)(nil)
	_ imports.Store  = (*Store)(nil)
	_ networth.Store = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{
		users:         map[string]finance.User{},
		grants:        map[string]finance.Grant{},
		connections:   map[string]finance.Connection{},
		accounts:      map[string]finance.Account{},
		categories:    map[string]finance.Category{},
		rules:         map[string]recurring.Rule{},
		transactions:  map[string]finance.Transaction{},
		recurringDue:  map[string]recurringDue{},
		recurringRuns: map[string]time.Time{},
		liabilities:   map[string]debt.Liability{},
		linkState:     linkState{links: map[string]sandboxlink.Link{}},
		budgetState: budgetState{budgets: map[string]budgets.Budget{}, snapshots: map[string]budgets.ProgressSnapshot{},
			goals: map[string]budgets.Goal{}, alerts: map[string]budgets.ThresholdAlert{}},
		holdingState:  holdingState{holdings: map[string]networth.Holding{}, prices: map[string]networth.SecurityPrice{}},
		netWorthState: netWorthState{fxRates: map[string]networth.FXRate{}, nwSnapshots: map[string]networth.NetWorthSnapshot{}},
		importState:   importState{importClaims: map[string]imports.ImportClaim{}},
		feedState: feedState{feed: map[string]feedRow{}, tombstones: map[string]tombstone{},
			categoryLog: map[string][]categoryChange{}, horizon: map[string]int64{}},
	}
}

// CreateUser implements finance.Store.
func (s *Store) CreateUser(_ context.Context, u finance.User) error {
	if u.OwnerAccountID != "" {
		if _, err := uuid.Parse(u.OwnerAccountID); err != nil {
			return fmt.Errorf("memory: owner account id %q is not a uuid", u.OwnerAccountID)
		}
	}
	u.CreatedAt, u.Mode = ts(u.CreatedAt), finance.ModeOf(u.Mode)
	return put(s, s.users, u.ID, u)
}

// GetUser implements finance.Store.
func (s *Store) GetUser(_ context.Context, id string) (finance.User, error) {
	return find(s, &s.users, "user", id, memtable.AnyOwner[finance.User], memtable.Same)
}

// CreateGrant implements finance.Store.
func (s *Store) CreateGrant(_ context.Context, g finance.Grant) error {
	g.CreatedAt = ts(g.CreatedAt)
	g.Version = max(g.Version, 1)
	return put(s, s.grants, g.ID, cloneGrant(g))
}

// GetGrant implements finance.Store.
func (s *Store) GetGrant(_ context.Context, id string) (finance.Grant, error) {
	return find(s, &s.grants, "grant", id, memtable.AnyOwner[finance.Grant], cloneGrant)
}

// ListGrants implements events.Store.
func (s *Store) ListGrants(_ context.Context, userID string) ([]finance.Grant, error) {
	return memtable.Collect(&s.mu, &s.grants, func(g finance.Grant) bool { return g.UserID == userID }, cloneGrant,
		func(a, b finance.Grant) int { return compareCreated(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

// CreateConnection implements finance.Store.
func (s *Store) CreateConnection(_ context.Context, c finance.Connection) error {
	c.LastSyncedAt = tsPtr(c.LastSyncedAt)
	c.CreatedAt, c.UpdatedAt = ts(c.CreatedAt), ts(c.UpdatedAt)
	return put(s, s.connections, c.ID, c)
}

// ListConnections implements finance.Store.
func (s *Store) ListConnections(_ context.Context, userID string, after *finance.ConnectionPosition, limit int) ([]finance.Connection, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []finance.Connection
	for _, c := range s.connections {
		if c.UserID != userID {
			continue
		}
		if after != nil && compareCreated(c.CreatedAt, c.ID, after.CreatedAt, after.ID) <= 0 {
			continue
		}
		out = append(out, cloneConnection(c))
	}
	slices.SortFunc(out, func(a, b finance.Connection) int {
		return compareCreated(a.CreatedAt, a.ID, b.CreatedAt, b.ID)
	})
	return truncate(out, limit), nil
}

func cloneConnection(c finance.Connection) finance.Connection {
	c.LastSyncedAt = copyPtr(c.LastSyncedAt)
	return c
}

// CreateAccount implements finance.Store.
func (s *Store) CreateAccount(_ context.Context, a finance.Account) error {
	a.BalanceAsOf = tsPtr(a.BalanceAsOf)
	a.CreatedAt, a.UpdatedAt = ts(a.CreatedAt), ts(a.UpdatedAt)
	return put(s, s.accounts, a.ID, cloneAccount(a))
}

// GetAccount implements finance.Store.
func (s *Store) GetAccount(_ context.Context, userID, id string) (finance.Account, error) {
	return find(s, &s.accounts, "account", id, func(a finance.Account) bool { return a.UserID == userID }, cloneAccount)
}

// ListAccounts implements finance.Store.
func (s *Store) ListAccounts(_ context.Context, userID string) ([]finance.Account, error) {
	return memtable.Collect(&s.mu, &s.accounts, func(a finance.Account) bool { return a.UserID == userID }, cloneAccount,
		func(a, b finance.Account) int { return compareCreated(a.CreatedAt, a.ID, b.CreatedAt, b.ID) }), nil
}

// CreateCategory implements finance.Store.
func (s *Store) CreateCategory(_ context.Context, c finance.Category) error {
	c.CreatedAt, c.UpdatedAt = ts(c.CreatedAt), ts(c.UpdatedAt)
	return put(s, s.categories, c.ID, c)
}

// ListCategories implements finance.Store.
func (s *Store) ListCategories(_ context.Context, userID string) ([]finance.Category, error) {
	return memtable.Collect(&s.mu, &s.categories, func(c finance.Category) bool { return c.UserID == "" || c.UserID == userID }, memtable.Same,
		func(a, b finance.Category) int {
			return cmp.Or(cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
		}), nil
}

// InsertTransactions implements finance.Store.
func (s *Store) InsertTransactions(_ context.Context, txs []finance.Transaction) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkInserts(txs); err != nil {
		return err
	}
	for _, t := range txs {
		s.putTx(normalizeTx(t))
	}
	return nil
}

// checkInserts refuses ids that are taken and provider ids (external_ref)
// already on the account, as PostgreSQL's unique indexes do.
func (s *Store) checkInserts(txs []finance.Transaction) error {
	seen := make(map[string]bool, len(txs))
	refs := map[string]bool{}
	for _, t := range s.transactions {
		if t.ExternalRef != "" {
			refs[t.AccountID+"|"+t.ExternalRef] = true
		}
	}
	for _, t := range txs {
		if _, err := uuid.Parse(t.ID); err != nil {
			return fmt.Errorf("memory: id %q is not a uuid", t.ID)
		}
		if _, ok := s.transactions[t.ID]; ok || seen[t.ID] {
			return fmt.Errorf("transaction %s: %w", t.ID, finance.ErrAlreadyExists)
		}
		seen[t.ID] = true
		if t.ExternalRef != "" {
			key := t.AccountID + "|" + t.ExternalRef
			if refs[key] {
				return fmt.Errorf("transaction %s: external_ref %q: %w", t.ID, t.ExternalRef, finance.ErrAlreadyExists)
			}
			refs[key] = true
		}
	}
	return nil
}

// GetTransaction implements finance.Store.
func (s *Store) GetTransaction(_ context.Context, userID, id string) (finance.Transaction, error) {
	return find(s, &s.transactions, "transaction", id, func(t finance.Transaction) bool { return t.UserID == userID }, cloneTx)
}

// ListTransactions implements finance.Store.
func (s *Store) ListTransactions(_ context.Context, userID string, f finance.TransactionFilter, after *finance.TxPosition, limit int) ([]finance.Transaction, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.page(userID, f, after, limit, nil), nil
}

// page is one keyset page of the user's transactions matching f (and keep,
// when set), newest first, as copies. The caller holds the lock.
func (s *Store) page(userID string, f finance.TransactionFilter, after *finance.TxPosition, limit int, keep func(finance.Transaction) bool) []finance.Transaction {
	var out []finance.Transaction
	for _, t := range s.transactions {
		if t.UserID != userID || !matches(t, f) || (keep != nil && !keep(t)) {
			continue
		}
		if after != nil && compareTxDesc(t.Date, t.ID, after.Date, after.ID) <= 0 {
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b finance.Transaction) int {
		return compareTxDesc(a.Date, a.ID, b.Date, b.ID)
	})
	out = truncate(out, limit)
	for i := range out {
		out[i] = cloneTx(out[i])
	}
	return out
}

func matches(t finance.Transaction, f finance.TransactionFilter) bool {
	switch {
	case slices.Contains(f.ExcludeAccountIDs, t.AccountID):
		return false
	case t.CategoryID != "" && slices.Contains(f.ExcludeCategoryIDs, t.CategoryID):
		return false
	case f.AccountID != "" && t.AccountID != f.AccountID:
		return false
	case f.CategoryID != "" && t.CategoryID != f.CategoryID:
		return false
	case !f.StartDate.IsZero() && t.Date.Before(finance.Day(f.StartDate)):
		return false
	case !f.EndDate.IsZero() && t.Date.After(finance.Day(f.EndDate)):
		return false
	case f.Pending != nil && t.IsPending != *f.Pending:
		return false
	case f.Source != "" && t.Source != f.Source:
		return false
	case f.Uncategorized && t.CategoryID != "":
		return false
	}
	return true
}

// compareTxDesc orders by date descending, then id descending. Canonical UUID
// strings sort like PostgreSQL's uuid type, so both stores agree.
func compareTxDesc(aDate time.Time, aID string, bDate time.Time, bID string) int {
	return cmp.Or(bDate.Compare(aDate), cmp.Compare(bID, aID))
}

func compareCreated(aAt time.Time, aID string, bAt time.Time, bID string) int {
	return cmp.Or(aAt.Compare(bAt), cmp.Compare(aID, bID))
}

// put inserts v under id unless the id is taken. Ids must be UUIDs, as the
// PostgreSQL columns require.
func put[T any](s *Store, m map[string]T, id string, v T) error {
	if _, err := uuid.Parse(id); err != nil {
		return fmt.Errorf("memory: id %q is not a uuid", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := m[id]; ok {
		return fmt.Errorf("%s: %w", id, finance.ErrAlreadyExists)
	}
	m[id] = v
	return nil
}

// belowLimit refuses one more row when m already holds limit rows that
// counted accepts (finance.ErrLimitReached, naming what); the caller holds
// s.mu.
func belowLimit[T any](m map[string]T, limit int, what string, counted func(T) bool) error {
	n := 0
	for _, v := range m {
		if counted(v) {
			n++
		}
	}
	if n >= limit {
		return fmt.Errorf("%s: %w", what, finance.ErrLimitReached)
	}
	return nil
}

func notFound(kind, id string) error { return fmt.Errorf("%s %s: %w", kind, id, finance.ErrNotFound) }

// find reads row id of m, copied by clone, when mine says it is the
// caller's (memtable.Find); else it is the not-found error naming kind.
func find[T any](s *Store, m *map[string]T, kind, id string, mine func(T) bool, clone func(T) T) (T, error) {
	v, ok := memtable.Find(&s.mu, m, id, mine)
	if !ok {
		var zero T
		return zero, notFound(kind, id)
	}
	return clone(v), nil
}

func truncate[T any](s []T, limit int) []T {
	if limit > 0 && len(s) > limit {
		return s[:limit]
	}
	return s
}

// ts keeps microseconds, as a PostgreSQL timestamptz does.
func ts(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

func tsPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := ts(*t)
	return &v
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

func cloneGrant(g finance.Grant) finance.Grant {
	g.RedactedFields = cloneStrings(g.RedactedFields)
	g.ExcludedAccountIDs = cloneStrings(g.ExcludedAccountIDs)
	g.ExcludedCategoryIDs = cloneStrings(g.ExcludedCategoryIDs)
	g.LastWrite = copyPtr(g.LastWrite)
	return g
}

func cloneAccount(a finance.Account) finance.Account {
	a.AvailableBalance = copyPtr(a.AvailableBalance)
	a.BalanceAsOf = copyPtr(a.BalanceAsOf)
	return a
}

func normalizeTx(t finance.Transaction) finance.Transaction {
	t.Date = finance.Day(t.Date)
	t.PostedAt = tsPtr(t.PostedAt)
	t.CreatedAt, t.UpdatedAt = ts(t.CreatedAt), ts(t.UpdatedAt)
	if t.Location != nil && t.Location.IsZero() {
		t.Location = nil
	}
	if t.ProviderTransactionDate != nil {
		d := finance.Day(*t.ProviderTransactionDate)
		t.ProviderTransactionDate = &d
	}
	return cloneTx(t)
}

func cloneTx(t finance.Transaction) finance.Transaction {
	t.PostedAt = copyPtr(t.PostedAt)
	t.Tags = cloneStrings(t.Tags)
	t.OwnedByUser = cloneStrings(t.OwnedByUser)
	t.Location = copyPtr(t.Location)
	t.ProviderAmount = copyPtr(t.ProviderAmount)
	t.ProviderMerchantName = copyPtr(t.ProviderMerchantName)
	t.ProviderTransactionDate = copyPtr(t.ProviderTransactionDate)
	t.ProviderDescription = copyPtr(t.ProviderDescription)
	t.ProviderMemo = copyPtr(t.ProviderMemo)
	t.LastWrite = copyPtr(t.LastWrite)
	return t
}
