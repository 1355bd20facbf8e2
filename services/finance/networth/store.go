package networth

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Store is what net worth reads and keeps: the holdings and the price
// table, the FX rates and the daily snapshots it owns, and the kernel's
// accounts it reads (implemented by the finance memory and postgres
// stores; conformance/holding.go and conformance/networth.go check it).
type Store interface {
	// Holdings and the price table.
	CreateHolding(ctx context.Context, h Holding) error
	// ListHoldings returns up to limit of the user's holdings matching f
	// with an id above afterID ("" from the start), by id.
	ListHoldings(ctx context.Context, userID string, f HoldingFilter, afterID string, limit int) ([]Holding, error)
	// PutSecurityPrices creates or replaces prices by (ticker, currency,
	// date), all or none.
	PutSecurityPrices(ctx context.Context, ps []SecurityPrice) error
	// RecentSecurityPrices returns, for each (ticker, currency) with a
	// ticker in tickers, its two latest prices dated on or before day,
	// newest first, in no particular order across tickers.
	RecentSecurityPrices(ctx context.Context, tickers []string, day time.Time) ([]SecurityPrice, error)

	// FX rates and net-worth snapshots.
	// PutFXRates creates or replaces rates by (currency, date), all or none.
	PutFXRates(ctx context.Context, rs []FXRate) error
	// FXRatesUpTo returns every rate dated on or before day, of the given
	// currencies, by currency then date.
	FXRatesUpTo(ctx context.Context, currencies []string, day time.Time) ([]FXRate, error)
	// PutNetWorthSnapshot stores the snapshot unless the user already has
	// one for that date (first writer wins; no error then). It reports
	// whether it stored it.
	PutNetWorthSnapshot(ctx context.Context, s NetWorthSnapshot) (bool, error)
	// ListNetWorthSnapshots returns the user's snapshots dated from..to
	// (both inclusive; a zero from means from the first), by date.
	ListNetWorthSnapshots(ctx context.Context, userID string, from, to time.Time) ([]NetWorthSnapshot, error)

	// The daily snapshot job.
	// UsersWithoutSnapshot returns up to limit ids of users, above after in
	// id order, who have no net-worth snapshot dated day.
	UsersWithoutSnapshot(ctx context.Context, day time.Time, after string, limit int) ([]string, error)

	// The history's walk back (history.go).
	// BalanceFlows returns the net of the user's posted rows dated after
	// after, per account, currency and date, split slices left out (their
	// parent carries the amount), in no particular order.
	BalanceFlows(ctx context.Context, userID string, after time.Time) ([]BalanceFlow, error)
	// FirstPostedDay is the date of the user's oldest posted row that is
	// not a split slice; nil when there is none.
	FirstPostedDay(ctx context.Context, userID string) (*time.Time, error)

	ListAccounts(ctx context.Context, userID string) ([]finance.Account, error)
}
