package finance

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// MonthFlow is the net of a set of a user's rows in one calendar month and
// currency, and the latest date of a positive row among them.
type MonthFlow struct {
	Month      time.Time // the 1st, UTC
	Currency   string
	Net        decimal.Decimal
	LastInflow *time.Time
}

// FlowStore aggregates rows in the store, so a goal's account-driven
// contributions read a dozen sums instead of a year of rows (embedded in
// Store).
type FlowStore interface {
	// MonthlyFlows sums the user's rows matching f per calendar month and
	// currency, by month then currency.
	MonthlyFlows(ctx context.Context, userID string, f TransactionFilter) ([]MonthFlow, error)
}
