// Package sandbox is a pretend bank aggregator for the local stack. On each
// tick it makes new transactions on the demo user's bank-synced accounts and
// on every connection linked through the finance sandbox (finance/sandboxlink,
// read from its LinkedSource each tick),
// moves earlier ones along (pending to posted, merchant names cleaned up
// and enriched, card holds withdrawn) and pushes every change through the
// finance service's bank sync, as a real aggregator's webhook would.
//
// It is deterministic: amounts and merchants follow a sequence, dates and
// times come from the injected clock, so a test can drive it with SyncNow
// and know what each sync does.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/seed"
)

// Syncer is the finance service's bank sync, as the aggregator uses it.
type Syncer interface {
	UpsertProviderTransactions(ctx context.Context, connectionID string, txs []banksync.ProviderTransaction) (banksync.SyncResult, error)
	RecordSyncError(ctx context.Context, connectionID, code, message string) error
}

// PriceRecorder is the finance price table (networth.Service), as the
// aggregator fills it: the demo securities' closing prices once a day (on
// the first sync of each date).
type PriceRecorder interface {
	RecordSecurityPrices(ctx context.Context, ps []networth.SecurityPrice) error
}

// RateRecorder is the finance FX rate table (networth.Service): the demo
// rates once a day, with the prices.
type RateRecorder interface {
	RecordFXRates(ctx context.Context, rs []networth.FXRate) error
}

// Markets is what the aggregator records prices and rates into: the
// networth service.
type Markets interface {
	PriceRecorder
	RateRecorder
}

// Account is an account the aggregator makes transactions on.
type Account struct {
	ID       string
	Currency string
}

// Connection is one connection the aggregator syncs.
type Connection struct {
	ID       string
	Accounts []Account
	// FailWith, when set, makes every sync of the connection fail with
	// this error code (e.g. login_required), recorded on the connection.
	FailWith    string
	FailMessage string
}

// ForDemo returns the demo user's synced connections: Chase, whose
// checking account and card get activity, and Fidelity, which keeps
// failing because it needs a new login.
func ForDemo(d seed.DemoData) []Connection {
	return []Connection{
		{ID: d.ConnectionIDs.Chase, Accounts: []Account{{d.AccountIDs.Checking, "USD"}, {d.AccountIDs.CreditCard, "USD"}}},
		{ID: d.ConnectionIDs.Fidelity, FailWith: finance.ConnectionLoginRequired,
			FailMessage: "Fidelity needs you to sign in again to keep syncing."},
	}
}

// merchant is one merchant as a bank shows it over time: the raw card
// descriptor while pending, a cleaned name once posted, and the full
// enriched name a tick later.
type merchant struct {
	raw, clean, full string
	channel          string
	minCents, span   int64
}

var merchants = []merchant{
	{"SQ *BLUE BOTTLE COFFE", "Blue Bottle", "Blue Bottle Coffee", "in store", 450, 900},
	{"AMZN MKTP US*2K4LQ81", "Amazon", "Amazon Marketplace", "online", 1299, 8000},
	{"TST* TARTINE BAKERY", "Tartine", "Tartine Bakery", "in store", 800, 3000},
	{"UBER *TRIP HELP.UBER.CO", "Uber", "Uber Rides", "online", 900, 4000},
	{"WHOLEFDS MKT 10234", "Whole Foods", "Whole Foods Market", "in store", 2500, 12000},
}

// hold is a fuel pre-authorisation: it shows up pending and is withdrawn
// on the next tick, as card holds are.
var hold = merchant{"SHELL OIL 57444 PREAUTH", "Shell", "Shell", "in store", 10000, 1}

// HoldEvery makes every HoldEvery-th new transaction a hold.
const HoldEvery = 3

// NewPerTick is how many transactions each healthy connection gets a tick.
const NewPerTick = 2

// upstream is a transaction the aggregator still moves along.
type upstream struct {
	conn string
	tx   banksync.ProviderTransaction
	m    merchant
	age  int // ticks since it appeared
	hold bool
}

// Report says what one SyncNow did.
type Report struct {
	Created []Created
	Posted  []string // provider transaction ids
	Updated []string
	Removed []string
	Failed  []string // connection ids whose sync failed
	Results map[string]banksync.SyncResult
}

// Created is one new transaction.
type Created struct {
	ConnectionID, AccountID, ProviderTransactionID, Merchant string
	Hold                                                     bool
}

// LinkedSource lists the connections linked through the finance sandbox,
// read again on every tick (finance/sandboxlink's LinkedConnections, which
// the wiring adapts).
type LinkedSource func(ctx context.Context) ([]Connection, error)

// Aggregator is the sandbox aggregator. It is safe for concurrent use; syncs
// run one at a time.
type Aggregator struct {
	sink    Syncer
	markets Markets // nil: no prices or rates
	conns   []Connection
	linked  LinkedSource // nil: none
	now     func() time.Time
	log     *slog.Logger

	// run stamps provider ids, so a restarted aggregator over a kept
	// database never reuses the id of an earlier run's transaction.
	run  int64
	mu   sync.Mutex
	seq  int
	live []*upstream
	// priced is the last date whose prices were recorded.
	priced time.Time
}

// New returns an aggregator pushing transactions to sink for conns and,
// when linked is not nil, the sandbox's linked connections, and, when
// markets is not nil, the demo's daily prices and rates to markets. A nil
// clock is time.Now.
func New(sink Syncer, markets Markets, conns []Connection, linked LinkedSource, clock func() time.Time, log *slog.Logger) *Aggregator {
	if clock == nil {
		clock = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Aggregator{sink: sink, markets: markets, conns: conns, linked: linked, now: clock, log: log, run: clock().Unix()}
}

// Run syncs every interval, the first after one interval, until ctx ends.
func (a *Aggregator) Run(ctx context.Context, every time.Duration) {
	periodic.Task{Name: "sandbox sync failed", Every: every, Log: a.log, Run: func(ctx context.Context) error {
		_, err := a.SyncNow(ctx)
		return err
	}}.Loop(ctx)
}

// SyncNow runs one tick: it moves earlier transactions along, makes new
// ones and pushes each connection's changes. A failing connection records
// its error and the others still sync; the error returned joins what went
// wrong unexpectedly.
func (a *Aggregator) SyncNow(ctx context.Context) (Report, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now().UTC()
	rep := Report{Results: map[string]banksync.SyncResult{}}
	var errs []error
	if a.markets != nil && !finance.Day(now).Equal(a.priced) {
		err := a.markets.RecordSecurityPrices(ctx, seed.DemoPrices(now))
		if err == nil {
			err = a.markets.RecordFXRates(ctx, seed.DemoFXRates(now))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("record prices: %w", err))
		} else {
			a.priced = finance.Day(now)
		}
	}
	conns := a.conns
	if a.linked != nil {
		linked, err := a.linked(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("list linked connections: %w", err))
		}
		conns = append(slices.Clone(conns), linked...)
	}
	for _, conn := range conns {
		if conn.FailWith != "" {
			rep.Failed = append(rep.Failed, conn.ID)
			if err := a.sink.RecordSyncError(ctx, conn.ID, conn.FailWith, conn.FailMessage); err != nil {
				errs = append(errs, fmt.Errorf("record error of %s: %w", conn.ID, err))
			}
			continue
		}
		if len(conn.Accounts) == 0 {
			continue
		}
		batch := a.advance(conn.ID, now, &rep)
		for range NewPerTick {
			batch = append(batch, a.create(conn, now, &rep))
		}
		res, err := a.sink.UpsertProviderTransactions(ctx, conn.ID, batch)
		if err != nil {
			rep.Failed = append(rep.Failed, conn.ID)
			errs = append(errs, fmt.Errorf("sync %s: %w", conn.ID, err))
			continue
		}
		rep.Results[conn.ID] = res
	}
	return rep, joinErrs(errs)
}

// advance ages the connection's live transactions and returns the ones
// that changed upstream.
func (a *Aggregator) advance(connID string, now time.Time, rep *Report) []banksync.ProviderTransaction {
	var batch []banksync.ProviderTransaction
	for _, u := range a.live {
		if u.conn != connID {
			continue
		}
		u.age++
		switch {
		case u.hold:
			u.tx.Removed = true
			rep.Removed = append(rep.Removed, u.tx.ProviderTransactionID)
		case u.age == 1:
			posted := now
			u.tx.IsPending, u.tx.PostedAt, u.tx.MerchantName = false, &posted, u.m.clean
			rep.Posted = append(rep.Posted, u.tx.ProviderTransactionID)
		case u.age == 2:
			u.tx.MerchantName = u.m.full
			rep.Updated = append(rep.Updated, u.tx.ProviderTransactionID)
		}
		batch = append(batch, u.tx)
	}
	// Settled and withdrawn rows are no longer sent.
	a.live = slices.DeleteFunc(a.live, func(u *upstream) bool {
		return u.conn == connID && (u.hold || u.age >= 2)
	})
	return batch
}

func (a *Aggregator) create(conn Connection, now time.Time, rep *Report) banksync.ProviderTransaction {
	a.seq++
	n := a.seq
	acct := conn.Accounts[n%len(conn.Accounts)]
	isHold := n%HoldEvery == 0
	m := merchants[n%len(merchants)]
	if isHold {
		m = hold
	}
	cents := m.minCents + int64(n*37)%m.span
	tx := banksync.ProviderTransaction{
		ProviderTransactionID: fmt.Sprintf("sbx_%d_%06d", a.run, n),
		AccountID:             acct.ID,
		Amount:                fmt.Sprintf("-%d.%02d", cents/100, cents%100),
		Currency:              acct.Currency,
		MerchantName:          m.raw,
		Date:                  finance.Day(now).Format(finance.DateLayout),
		Description:           m.raw,
		IsPending:             true,
		PaymentChannel:        m.channel,
	}
	a.live = append(a.live, &upstream{conn: conn.ID, tx: tx, m: m, hold: isHold})
	rep.Created = append(rep.Created, Created{ConnectionID: conn.ID, AccountID: acct.ID,
		ProviderTransactionID: tx.ProviderTransactionID, Merchant: m.raw, Hold: isHold})
	return tx
}

func joinErrs(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("sandbox: %w", errors.Join(errs...))
}
