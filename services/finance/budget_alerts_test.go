package finance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/events"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/seed"
)

// alertKey is what a budget.threshold_reached is sent once for.
type alertKey struct {
	grant, group string
	period       string
	threshold    int32
}

// recordingAlerts is an AlertPublisher that records what it published and
// fails while fail is set.
type recordingAlerts struct {
	mu   sync.Mutex
	sent []budgets.ThresholdAlert
	fail bool
}

func (r *recordingAlerts) BudgetThresholdReached(_ context.Context, a budgets.ThresholdAlert) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("bus down")
	}
	r.sent = append(r.sent, a)
	return nil
}

func (r *recordingAlerts) keys() []alertKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []alertKey
	for _, a := range r.sent {
		out = append(out, alertKey{a.GrantID, a.GroupID, a.PeriodStart.Format(finance.DateLayout), a.Threshold})
	}
	return out
}

// alertFixture is a user with two spending groups (food 100.00, fun 50.00)
// and a savings group, on two accounts, with three grants: all of it, one
// hiding the second account, one hiding fun's category.
type alertFixture struct {
	store                  *memory.Store
	user, budget           string
	shown, hidden          string // accounts
	food, fun, save        string // categories
	gFood, gFun, gSave     string // groups
	full, noAccount, noFun string // grants
	clock                  *time.Time
	pub                    *recordingAlerts
	replicas               []*budgets.Service
	kernel                 *finance.Service
	thresholds             []int32
	alloc                  map[string]decimal.Decimal
	groupOfCateg           map[string]string
}

func newAlertFixture(t *testing.T, start time.Time, thresholds []int32) *alertFixture {
	t.Helper()
	ctx := context.Background()
	id := func() string { return uuid.NewString() }
	f := &alertFixture{store: memory.New(), user: id(), budget: id(), shown: id(), hidden: id(), food: id(), fun: id(),
		save: id(), gFood: id(), gFun: id(), gSave: id(), full: id(), noAccount: id(), noFun: id(), pub: &recordingAlerts{},
		thresholds: thresholds}
	now := start
	f.clock = &now
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	created := start.AddDate(0, -1, 0)
	must(f.store.CreateUser(ctx, finance.User{ID: f.user, OwnerAccountID: tenant, CreatedAt: created}))
	conn := id()
	must(f.store.CreateConnection(ctx, finance.Connection{ID: conn, UserID: f.user, Provider: finance.ProviderPlaid,
		Status: finance.ConnectionActive, CreatedAt: created, UpdatedAt: created}))
	for _, a := range []string{f.shown, f.hidden} {
		must(f.store.CreateAccount(ctx, finance.Account{ID: a, UserID: f.user, ConnectionID: conn, Name: "Account",
			Currency: "USD", Balance: finance.Money{Amount: decimal.Zero, Currency: "USD"}, CreatedAt: created, UpdatedAt: created}))
	}
	for i, c := range []string{f.food, f.fun, f.save} {
		must(f.store.CreateCategory(ctx, finance.Category{ID: c, UserID: f.user, Name: fmt.Sprintf("Cat %d", i), Icon: "label",
			Color: "#546E7A", TypeTag: finance.CategoryExpense, SortOrder: int32(i), CreatedAt: created, UpdatedAt: created}))
	}
	for _, g := range []finance.Grant{{ID: f.full, UserID: f.user, WritesEnabled: true, CreatedAt: created},
		{ID: f.noAccount, UserID: f.user, ExcludedAccountIDs: []string{f.hidden}, CreatedAt: created},
		{ID: f.noFun, UserID: f.user, ExcludedCategoryIDs: []string{f.fun}, CreatedAt: created}} {
		must(f.store.CreateGrant(ctx, g))
	}
	f.alloc = map[string]decimal.Decimal{f.gFood: decimal.RequireFromString("100.00"), f.gFun: decimal.RequireFromString("50.00"),
		f.gSave: decimal.RequireFromString("20.00")}
	f.groupOfCateg = map[string]string{f.food: f.gFood, f.fun: f.gFun, f.save: f.gSave}
	group := func(gid, name, role, cat string, order int32) budgets.TargetGroup {
		return budgets.TargetGroup{ID: gid, Name: name, SortOrder: order, AllocationType: budgets.AllocAmount,
			AllocationValue: f.alloc[gid], Role: role,
			Items: []budgets.BudgetItem{{ID: id(), CategoryID: cat, AllocatedAmount: f.alloc[gid]}}}
	}
	must(f.store.CreateBudget(ctx, budgets.Budget{ID: f.budget, UserID: f.user, Name: "Plan", MethodType: budgets.MethodCustom,
		PeriodType: budgets.PeriodMonthly, IsActive: true, Currency: "USD", AlertThresholds: thresholds,
		Groups: []budgets.TargetGroup{group(f.gFood, "Food", budgets.RoleSpending, f.food, 1),
			group(f.gFun, "Fun", budgets.RoleSpending, f.fun, 2), group(f.gSave, "Save", budgets.RoleSavings, f.save, 3)},
		Version: 1, CreatedAt: created, UpdatedAt: created}))
	f.kernel = finance.NewService(finance.Config{Store: f.store, Cursors: cursor.New([]byte("k")),
		Clock: func() time.Time { return *f.clock }})
	// Two services over one store: replicas, or one service before and
	// after a restart (nothing of the sent alerts lives in a service).
	for range 2 {
		rec := recurring.NewService(recurring.Config{Kernel: f.kernel, Store: f.store})
		f.replicas = append(f.replicas, budgets.NewService(budgets.Config{Kernel: f.kernel, Recurring: rec, Store: f.store,
			Alerts: f.pub}))
	}
	return f
}

// spend stores an outflow (or, negative, a refund) of cents on account in
// category, dated today.
func (f *alertFixture) spend(t *testing.T, account, category string, cents int64) {
	t.Helper()
	now := *f.clock
	tx := finance.Transaction{ID: uuid.NewString(), UserID: f.user, AccountID: account, CategoryID: category,
		Amount: finance.Money{Amount: decimal.New(-cents, -2), Currency: "USD"}, Date: finance.Day(now),
		Source: finance.SourceManual, Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := f.store.InsertTransactions(context.Background(), []finance.Transaction{tx}); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetThresholdAlertsProperty: random spending and refunds over
// several months on an injected clock, each write followed by a check on
// one of two replicas, some publishes failing. A model keeps each grant's
// view of each group's spend per period. After every check that did not
// fail, exactly the (grant, group, period, threshold) keys some check of
// the period found reached have been sent, each once: none while spending
// stays below, none twice when it dips and rises again, one again in the
// next period (a new period re-arms), none for a savings group, none for a
// grant that hides the group's category, and the hidden account's spend
// counted only for the grants that see it.
func TestBudgetThresholdAlertsProperty(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 33))
			start := time.Date(2026, 1, 27, 12, 0, 0, 0, time.UTC) // month ends, February included
			f := newAlertFixture(t, start, []int32{50, 80, 100})
			ctx := context.Background()
			// spent[grant][period][group] in cents; reached: keys any check found.
			spent := map[string]map[string]map[string]int64{}
			reached := map[alertKey]bool{}
			sees := func(grant, account, category string) bool {
				return !(grant == f.noAccount && account == f.hidden) && !(grant == f.noFun && category == f.fun)
			}
			for step := range 160 {
				*f.clock = f.clock.Add(time.Duration(rng.IntN(36)) * time.Hour)
				period := time.Date(f.clock.Year(), f.clock.Month(), 1, 0, 0, 0, 0, time.UTC).Format(finance.DateLayout)
				account := []string{f.shown, f.hidden}[rng.IntN(2)]
				category := []string{f.food, f.fun, f.save}[rng.IntN(3)]
				cents := int64(rng.IntN(2500)) + 1
				if rng.IntN(5) == 0 {
					cents = -cents // a refund: spending dips
				}
				f.spend(t, account, category, cents)
				for _, g := range []string{f.full, f.noAccount, f.noFun} {
					if !sees(g, account, category) {
						continue
					}
					if spent[g] == nil {
						spent[g] = map[string]map[string]int64{}
					}
					if spent[g][period] == nil {
						spent[g][period] = map[string]int64{}
					}
					spent[g][period][f.groupOfCateg[category]] += cents
				}
				f.pub.fail = rng.IntN(6) == 0
				err := f.replicas[rng.IntN(2)].CheckThresholds(ctx, f.user)
				if f.pub.fail {
					f.pub.fail = false
					continue // the next check sends what this one could not
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				// The model, at each check that could publish: a spending group
				// reaches t when spent×100 ≥ t×allocated.
				for g, byPeriod := range spent {
					for grp, c := range byPeriod[period] {
						if grp == f.gSave || (g == f.noFun && grp == f.gFun) {
							continue
						}
						alloc := f.alloc[grp].Shift(2).IntPart()
						for _, th := range f.thresholds {
							if c*100 >= int64(th)*alloc {
								reached[alertKey{g, grp, period, th}] = true
							}
						}
					}
				}
				got := map[alertKey]int{}
				for _, k := range f.pub.keys() {
					got[k]++
					if got[k] > 1 {
						t.Fatalf("step %d: %+v sent twice", step, k)
					}
				}
				if !maps.Equal(reachedCounts(reached), got) {
					t.Fatalf("step %d: sent %v\nwant %v", step, got, reached)
				}
			}
			periods := map[string]bool{}
			for k := range reached {
				periods[k.period] = true
			}
			if len(periods) < 3 {
				t.Fatalf("the walk reached thresholds in %d periods; it should cover several", len(periods))
			}
		})
	}
}

func reachedCounts(r map[alertKey]bool) map[alertKey]int {
	out := map[alertKey]int{}
	for k := range r {
		out[k] = 1
	}
	return out
}

// TestBudgetThresholdAlertsBoundaries: exact edges, by hand. 79.99 % sends
// nothing, 80.00 % sends 80; the last day of a period counts toward it and
// the first of the next re-arms; thresholds above 100 fire on overspend;
// a budget without thresholds, and an archived one, send nothing.
func TestBudgetThresholdAlertsBoundaries(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2028, 2, 29, 23, 0, 0, 0, time.UTC) // the last day of a leap February
	f := newAlertFixture(t, start, []int32{80, 150})
	check := func() []alertKey {
		t.Helper()
		if err := f.replicas[0].CheckThresholds(ctx, f.user); err != nil {
			t.Fatal(err)
		}
		return f.pub.keys()
	}
	f.spend(t, f.shown, f.food, 7999)
	if got := check(); len(got) != 0 {
		t.Fatalf("79.99 %%: %v", got)
	}
	f.spend(t, f.shown, f.food, 1)
	want := []alertKey{{f.full, f.gFood, "2028-02-01", 80}, {f.noAccount, f.gFood, "2028-02-01", 80},
		{f.noFun, f.gFood, "2028-02-01", 80}}
	if got := check(); !sameKeys(got, want) {
		t.Fatalf("80.00 %%: %v, want %v", got, want)
	}
	// On the hidden account: 150 % for the grants that see it only.
	f.spend(t, f.hidden, f.food, 7000)
	want = append(want, alertKey{f.full, f.gFood, "2028-02-01", 150}, alertKey{f.noFun, f.gFood, "2028-02-01", 150})
	if got := check(); !sameKeys(got, want) {
		t.Fatalf("150 %%: %v, want %v", got, want)
	}
	// March 1st: a new period, nothing spent in it yet.
	*f.clock = f.clock.Add(time.Hour)
	if got := check(); !sameKeys(got, want) {
		t.Fatalf("new period, nothing spent: %v", got)
	}
	f.spend(t, f.shown, f.food, 8000)
	want = append(want, alertKey{f.full, f.gFood, "2028-03-01", 80}, alertKey{f.noAccount, f.gFood, "2028-03-01", 80},
		alertKey{f.noFun, f.gFood, "2028-03-01", 80})
	if got := check(); !sameKeys(got, want) {
		t.Fatalf("re-armed: %v, want %v", got, want)
	}
	// Fun's category is hidden from noFun: its group has nothing allocated
	// in that view, so noFun hears nothing of it.
	f.spend(t, f.shown, f.fun, 5000)
	want = append(want, alertKey{f.full, f.gFun, "2028-03-01", 80}, alertKey{f.noAccount, f.gFun, "2028-03-01", 80})
	if got := check(); !sameKeys(got, want) {
		t.Fatalf("fun: %v, want %v", got, want)
	}
	// The savings group reaching its allocation is no alert.
	f.spend(t, f.shown, f.save, 5000)
	if got := check(); !sameKeys(got, want) {
		t.Fatalf("savings: %v", got)
	}
	// No thresholds: nothing more, whatever is spent.
	b, err := f.store.GetBudget(ctx, f.user, f.budget)
	if err != nil {
		t.Fatal(err)
	}
	b.AlertThresholds, b.Version = nil, 2
	if err := f.store.UpdateBudgetGroups(ctx, b, 1); err != nil {
		t.Fatal(err)
	}
	f.spend(t, f.shown, f.fun, 5000)
	if got := check(); !sameKeys(got, want) {
		t.Fatalf("no thresholds: %v", got)
	}
}

func sameKeys(got, want []alertKey) bool {
	cmp := func(a, b alertKey) int {
		return cmpString(fmt.Sprint(a), fmt.Sprint(b))
	}
	g, w := slices.Clone(got), slices.Clone(want)
	slices.SortFunc(g, cmp)
	slices.SortFunc(w, cmp)
	return slices.Equal(g, w)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestAlertThresholdsWrites: the thresholds on the budget writes. The
// switch sets the default or what it is sent; the allocations PATCH
// replaces them, clears them, and refuses what is out of range, too many,
// repeated, or both at once, naming the field.
func TestAlertThresholdsWrites(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	yes := true
	sw, err := e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodEnvelope, &yes, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.budgets.GetBudget(ctx, e.read, sw.Data.NewBudgetID)
	if err != nil || !slices.Equal(got.Data.AlertThresholds, budgets.DefaultAlertThresholds) {
		t.Fatalf("default: %v %v", err, got.Data.AlertThresholds)
	}
	sw, err = e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodKakeibo, &yes, []int32{120, 75})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = e.budgets.GetBudget(ctx, e.read, sw.Data.NewBudgetID)
	if !slices.Equal(got.Data.AlertThresholds, []int32{75, 120}) {
		t.Fatalf("switch with thresholds: %v", got.Data.AlertThresholds)
	}
	id, v := got.Data.ID, got.Data.Version
	res, err := e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v,
		AlertThresholds: []int32{1000, 1, 90}})
	if err != nil || !slices.Equal(res.Data.AlertThresholds, []int32{1, 90, 1000}) || res.Data.Version != v+1 {
		t.Fatalf("replace: %v %+v", err, res.Data.AlertThresholds)
	}
	res, err = e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v + 1,
		ClearAlertThresholds: true})
	if err != nil || len(res.Data.AlertThresholds) != 0 || res.Data.Version != v+2 {
		t.Fatalf("clear: %v %+v", err, res.Data.AlertThresholds)
	}
	for _, tc := range []struct {
		name  string
		u     budgets.AllocationUpdate
		field string
	}{
		{"zero", budgets.AllocationUpdate{AlertThresholds: []int32{0}}, "alert_thresholds[0]"},
		{"above 1000", budgets.AllocationUpdate{AlertThresholds: []int32{80, 1001}}, "alert_thresholds[1]"},
		{"negative", budgets.AllocationUpdate{AlertThresholds: []int32{-5}}, "alert_thresholds[0]"},
		{"repeated", budgets.AllocationUpdate{AlertThresholds: []int32{80, 100, 80}}, "alert_thresholds[2]"},
		{"six", budgets.AllocationUpdate{AlertThresholds: []int32{1, 2, 3, 4, 5, 6}}, "alert_thresholds"},
		{"both", budgets.AllocationUpdate{AlertThresholds: []int32{80}, ClearAlertThresholds: true}, "alert_thresholds"},
		{"nothing", budgets.AllocationUpdate{}, "items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.u.BudgetID, tc.u.ExpectedVersion = id, v+2
			_, err := e.budgets.UpdateBudgetAllocations(ctx, e.write, tc.u)
			wantProblem(t, err, problem.InvalidInput, tc.field)
		})
	}
	_, err = e.budgets.SwitchBudgetMethod(ctx, e.write, budgets.MethodKakeibo, &yes, []int32{80, 2000})
	wantProblem(t, err, problem.InvalidInput, "alert_thresholds[1]")
	// A read-only grant cannot change them; another user's budget is not found.
	_, err = e.budgets.UpdateBudgetAllocations(ctx, e.read, budgets.AllocationUpdate{BudgetID: id, ExpectedVersion: v + 2,
		AlertThresholds: []int32{80}})
	wantProblem(t, err, problem.WritesDisabled, "")
	_, err = e.budgets.UpdateBudgetAllocations(ctx, e.write, budgets.AllocationUpdate{BudgetID: uuid.NewString(),
		ExpectedVersion: 1, AlertThresholds: []int32{80}})
	wantProblem(t, err, problem.NotFound, "")
}

// TestBudgetThresholdEventBody: the event says which grant, budget, group,
// threshold and period, and nothing else (no amount, name, category or
// account); its id is the same each time the same alert is published.
func TestBudgetThresholdEventBody(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	user := uuid.NewString()
	if err := store.CreateUser(ctx, finance.User{ID: user, OwnerAccountID: tenant, Mode: "test"}); err != nil {
		t.Fatal(err)
	}
	pub := &capture{}
	now := time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC)
	svc := events.NewService(events.Config{Store: store, Publisher: pub, Clock: func() time.Time { return now }})
	a := budgets.ThresholdAlert{UserID: user, GrantID: uuid.NewString(), BudgetID: uuid.NewString(), GroupID: uuid.NewString(),
		PeriodStart: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), PeriodEnd: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Threshold: 80}
	for range 2 {
		if err := svc.BudgetThresholdReached(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if len(pub.got) != 2 || pub.got[0].ID != pub.got[1].ID || pub.got[0].Type != events.TypeBudgetThreshold ||
		pub.got[0].Mode != "test" || pub.got[0].AccountID != tenant || pub.got[0].CoalesceKey != "" {
		t.Fatalf("events: %+v", pub.got)
	}
	var body map[string]any
	if err := json.Unmarshal(pub.got[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "budget.threshold_reached", "id": pub.got[0].ID, "created_at": "2026-03-09T10:00:00Z",
		"user_id": user, "grant_id": a.GrantID, "budget_id": a.BudgetID, "group_id": a.GroupID, "threshold": 80.0,
		"period_start": "2026-03-01", "period_end": "2026-04-01"}
	if !maps.Equal(body, want) {
		t.Fatalf("body %v\nwant %v", body, want)
	}
	other := a
	other.Threshold = 100
	if err := svc.BudgetThresholdReached(ctx, other); err != nil || pub.got[2].ID == pub.got[0].ID {
		t.Fatalf("another threshold, same id: %v", err)
	}
}

type capture struct{ got []events.Event }

func (c *capture) Publish(_ context.Context, ev events.Event) error {
	c.got = append(c.got, ev)
	return nil
}

// BenchmarkCheckThresholds: what a write pays for the check on the demo
// user (three grants, the envelope budget; every reached threshold claimed
// already after the first run), in memory.
func BenchmarkCheckThresholds(b *testing.B) {
	store := memory.New()
	ctx := context.Background()
	now := time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)
	d, err := seed.Demo(ctx, store, tenant, now)
	if err != nil {
		b.Fatal(err)
	}
	k := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("k")), Clock: func() time.Time { return now }})
	svc := budgets.NewService(budgets.Config{Kernel: k, Recurring: recurring.NewService(recurring.Config{Kernel: k, Store: store}),
		Store: store, Alerts: &recordingAlerts{}})
	for b.Loop() {
		if err := svc.CheckThresholds(ctx, d.UserID); err != nil {
			b.Fatal(err)
		}
	}
}
