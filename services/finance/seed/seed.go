// Package seed writes a realistic, deterministic demo data set: one user with
// about two years of history across checking, savings, two credit cards, a
// mortgage, a brokerage account and a EUR account, on two aggregator rails and
// a manual connection.
//
// The user belongs to a metering account (its tenant), whose id Demo takes.
//
// Determinism: ids are name-based UUIDs under the owner account and every
// random choice comes from a fixed seed, so the same account and now always
// give the same rows, and demos of different accounts never collide: one
// store can hold one demo per account. Only now moves the window. The system
// categories are shared, with fixed ids: Demo writes those that are missing.
package seed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/stores"
)

// DemoData names what Demo wrote, for tests and the local stack. (It cannot
// share the name Demo with the function.)
type DemoData struct {
	// OwnerAccountID is the metering account that owns the user.
	OwnerAccountID string
	UserID         string
	// GrantReadID has writes off and no privacy settings.
	GrantReadID string
	// GrantWriteID has writes on and no privacy settings.
	GrantWriteID string
	// GrantRedactedID has writes on, redacts transaction.location and
	// connection.institution, and excludes ExcludedAccountID and
	// ExcludedCategoryID (with its subcategories).
	GrantRedactedID    string
	ExcludedAccountID  string
	ExcludedCategoryID string

	ConnectionIDs DemoConnections
	AccountIDs    DemoAccounts
	// CategoryIDs maps category names to ids: the system ones and the user's.
	CategoryIDs  map[string]string
	Transactions int
	// Budgets names the budgets, goals and anomalies (budgets.go).
	Budgets DemoBudgets
	// Debts names the loans added for the debt routes (debt.go).
	Debts DemoDebts
}

// DemoConnections are the three connections of the demo user.
type DemoConnections struct {
	Chase    string // plaid rail, healthy
	Fidelity string // quiltt rail fronting mx, needs a new login
	Manual   string
}

// DemoAccounts are the demo user's accounts.
type DemoAccounts struct {
	Checking     string
	Savings      string
	CreditCard   string
	RewardsCard  string // its bank (Elan) differs from its connection's (Fidelity)
	Brokerage    string
	Mortgage     string
	EuroChecking string // EUR
}

// namespace roots the name-based ids of the demo.
var namespace = uuid.MustParse("0f4b7a3e-5c2d-4e8a-9b1f-6d3c2a1e9f70")

// id names what is shared by every demo: the system categories.
func id(name string) string { return uuid.NewSHA1(namespace, []byte(name)).String() }

// id names what belongs to this demo's user, under its owner account.
func (b *builder) id(name string) string { return uuid.NewSHA1(b.ns, []byte(name)).String() }

const logoBase = "https://assets.ledgerlane.example/logos/"

// Store is what the demo writes to: the whole finance store.
type Store = stores.Store

// Demo writes the demo user of the metering account ownerAccountID (a UUID)
// and everything the user owns into store, with transactions dated up to
// now. It also writes the system categories the store does not hold yet.
// The store must not hold a demo of the same account.
func Demo(ctx context.Context, store Store, ownerAccountID string, now time.Time) (DemoData, error) {
	if _, err := uuid.Parse(ownerAccountID); err != nil {
		return DemoData{}, fmt.Errorf("seed: owner account id %q is not a uuid", ownerAccountID)
	}
	b := newBuilder(ownerAccountID, now)
	b.build()
	if err := b.write(ctx, store); err != nil {
		return DemoData{}, err
	}
	return b.demo, nil
}

// account is an account being generated, with its running balance.
type account struct {
	finance.Account
	source  string
	refKind string    // how its provider spells transaction ids
	cutoff  time.Time // no rows after this date: the last sync
	// balance runs over the generated rows from the opening balance; owed
	// amounts (cards, loans) run negative until finishAccounts flips them.
	balance decimal.Decimal
}

type builder struct {
	owner      string    // the metering account that owns the user
	ns         uuid.UUID // names the user's rows: see builder.id
	rng        *rand.Rand
	now, today time.Time
	start      time.Time
	demo       DemoData

	user        finance.User
	grants      []finance.Grant
	connections []finance.Connection
	categories  []finance.Category
	rules       []recurring.Rule
	ruleIDs     map[string]string
	txs         []finance.Transaction
	seq         int // names transaction ids
	checkNo     int
	plans       demoPlans // budgets.go
	debt        demoDebt  // debt.go

	checking, savings, card, rewards, brokerage, mortgage, euro *account
}

func newBuilder(ownerAccountID string, now time.Time) *builder {
	now = now.UTC().Truncate(time.Microsecond)
	today := finance.Day(now)
	return &builder{
		owner:   ownerAccountID,
		ns:      uuid.NewSHA1(namespace, []byte("owner/"+ownerAccountID)),
		rng:     rand.New(rand.NewPCG(20240917, 7)),
		now:     now,
		today:   today,
		start:   today.AddDate(-2, 0, 1),
		ruleIDs: map[string]string{},
	}
}

func (b *builder) build() {
	b.people()
	b.categoryTree()
	b.accounts()
	b.recurringRules()
	for d := b.start; !d.After(b.today); d = d.AddDate(0, 0, 1) {
		b.day(d)
	}
	// A few rows are always pending, whatever random draws came up.
	b.purchase(b.card, b.today, cents(450, 690), coffee[0], "Coffee Shops", true)
	b.purchase(b.checking, b.today.AddDate(0, 0, -1), cents(3400, 9800), groceries[1], "Groceries", true)
	b.demoAnomalies()
	b.userEdits()
	b.loans()
	b.finishAccounts()
	b.budgetsAndGoals()
	b.demo.Transactions = len(b.txs)
}

func (b *builder) people() {
	b.user = finance.User{ID: b.id("user"), Name: "Alex Rivera", OwnerAccountID: b.owner,
		CreatedAt: b.start.AddDate(0, 0, -30)}
	b.demo.OwnerAccountID, b.demo.UserID = b.owner, b.user.ID
	b.demo.GrantReadID = b.id("grant/read")
	b.demo.GrantWriteID = b.id("grant/write")
	b.demo.GrantRedactedID = b.id("grant/redacted")
}

type categorySpec struct {
	name, icon, color, tag string
	children               []string
}

var systemCategories = []categorySpec{
	{"Income", "payments", "#2E7D32", finance.CategoryIncome, []string{"Paycheck", "Interest", "Dividends"}},
	{"Housing", "home", "#5D4037", finance.CategoryExpense, []string{"Mortgage & Rent", "Loan Interest"}},
	{"Utilities", "bolt", "#F9A825", finance.CategoryExpense, []string{"Electricity", "Internet", "Phone"}},
	{"Groceries", "shopping_cart", "#43A047", finance.CategoryExpense, nil},
	{"Dining", "restaurant", "#E64A19", finance.CategoryExpense, []string{"Restaurants", "Coffee Shops"}},
	{"Transport", "directions_car", "#1E88E5", finance.CategoryExpense, []string{"Fuel", "Rideshare & Transit"}},
	{"Shopping", "shopping_bag", "#8E24AA", finance.CategoryExpense, nil},
	{"Entertainment", "movie", "#D81B60", finance.CategoryExpense, []string{"Streaming"}},
	{"Health", "favorite", "#C62828", finance.CategoryExpense, []string{"Pharmacy", "Fitness"}},
	{"Travel", "flight", "#00897B", finance.CategoryExpense, nil},
	{"Transfers", "swap_horiz", "#546E7A", finance.CategoryTransfer, []string{"Credit Card Payment", "Savings & Investments"}},
}

// systemCategoryRows are the shared system categories, parents before their
// subcategories, created at at.
func systemCategoryRows(at time.Time) []finance.Category {
	var out []finance.Category
	for i, p := range systemCategories {
		parent := finance.Category{ID: id("category/" + p.name), Name: p.name, Icon: p.icon, Color: p.color,
			TypeTag: p.tag, SortOrder: int32(10 * (i + 1)), CreatedAt: at, UpdatedAt: at}
		out = append(out, parent)
		for j, child := range p.children {
			out = append(out, finance.Category{ID: id("category/" + child), ParentID: parent.ID, Name: child, Icon: p.icon,
				Color: p.color, TypeTag: p.tag, SortOrder: parent.SortOrder + int32(j+1), CreatedAt: at, UpdatedAt: at})
		}
	}
	return out
}

func (b *builder) categoryTree() {
	at := b.start.AddDate(0, 0, -60)
	b.demo.CategoryIDs = map[string]string{}
	add := func(c finance.Category) {
		c.CreatedAt, c.UpdatedAt = at, at
		b.categories = append(b.categories, c)
		b.demo.CategoryIDs[c.Name] = c.ID
	}
	for _, c := range systemCategoryRows(at) {
		add(c)
	}
	at = b.user.CreatedAt.AddDate(0, 0, 3)
	add(finance.Category{ID: b.id("category/custom/kids"), UserID: b.user.ID, Name: "Kids' Activities",
		Icon: "emoji:🎨", Color: "#FF8F00", TypeTag: finance.CategoryExpense, SortOrder: 200})
	add(finance.Category{ID: b.id("category/custom/photography"), UserID: b.user.ID,
		ParentID: b.demo.CategoryIDs["Shopping"], Name: "Photography", Icon: "photo_camera", Color: "#6A1B9A",
		TypeTag: finance.CategoryExpense, SortOrder: 75})
}

func (b *builder) accounts() {
	created := b.start.AddDate(0, 0, -10).Add(15 * time.Hour)
	chaseSync := b.now.Add(-2 * time.Hour)
	fidelitySync := b.now.Add(-77 * time.Hour)
	b.connections = []finance.Connection{
		{ID: b.id("connection/chase"), UserID: b.user.ID, Provider: finance.ProviderPlaid, Institution: "Chase",
			InstitutionLogoURL: logoBase + "chase.png", Status: finance.ConnectionActive, LastSyncedAt: &chaseSync,
			CreatedAt: created, UpdatedAt: chaseSync},
		{ID: b.id("connection/fidelity"), UserID: b.user.ID, Provider: finance.ProviderQuiltt, SourceAggregator: "mx",
			Institution: "Fidelity Investments", InstitutionLogoURL: logoBase + "fidelity.png",
			Status: finance.ConnectionLoginRequired, LastSyncedAt: &fidelitySync, ErrorCode: "login_required",
			ErrorMessage: "Fidelity needs you to sign in again to keep syncing.",
			CreatedAt:    created.Add(20 * time.Minute), UpdatedAt: fidelitySync.Add(time.Hour)},
		{ID: b.id("connection/manual"), UserID: b.user.ID, Provider: finance.ProviderManual,
			Institution: "Manual accounts", Status: finance.ConnectionActive,
			CreatedAt: created.Add(time.Hour), UpdatedAt: created.Add(time.Hour)},
	}
	chase, fidelity, manual := b.connections[0], b.connections[1], b.connections[2]
	b.demo.ConnectionIDs = DemoConnections{Chase: chase.ID, Fidelity: fidelity.ID, Manual: manual.ID}

	mk := func(key string, conn finance.Connection, offset time.Duration, a finance.Account, source, refKind, opening string) *account {
		a.ID, a.UserID, a.ConnectionID, a.Provider = b.id("account/"+key), b.user.ID, conn.ID, conn.Provider
		a.CreatedAt = conn.CreatedAt.Add(offset)
		cutoff := b.today
		if conn.LastSyncedAt != nil {
			cutoff = finance.Day(*conn.LastSyncedAt)
		}
		return &account{Account: a, source: source, refKind: refKind, cutoff: cutoff,
			balance: decimal.RequireFromString(opening)}
	}
	b.checking = mk("checking", chase, time.Minute, finance.Account{Name: "Chase Total Checking", Type: finance.AccountDepository,
		Subtype: "checking", Mask: "4417", Currency: "USD"}, finance.SourceBankSync, "plaid", "6840.12")
	b.savings = mk("savings", chase, 2*time.Minute, finance.Account{Name: "Chase Premier Savings", Nickname: "Rainy day fund",
		Type: finance.AccountDepository, Subtype: "savings", Mask: "9051", Currency: "USD"}, finance.SourceBankSync, "plaid", "12500.00")
	b.card = mk("credit-card", chase, 3*time.Minute, finance.Account{Name: "Chase Sapphire Preferred", Type: finance.AccountCredit,
		Subtype: "credit card", Mask: "1184", Currency: "USD"}, finance.SourceBankSync, "plaid", "0")
	b.brokerage = mk("brokerage", fidelity, time.Minute, finance.Account{Name: "Individual Brokerage", Type: finance.AccountInvestment,
		Subtype: "brokerage", Mask: "X72", Currency: "USD"}, finance.SourceBankSync, "mx", "48210.55")
	b.rewards = mk("rewards-card", fidelity, 2*time.Minute, finance.Account{Name: "Fidelity Rewards Visa Signature",
		Type: finance.AccountCredit, Subtype: "credit card", Mask: "2290", Currency: "USD",
		InstitutionName: "Elan Financial Services", InstitutionLogoURL: logoBase + "elan.png"},
		finance.SourceBankSync, "mx", "0")
	b.mortgage = mk("mortgage", manual, time.Minute, finance.Account{Name: "Home loan", Type: finance.AccountLoan,
		Subtype: "mortgage", Currency: "USD", InstitutionName: "Rocket Mortgage",
		InstitutionLogoURL: logoBase + "rocket-mortgage.png"}, finance.SourceManual, "", "-388450.00")
	b.euro = mk("eur-checking", manual, 2*time.Minute, finance.Account{Name: "N26 Girokonto", Nickname: "Berlin account",
		Type: finance.AccountDepository, Subtype: "checking", Mask: "3306", Currency: "EUR",
		InstitutionName: "N26", InstitutionLogoURL: logoBase + "n26.png"}, finance.SourceImport, "csv", "640.00")
	b.demo.AccountIDs = DemoAccounts{Checking: b.checking.ID, Savings: b.savings.ID, CreditCard: b.card.ID,
		RewardsCard: b.rewards.ID, Brokerage: b.brokerage.ID, Mortgage: b.mortgage.ID, EuroChecking: b.euro.ID}

	b.demo.ExcludedAccountID = b.brokerage.ID
	b.demo.ExcludedCategoryID = b.demo.CategoryIDs["Health"]
	at := b.user.CreatedAt.Add(time.Hour)
	b.grants = []finance.Grant{
		{ID: b.demo.GrantReadID, UserID: b.user.ID, CreatedAt: at},
		{ID: b.demo.GrantWriteID, UserID: b.user.ID, WritesEnabled: true, CreatedAt: at},
		{ID: b.demo.GrantRedactedID, UserID: b.user.ID, WritesEnabled: true,
			RedactedFields:      []string{finance.FieldTransactionLocation, finance.FieldConnectionInstitution},
			ExcludedAccountIDs:  []string{b.demo.ExcludedAccountID},
			ExcludedCategoryIDs: []string{b.demo.ExcludedCategoryID}, CreatedAt: at},
	}
}

// merchant is how a merchant appears: the cleaned name, the display name and
// the raw bank descriptor.
type merchant struct {
	name, display, descriptor string
	channel                   string
	lo, hi                    int64 // amount range in cents
	locations                 []finance.Location
}

func pdx(street, zip string) finance.Location {
	return finance.Location{Street: street, City: "Portland", State: "OR", PostalCode: zip, Country: "US"}
}

func berlin(street, zip string) finance.Location {
	return finance.Location{Street: street, City: "Berlin", PostalCode: zip, Country: "DE"}
}

var (
	groceries = []merchant{
		{"Trader Joe's", "Trader Joe's", "TRADER JOE S #145 PORTLAND OR", "in store", 2800, 11200,
			[]finance.Location{pdx("4715 SE Cesar E Chavez Blvd", "97202"), pdx("2122 NW Glisan St", "97210")}},
		{"Safeway", "Safeway", "SAFEWAY #1547 PORTLAND OR", "in store", 3400, 9800,
			[]finance.Location{pdx("2800 SE Hawthorne Blvd", "97214")}},
		{"Whole Foods Market", "Whole Foods", "WHOLEFDS PRL 10241 PORTLAND OR", "in store", 4500, 16800,
			[]finance.Location{pdx("1210 NW Couch St", "97209")}},
		{"Costco", "Costco", "COSTCO WHSE #0008 CLACKAMAS OR", "in store", 9000, 26500, nil},
		{"New Seasons Market", "New Seasons", "NEW SEASONS MARKET SELLWOOD", "in store", 2200, 8400,
			[]finance.Location{pdx("1214 SE Tacoma St", "97202")}},
	}
	restaurants = []merchant{
		{"Chipotle Mexican Grill", "Chipotle", "CHIPOTLE 1832 PORTLAND OR", "in store", 1150, 2890,
			[]finance.Location{pdx("1400 NE Broadway", "97232")}},
		{"Shake Shack", "Shake Shack", "SHAKE SHACK PORTLAND", "in store", 1480, 4200, nil},
		{"Lardo", "Lardo", "SQ *LARDO SE HAWTHORNE", "in store", 1600, 4700,
			[]finance.Location{pdx("1212 SE Hawthorne Blvd", "97214")}},
		{"Pine State Biscuits", "Pine State Biscuits", "PINE STATE BISCUITS", "in store", 1200, 3400, nil},
		{"Ava Gene's", "Ava Gene's", "AVA GENES PORTLAND OR", "in store", 6800, 18500,
			[]finance.Location{pdx("3377 SE Division St", "97202")}},
		{"DoorDash", "DoorDash", "DOORDASH*THAI PEACOCK", "online", 2400, 6200, nil},
	}
	coffee = []merchant{
		{"Starbucks", "Starbucks", "STARBUCKS STORE 05412 PORTLAND OR", "in store", 450, 1290,
			[]finance.Location{pdx("720 SW Broadway", "97205")}},
		{"Stumptown Coffee Roasters", "Stumptown", "STUMPTOWN COFFEE ROAST", "in store", 420, 1100,
			[]finance.Location{pdx("4525 SE Division St", "97206")}},
		{"Blue Star Donuts", "Blue Star Donuts", "BLUE STAR DONUTS MISSISSIPPI", "in store", 600, 1800, nil},
	}
	fuel = []merchant{
		{"Shell", "Shell", "SHELL OIL 57444215800 PORTLAND OR", "in store", 3500, 7200,
			[]finance.Location{pdx("3535 SE 82nd Ave", "97266")}},
		{"Chevron", "Chevron", "CHEVRON 0093521 BEAVERTON OR", "in store", 3800, 7400, nil},
		{"ARCO", "ARCO", "ARCO #82154 AMPM PORTLAND", "in store", 3000, 6500, nil},
	}
	rides = []merchant{
		{"Uber", "Uber", "UBER *TRIP HELP.UBER.COM", "online", 1100, 4600, nil},
		{"TriMet", "TriMet", "TRIMET HOP FASTPASS", "online", 500, 2500, nil},
	}
	shopping = []merchant{
		{"Amazon", "Amazon", "AMAZON.COM*2K4TR91Q3 AMZN.COM/BILL WA", "online", 1299, 8999, nil},
		{"Target", "Target", "TARGET 00027680 PORTLAND OR", "in store", 1850, 12400,
			[]finance.Location{pdx("939 SW Morrison St", "97205")}},
		{"REI", "REI", "REI #0011 PORTLAND OR", "in store", 2400, 21900, nil},
		{"Powell's Books", "Powell's", "POWELLS BURNSIDE", "in store", 1400, 6500,
			[]finance.Location{pdx("1005 W Burnside St", "97209")}},
	}
	pharmacy  = merchant{"Walgreens", "Walgreens", "WALGREENS #9925 PORTLAND OR", "in store", 900, 4800, nil}
	euroShops = []merchant{
		{"REWE", "REWE", "REWE Markt GmbH Berlin", "in store", 1200, 6400,
			[]finance.Location{berlin("Kastanienallee 12", "10435")}},
		{"Lidl", "Lidl", "LIDL SAGT DANKE", "in store", 800, 4200, nil},
		{"dm-drogerie markt", "dm", "DM-DROGERIE MARKT", "in store", 500, 2800, nil},
		{"Café Einstein Stammhaus", "Café Einstein", "CAFE EINSTEIN STAMMHAUS", "in store", 900, 3600,
			[]finance.Location{berlin("Kurfürstenstraße 58", "10785")}},
		{"Deutsche Bahn", "Deutsche Bahn", "DB VERTRIEB GMBH", "online", 2900, 12900, nil},
		{"BVG", "BVG", "BVG TICKETAUTOMAT", "in store", 320, 880, nil},
	}
)

func cents(lo, hi int64) func(*rand.Rand) decimal.Decimal {
	return func(r *rand.Rand) decimal.Decimal { return decimal.New(lo+r.Int64N(hi-lo+1), -2) }
}

func (b *builder) recurringRules() {
	type spec struct {
		key, merchant, display string
		acct                   *account
		category               string
		amount                 string
		freq, stream           string
		dayOfMonth             int
	}
	specs := []spec{
		{"salary", "Northwind Logistics", "Northwind Payroll", b.checking, "Paycheck", "3412.55", finance.FrequencySemiMonthly, recurring.StreamInflow, 15},
		{"mortgage", "Rocket Mortgage", "Mortgage payment", b.checking, "Mortgage & Rent", "-2145.67", finance.FrequencyMonthly, recurring.StreamOutflow, 1},
		{"electric", "Portland General Electric", "PGE electricity", b.checking, "Electricity", "-96.40", finance.FrequencyMonthly, recurring.StreamOutflow, 8},
		{"internet", "Xfinity", "Xfinity internet", b.checking, "Internet", "-79.99", finance.FrequencyMonthly, recurring.StreamOutflow, 12},
		{"phone", "Verizon Wireless", "Verizon", b.card, "Phone", "-85.42", finance.FrequencyMonthly, recurring.StreamOutflow, 18},
		{"netflix", "Netflix", "Netflix", b.card, "Streaming", "-15.49", finance.FrequencyMonthly, recurring.StreamOutflow, 5},
		{"spotify", "Spotify", "Spotify Premium", b.card, "Streaming", "-11.99", finance.FrequencyMonthly, recurring.StreamOutflow, 21},
		{"disney", "Disney+", "Disney+", b.card, "Streaming", "-13.99", finance.FrequencyMonthly, recurring.StreamOutflow, 9},
		{"gym", "24 Hour Fitness", "24 Hour Fitness", b.card, "Fitness", "-49.99", finance.FrequencyMonthly, recurring.StreamOutflow, 3},
	}
	for _, s := range specs {
		next := nextMonthly(b.today, s.dayOfMonth)
		last := next.AddDate(0, -1, 0)
		if s.freq == finance.FrequencySemiMonthly {
			next, last = nextSemiMonthly(b.today)
		}
		r := recurring.Rule{ID: b.id("rule/" + s.key), UserID: b.user.ID, AccountID: s.acct.ID,
			CategoryID: b.demo.CategoryIDs[s.category], Merchant: s.merchant, DisplayName: s.display,
			ExpectedAmount: finance.Money{Amount: decimal.RequireFromString(s.amount), Currency: "USD"},
			Frequency:      s.freq, StreamType: s.stream, NextExpectedDate: next, LastSeenDate: &last,
			LogoURL: logoBase + s.key + ".png", IsActive: true,
			CreatedAt: b.start.AddDate(0, 2, 0), UpdatedAt: b.now.Add(-2 * time.Hour)}
		b.rules = append(b.rules, r)
		b.ruleIDs[s.key] = r.ID
	}
}

// nextMonthly is the first date after today falling on day dom of a month.
func nextMonthly(today time.Time, dom int) time.Time {
	d := time.Date(today.Year(), today.Month(), dom, 0, 0, 0, 0, time.UTC)
	if !d.After(today) {
		d = d.AddDate(0, 1, 0)
	}
	return d
}

// nextSemiMonthly returns the next and the last payday (the 15th and the
// month's last day) around today.
func nextSemiMonthly(today time.Time) (next, last time.Time) {
	var days []time.Time
	for m := -1; m <= 1; m++ {
		first := time.Date(today.Year(), today.Month()+time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		days = append(days, first.AddDate(0, 0, 14), first.AddDate(0, 1, -1))
	}
	for i, d := range days {
		if d.After(today) {
			return d, days[i-1]
		}
	}
	return days[len(days)-1], days[len(days)-2]
}

func isPayday(d time.Time) bool {
	// The 15th and the month's last day, moved back to Friday on weekends.
	for _, p := range []time.Time{
		time.Date(d.Year(), d.Month(), 15, 0, 0, 0, 0, time.UTC),
		time.Date(d.Year(), d.Month()+1, 0, 0, 0, 0, 0, time.UTC),
	} {
		switch p.Weekday() {
		case time.Saturday:
			p = p.AddDate(0, 0, -1)
		case time.Sunday:
			p = p.AddDate(0, 0, -2)
		}
		if p.Equal(d) {
			return true
		}
	}
	return false
}

func (b *builder) chance(p float64) bool { return b.rng.Float64() < p }

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// day generates the rows of one date, in a fixed order so the random stream
// is consumed the same way every run: pay, the bills of the day of month,
// month-end interest, everyday spending, uncategorized rows, euro spending.
func (b *builder) day(d time.Time) {
	if isPayday(d) {
		b.payday(d)
	}
	b.monthlyBills(d)
	if d.Day() == d.AddDate(0, 1, -d.Day()).Day() {
		b.monthEnd(d)
	}
	b.everydaySpending(d)
	b.uncategorized(d)
	b.euroSpending(d)
}

// payday is the salary, raised a year in.
func (b *builder) payday(d time.Time) {
	pay := "3296.18"
	if monthsIn := int(d.Sub(b.start).Hours() / 24 / 30); monthsIn >= 12 {
		pay = "3412.55"
	}
	b.add(txSpec{acct: b.checking, date: d, amount: decimal.RequireFromString(pay),
		m: merchant{name: "Northwind Logistics", display: "Northwind Payroll",
			descriptor: "NORTHWIND LOGISTICS PAYROLL PPD ID: 9100458821", channel: "other"},
		category: "Paycheck", rule: "salary"})
}

// monthlyBills are the transfers and recurring bills due on d's day of
// the month.
func (b *builder) monthlyBills(d time.Time) {
	switch d.Day() {
	case 1:
		b.transfer(b.checking, b.mortgage, d, decimal.RequireFromString("2145.67"), "Rocket Mortgage",
			"Mortgage payment", "ROCKET MORTGAGE PAYMENT 2145.67", "Mortgage & Rent", "mortgage")
		interest := b.mortgage.balance.Abs().Mul(decimal.RequireFromString("0.0525")).Div(decimal.NewFromInt(12)).Round(2)
		b.add(txSpec{acct: b.mortgage, date: d, amount: interest.Neg(),
			m:        merchant{name: "Rocket Mortgage", display: "Mortgage interest", descriptor: "INTEREST CHARGED"},
			category: "Loan Interest"})
		b.transfer(b.checking, b.savings, d, decimal.RequireFromString("500.00"), "Chase",
			"Transfer to savings", "ONLINE TRANSFER TO SAV ...9051", "Savings & Investments", "")
	case 2:
		b.transfer(b.checking, b.brokerage, d, decimal.RequireFromString("750.00"), "Fidelity Investments",
			"Brokerage contribution", "FID BKG SVC LLC MONEYLINE", "Savings & Investments", "")
	case 3:
		b.recurring("gym", b.card, d, "-49.99", merchant{name: "24 Hour Fitness", display: "24 Hour Fitness",
			descriptor: "24 HOUR FITNESS USA INC", channel: "other"}, "Fitness")
		top := decimal.RequireFromString("300.00")
		b.add(txSpec{acct: b.euro, date: d, amount: top,
			m:        merchant{name: "Wise", display: "Top-up from Wise", descriptor: "WISE PAYMENTS LTD", channel: "other"},
			category: "Transfers"})
	case 5:
		b.recurring("netflix", b.card, d, "-15.49", merchant{name: "Netflix", display: "Netflix",
			descriptor: "NETFLIX.COM 866-579-7172 CA", channel: "online"}, "Streaming")
	case 8:
		kwh := 70 + 45*seasonal(d) + b.rng.Float64()*20
		b.recurring("electric", b.checking, d, fmt.Sprintf("-%.2f", kwh), merchant{name: "Portland General Electric",
			display: "PGE electricity", descriptor: "PORTLAND GENERAL E WEB PMT", channel: "online"}, "Electricity")
	case 9:
		b.recurring("disney", b.card, d, "-13.99", merchant{name: "Disney+", display: "Disney+",
			descriptor: "DISNEY PLUS 888-905-7888 CA", channel: "online"}, "Streaming")
	case 12:
		b.recurring("internet", b.checking, d, "-79.99", merchant{name: "Xfinity", display: "Xfinity internet",
			descriptor: "COMCAST XFINITY 800-266-2278", channel: "online"}, "Internet")
	case 16:
		b.transfer(b.checking, b.savings, d, decimal.RequireFromString("500.00"), "Chase",
			"Transfer to savings", "ONLINE TRANSFER TO SAV ...9051", "Savings & Investments", "")
	case 18:
		b.recurring("phone", b.card, d, "-85.42", merchant{name: "Verizon Wireless", display: "Verizon",
			descriptor: "VZWRLSS*APOCC VISB", channel: "online"}, "Phone")
	case 21:
		b.recurring("spotify", b.card, d, "-11.99", merchant{name: "Spotify", display: "Spotify Premium",
			descriptor: "SPOTIFY USA 877-7781161 NY", channel: "online"}, "Streaming")
	case 25:
		b.payCard(b.card, d, "Chase", "Payment Thank You", "CHASE CREDIT CRD AUTOPAY")
		b.payCard(b.rewards, d, "Elan Financial Services", "Rewards Visa payment", "ELAN FINANCIAL SVC ONLINE PMT")
	}
}

// monthEnd is the last day's savings interest and, each quarter, the
// brokerage dividend.
func (b *builder) monthEnd(d time.Time) {
	rate := decimal.RequireFromString("0.041")
	interest := b.savings.balance.Mul(rate).Div(decimal.NewFromInt(12)).Round(2)
	b.add(txSpec{acct: b.savings, date: d, amount: interest,
		m:        merchant{name: "Chase", display: "Interest paid", descriptor: "INTEREST PAYMENT", channel: "other"},
		category: "Interest"})
	if d.Month()%3 == 0 {
		div := b.brokerage.balance.Mul(decimal.RequireFromString("0.0036")).Round(2)
		b.add(txSpec{acct: b.brokerage, date: d, amount: div,
			m: merchant{name: "Vanguard Total Stock Market ETF", display: "VTI dividend",
				descriptor: "DIVIDEND RECEIVED VANGUARD TOTAL STOCK MKT ETF", channel: "other"},
			category: "Dividends"})
	}
}

// everydaySpending is the day's chance purchases: groceries, restaurants,
// coffee on weekdays, fuel, rides, shopping and the occasional larger buy.
func (b *builder) everydaySpending(d time.Time) {
	weekend := d.Weekday() == time.Saturday || d.Weekday() == time.Sunday
	if b.chance(2.0 / 7) {
		b.purchase(b.card, d, nil, pick(b.rng, groceries), "Groceries", false)
	}
	if b.chance(0.35) {
		b.purchase(b.card, d, nil, pick(b.rng, restaurants), "Restaurants", false)
	}
	if !weekend && b.chance(0.45) {
		b.purchase(b.card, d, nil, pick(b.rng, coffee), "Coffee Shops", false)
	}
	if b.chance(1.0 / 7) {
		b.purchase(b.card, d, nil, pick(b.rng, fuel), "Fuel", false)
	}
	if b.chance(0.06) {
		b.purchase(b.card, d, nil, pick(b.rng, rides), "Rideshare & Transit", false)
	}
	if b.chance(0.1) {
		acct := b.card
		if b.chance(0.3) {
			acct = b.rewards
		}
		b.purchase(acct, d, nil, pick(b.rng, shopping), "Shopping", false)
	}
	if b.chance(1.0 / 30) {
		b.purchase(b.checking, d, nil, pharmacy, "Pharmacy", false)
	}
	if b.chance(1.0 / 45) {
		b.purchase(b.rewards, d, cents(8900, 24900), merchant{name: "B&H Photo", display: "B&H Photo",
			descriptor: "B&H PHOTO 800-606-6969 NY", channel: "online"}, "Photography", false)
	}
	if d.Weekday() == time.Saturday && b.chance(0.4) {
		b.purchase(b.checking, d, cents(2500, 9500), merchant{name: "Portland Parks & Recreation", display: "Portland Parks & Rec",
			descriptor: "PORTLAND PARKS REC ACTIVENET", channel: "online"}, "Kids' Activities", false)
	}
	if b.chance(1.0 / 120) {
		b.purchase(b.rewards, d, cents(18900, 64900), merchant{name: "Alaska Airlines", display: "Alaska Airlines",
			descriptor: "ALASKA AIR 0272161038845", channel: "online"}, "Travel", false)
	}
}

// uncategorized are rows left without a category: peer payments and, on
// the 10th of the first month of each quarter, a paper check.
func (b *builder) uncategorized(d time.Time) {
	if b.chance(1.0 / 25) {
		b.add(txSpec{acct: b.checking, date: d, amount: cents(1500, 12000)(b.rng).Neg(),
			m: merchant{name: "Venmo", display: "Venmo", descriptor: "VENMO PAYMENT 1029384756", channel: "online"}})
	}
	if d.Day() == 10 && d.Month()%3 == 1 {
		b.add(txSpec{acct: b.checking, date: d, amount: decimal.RequireFromString("-240.00"),
			m:     merchant{name: "Check", display: "Check", descriptor: "CHECK", channel: "other"},
			check: fmt.Sprintf("%d", 1041+b.checkNo)})
		b.checkNo++
	}
}

// euroSpending is the EUR account: a few purchases a month while in Berlin.
func (b *builder) euroSpending(d time.Time) {
	if b.chance(0.15) {
		b.purchase(b.euro, d, nil, pick(b.rng, euroShops), "Shopping", false)
	}
}

// seasonal is 1 in midwinter and 0 in midsummer: electricity follows it.
func seasonal(d time.Time) float64 {
	m := int(d.Month())
	dist := min((m+12-1)%12, (1+12-m)%12) // months from January
	return 1 - float64(dist)/6
}

// txSpec is one row to generate.
type txSpec struct {
	acct     *account
	date     time.Time
	amount   decimal.Decimal
	m        merchant
	category string // category name; empty: uncategorized
	rule     string
	location *finance.Location
	check    string
	pending  bool
	pairID   string
	id       string
}

// add appends one row unless its account had not synced that far, and
// returns its id ("" when skipped).
func (b *builder) add(s txSpec) string {
	a := s.acct
	if s.date.After(a.cutoff) {
		return ""
	}
	if s.id == "" {
		s.id = b.nextID()
	}
	amount := s.amount
	t := finance.Transaction{
		ID: s.id, UserID: b.user.ID, AccountID: a.ID, CategoryID: b.demo.CategoryIDs[s.category],
		Amount: finance.Money{Amount: amount, Currency: a.Currency}, Merchant: s.m.name, DisplayName: s.m.display,
		Description: s.m.descriptor, Date: s.date, Source: a.source, PaymentChannel: s.m.channel,
		TransferPairID: s.pairID, RecurringRuleID: b.ruleIDs[s.rule], CheckNumber: s.check,
		Location: s.location, Version: 1,
	}
	created := s.date.Add(18*time.Hour + time.Duration(b.rng.IntN(300))*time.Minute)
	switch a.source {
	case finance.SourceBankSync:
		t.ExternalRef = b.externalRef(a.refKind)
		posted := s.date.Add(34 * time.Hour)
		if s.pending || posted.After(b.now) {
			t.IsPending = true
		} else {
			t.PostedAt = &posted
		}
	case finance.SourceImport:
		// Imported from the monthly statement CSV a few days after month end.
		created = time.Date(s.date.Year(), s.date.Month()+1, 4, 9, 30, 0, 0, time.UTC)
		t.ExternalRef = fmt.Sprintf("n26-%s.csv#%d", s.date.Format("2006-01"), b.seq)
	}
	if created.After(b.now) {
		created = b.now
	}
	t.CreatedAt, t.UpdatedAt = created, created
	if t.PostedAt != nil && t.PostedAt.After(created) {
		t.UpdatedAt = *t.PostedAt
	}
	b.txs = append(b.txs, t)
	a.balance = a.balance.Add(amount)
	return t.ID
}

func (b *builder) nextID() string {
	b.seq++
	return b.id(fmt.Sprintf("tx/%d", b.seq))
}

func (b *builder) externalRef(kind string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	n := 37
	prefix := ""
	if kind == "mx" {
		n, prefix = 16, "TRN-"
	}
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = alphabet[b.rng.IntN(len(alphabet))]
	}
	return prefix + string(buf)
}

// purchase adds a card or debit purchase at m, with a location for some
// in-store ones.
func (b *builder) purchase(a *account, d time.Time, amount func(*rand.Rand) decimal.Decimal, m merchant, category string, pending bool) {
	if amount == nil {
		amount = cents(m.lo, m.hi)
	}
	v := amount(b.rng)
	var loc *finance.Location
	if len(m.locations) > 0 && b.chance(0.7) {
		l := pick(b.rng, m.locations)
		loc = &l
	}
	b.add(txSpec{acct: a, date: d, amount: v.Neg(), m: m, category: category, location: loc, pending: pending})
}

func (b *builder) recurring(rule string, a *account, d time.Time, amount string, m merchant, category string) {
	b.add(txSpec{acct: a, date: d, amount: decimal.RequireFromString(amount), m: m, category: category, rule: rule})
}

// transfer moves amount from one account to another as two rows that name
// each other, unless one side has not synced that far.
func (b *builder) transfer(from, to *account, d time.Time, amount decimal.Decimal, name, display, descriptor, category, rule string) {
	outID, inID := b.nextID(), b.nextID()
	pair := !d.After(from.cutoff) && !d.After(to.cutoff)
	m := merchant{name: name, display: display, descriptor: descriptor, channel: "other"}
	out := txSpec{acct: from, date: d, amount: amount.Neg(), m: m, category: category, rule: rule, id: outID}
	in := txSpec{acct: to, date: d, amount: amount, m: m, category: category, id: inID}
	if pair {
		out.pairID, in.pairID = inID, outID
	}
	b.add(out)
	b.add(in)
}

// payCard pays a card's statement balance from checking.
func (b *builder) payCard(card *account, d time.Time, name, display, descriptor string) {
	owed := card.balance.Neg()
	if !owed.IsPositive() {
		return
	}
	b.transfer(b.checking, card, d, owed, name, display, descriptor, "Credit Card Payment", "")
}

// userEdits marks a few rows as edited by the user, as a PATCH would leave
// them: the bank value captured in provider_*, the field owned by the user,
// the version bumped.
func (b *builder) userEdits() {
	edited := 0
	for i := range b.txs {
		t := &b.txs[i]
		if t.Source != finance.SourceBankSync || t.IsPending || t.TransferPairID != "" || b.rng.IntN(60) != 0 {
			continue
		}
		at := t.UpdatedAt.Add(time.Duration(1+b.rng.IntN(72)) * time.Hour)
		if at.After(b.now) {
			continue
		}
		switch edited % 3 {
		case 0: // renamed
			t.ProviderMerchantName = ptr(t.Merchant)
			t.Merchant = t.Merchant + " (" + pick(b.rng, []string{"work lunch", "gift", "shared"}) + ")"
			t.OwnedByUser = []string{"merchant"}
		case 1: // memo added; the bank had none
			t.ProviderMemo = ptr("")
			t.Memo = pick(b.rng, []string{"split with Sam", "reimbursable", "birthday dinner", "return pending"})
			t.OwnedByUser = []string{"memo"}
		case 2: // tagged and re-dated to when it really happened
			if !t.Date.After(b.start) {
				continue
			}
			t.ProviderTransactionDate = ptr(t.Date)
			t.Date = t.Date.AddDate(0, 0, -1)
			t.Tags = []string{"vacation"}
			t.OwnedByUser = []string{"date"}
		}
		t.Version = 2
		t.UpdatedAt = at
		edited++
	}
}

func ptr[T any](v T) *T { return &v }

// settle sets a's balances from its running balance and rows: the current
// balance counts posted rows, pending ones only reduce what is available;
// a card's and a loan's balance is what is owed, and a card's available
// balance is what its limit leaves.
func (a *account) settle(txs []finance.Transaction, creditLimit decimal.Decimal) {
	var pending decimal.Decimal
	for _, t := range txs {
		if t.AccountID == a.ID && t.IsPending {
			pending = pending.Add(t.Amount.Amount)
		}
	}
	posted := a.balance.Sub(pending)
	switch a.Type {
	case finance.AccountDepository:
		a.Balance = finance.Money{Amount: posted, Currency: a.Currency}
		a.AvailableBalance = &finance.Money{Amount: a.balance, Currency: a.Currency}
	case finance.AccountCredit:
		a.Balance = finance.Money{Amount: posted.Neg(), Currency: a.Currency} // owed
		a.AvailableBalance = &finance.Money{Amount: creditLimit.Add(a.balance), Currency: a.Currency}
	case finance.AccountLoan:
		a.Balance = finance.Money{Amount: posted.Neg(), Currency: a.Currency} // owed
	default:
		a.Balance = finance.Money{Amount: posted, Currency: a.Currency}
	}
}

func (b *builder) finishAccounts() {
	asOf := func(a *account) *time.Time {
		conn := b.connections[slices.IndexFunc(b.connections, func(c finance.Connection) bool { return c.ID == a.ConnectionID })]
		if conn.LastSyncedAt != nil {
			return conn.LastSyncedAt
		}
		return &b.now
	}
	for _, a := range append([]*account{b.checking, b.savings, b.card, b.rewards, b.brokerage, b.mortgage, b.euro}, b.debt.loans...) {
		limit := decimal.RequireFromString("15000.00")
		if a == b.rewards {
			limit = decimal.RequireFromString("8000.00")
		}
		a.settle(b.txs, limit)
		a.BalanceAsOf = asOf(a)
		a.UpdatedAt = *a.BalanceAsOf
	}
	// Market growth on the brokerage: a fixed 7% over the cash that went in.
	b.brokerage.Balance.Amount = b.brokerage.Balance.Amount.Mul(decimal.RequireFromString("1.07")).Round(2)
}

func (b *builder) write(ctx context.Context, s Store) error {
	if err := s.CreateUser(ctx, b.user); err != nil {
		return fmt.Errorf("seed: user: %w", err)
	}
	for _, g := range b.grants {
		if err := s.CreateGrant(ctx, g); err != nil {
			return fmt.Errorf("seed: grant: %w", err)
		}
	}
	for _, c := range b.connections {
		if err := s.CreateConnection(ctx, c); err != nil {
			return fmt.Errorf("seed: connection: %w", err)
		}
	}
	for _, a := range append([]*account{b.checking, b.savings, b.card, b.brokerage, b.rewards, b.mortgage, b.euro}, b.debt.loans...) {
		if err := s.CreateAccount(ctx, a.Account); err != nil {
			return fmt.Errorf("seed: account: %w", err)
		}
	}
	// Parents before subcategories, for the foreign key.
	cats := slices.Clone(b.categories)
	slices.SortStableFunc(cats, func(x, y finance.Category) int {
		return cmp.Compare(len(x.ParentID), len(y.ParentID))
	})
	for _, c := range cats {
		err := s.CreateCategory(ctx, c)
		if c.IsSystem() && errors.Is(err, finance.ErrAlreadyExists) {
			continue // written by an earlier demo: shared, with the same id
		}
		if err != nil {
			return fmt.Errorf("seed: category %s: %w", c.Name, err)
		}
	}
	for _, r := range b.rules {
		if err := s.CreateRecurringRule(ctx, r); err != nil {
			return fmt.Errorf("seed: recurring rule: %w", err)
		}
	}
	if err := s.InsertTransactions(ctx, b.txs); err != nil {
		return fmt.Errorf("seed: transactions: %w", err)
	}
	if err := b.writeDebts(ctx, s); err != nil {
		return err
	}
	if err := b.writeHoldings(ctx, s); err != nil { // holding.go
		return err
	}
	return b.writeBudgets(ctx, s)
}
