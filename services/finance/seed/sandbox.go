package seed

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

// SandboxHistoryDays is how far back a sandbox link's history goes: about
// two months, ending today.
const SandboxHistoryDays = 60

// SandboxHistory makes what a finance sandbox link to in writes besides its
// connection (sandboxlink.HistoryFunc): the institution's accounts and
// SandboxHistoryDays of bank-synced rows up to now, with the system
// categories they name. The amounts, merchants and dates depend only on the
// institution and now, so every link to one institution on one day gets the
// same history (as Plaid's sandbox items do) and a test can compute what to
// expect; every id derives from the connection's, so links never collide.
// The newest rows are pending, as a bank shows them.
func SandboxHistory(in sandboxlink.Institution, conn finance.Connection, now time.Time) sandboxlink.History {
	now = now.UTC().Truncate(time.Microsecond)
	h := fnv.New64a()
	_, _ = h.Write([]byte(in.ID))
	g := &sandboxGen{
		ns:    uuid.NewSHA1(namespace, []byte("sandbox/"+conn.ID)),
		rng:   rand.New(rand.NewPCG(h.Sum64(), 20240917)),
		conn:  conn,
		now:   now,
		today: finance.Day(now),
	}
	g.start = g.today.AddDate(0, 0, -(SandboxHistoryDays - 1))
	g.accounts(in)
	for d := g.start; !d.After(g.today); d = d.AddDate(0, 0, 1) {
		g.day(d)
	}
	g.finish()
	out := sandboxlink.History{Categories: systemCategoryRows(g.start), Transactions: g.txs}
	for _, a := range g.accts {
		out.Accounts = append(out.Accounts, a.Account)
	}
	return out
}

type sandboxGen struct {
	ns                     uuid.UUID
	rng                    *rand.Rand
	conn                   finance.Connection
	now, today, start      time.Time
	accts                  []*account
	checking, savings, crd *account
	txs                    []finance.Transaction
	seq                    int
}

func (g *sandboxGen) id(name string) string { return uuid.NewSHA1(g.ns, []byte(name)).String() }

func (g *sandboxGen) accounts(in sandboxlink.Institution) {
	for i, spec := range in.Accounts {
		a := &account{Account: finance.Account{ID: g.id("account/" + spec.Key), UserID: g.conn.UserID, ConnectionID: g.conn.ID,
			Name: spec.Name, Type: spec.Type, Subtype: spec.Subtype, Mask: spec.Mask, Currency: spec.Currency,
			Provider: g.conn.Provider, CreatedAt: g.conn.CreatedAt.Add(time.Duration(i+1) * time.Millisecond)},
			source: finance.SourceBankSync, cutoff: g.today, balance: decimal.RequireFromString(spec.Opening)}
		g.accts = append(g.accts, a)
		switch {
		case spec.Type == finance.AccountCredit && g.crd == nil:
			g.crd = a
		case spec.Subtype == "checking" && g.checking == nil:
			g.checking = a
		case spec.Subtype == "savings" && g.savings == nil:
			g.savings = a
		}
	}
}

// day is one date's rows, in a fixed order so the random stream is read
// the same way every run: pay and bills by day of month, then everyday
// purchases on the card (or on checking when there is no card).
func (g *sandboxGen) day(d time.Time) {
	if g.checking != nil {
		switch d.Day() {
		case 1:
			g.add(g.checking, d, "-1650.00", merchant{name: "Maple Street Apartments", display: "Rent",
				descriptor: "MAPLE ST APTS RENT ACH", channel: "other"}, "Mortgage & Rent")
			g.add(g.checking, d, "2450.00", payroll, "Paycheck")
		case 15:
			g.add(g.checking, d, "2450.00", payroll, "Paycheck")
		case 6:
			g.add(g.checking, d, cents(6000, 14000)(g.rng).Neg().String(), merchant{name: "Portland General Electric",
				display: "PGE electricity", descriptor: "PORTLAND GENERAL E WEB PMT", channel: "online"}, "Electricity")
		case 12:
			g.add(g.checking, d, "-65.00", merchant{name: "Xfinity", display: "Xfinity internet",
				descriptor: "COMCAST XFINITY 800-266-2278", channel: "online"}, "Internet")
		case 20:
			if g.savings != nil {
				g.transfer(g.checking, g.savings, d, decimal.RequireFromString("300.00"), "Transfer to savings",
					"ONLINE TRANSFER TO SAV", "Savings & Investments")
			}
		case 24:
			if g.crd != nil && g.crd.balance.IsNegative() {
				g.transfer(g.checking, g.crd, d, g.crd.balance.Neg(), "Card payment", "CARD AUTOPAY THANK YOU", "Credit Card Payment")
			}
		}
	}
	spend := g.crd
	if spend == nil {
		spend = g.checking
	}
	if spend == nil {
		return
	}
	coffeeChance := 0.4
	if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
		coffeeChance = 0 // a weekday habit
	}
	for _, p := range []struct {
		chance   float64
		group    []merchant
		category string
	}{
		{2.0 / 7, groceries, "Groceries"},
		{0.3, restaurants, "Restaurants"},
		{coffeeChance, coffee, "Coffee Shops"},
		{1.0 / 7, fuel, "Fuel"},
		{0.1, shopping, "Shopping"},
	} {
		if g.rng.Float64() < p.chance {
			m := pick(g.rng, p.group)
			g.add(spend, d, cents(m.lo, m.hi)(g.rng).Neg().String(), m, p.category)
		}
	}
}

var payroll = merchant{name: "Brightwater Labs", display: "Brightwater payroll",
	descriptor: "BRIGHTWATER LABS PAYROLL PPD", channel: "other"}

// add appends one row; a row whose posting time is still ahead is pending.
func (g *sandboxGen) add(a *account, d time.Time, amount string, m merchant, category string) string {
	return g.addRow(a, d, decimal.RequireFromString(amount), m, category, "")
}

func (g *sandboxGen) addRow(a *account, d time.Time, amount decimal.Decimal, m merchant, category, pairID string) string {
	g.seq++
	t := finance.Transaction{ID: g.id(fmt.Sprintf("tx/%d", g.seq)), UserID: g.conn.UserID, AccountID: a.ID,
		CategoryID: id("category/" + category), Amount: finance.Money{Amount: amount, Currency: a.Currency},
		Merchant: m.name, DisplayName: m.display, Description: m.descriptor, Date: d, Source: finance.SourceBankSync,
		PaymentChannel: m.channel, TransferPairID: pairID, ExternalRef: fmt.Sprintf("sbxh_%06d", g.seq), Version: 1}
	created := d.Add(18 * time.Hour)
	if posted := d.Add(34 * time.Hour); posted.After(g.now) {
		t.IsPending = true
	} else {
		t.PostedAt = &posted
	}
	if created.After(g.now) {
		created = g.now
	}
	t.CreatedAt, t.UpdatedAt = created, created
	if t.PostedAt != nil {
		t.UpdatedAt = *t.PostedAt
	}
	g.txs = append(g.txs, t)
	a.balance = a.balance.Add(amount)
	return t.ID
}

// transfer moves amount between two of the connection's accounts as two rows
// naming each other.
func (g *sandboxGen) transfer(from, to *account, d time.Time, amount decimal.Decimal, display, descriptor, category string) {
	m := merchant{name: g.conn.Institution, display: display, descriptor: descriptor, channel: "other"}
	// addRow names its row after the next sequence number: the two ids are
	// known before either row is made.
	outID := g.id(fmt.Sprintf("tx/%d", g.seq+1))
	inID := g.id(fmt.Sprintf("tx/%d", g.seq+2))
	g.addRow(from, d, amount.Neg(), m, category, inID)
	g.addRow(to, d, amount, m, category, outID)
}

// finish sets balances from the rows, as the demo's accounts get theirs.
func (g *sandboxGen) finish() {
	for _, a := range g.accts {
		a.settle(g.txs, decimal.RequireFromString("5000.00"))
		asOf := g.now
		a.BalanceAsOf, a.UpdatedAt = &asOf, g.now
	}
}
