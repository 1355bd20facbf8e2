package budgets

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/ledgerlane/platform/services/finance"
)

// The anomaly rule needs medians of six months of spends, which no running
// total gives, and reading those rows costs far more than the rest of a
// progress read (about 50,000 rows for a user with a million). A period's
// look-back is in the past, so its baseline rarely changes: it is cached
// per user, grant scope, currency and look-back, and kept while the
// store's FlowVersion of the look-back is unchanged (any write of a row
// dated in it changes that). Per replica; a miss only costs the read.

// maxBaselines bounds the cache; when full it starts over.
const maxBaselines = 4096

type baselineEntry struct {
	version string
	base    AnomalyBaseline
}

type baselineCache struct {
	mu      sync.Mutex
	entries map[string]baselineEntry
}

func (c *baselineCache) get(key, version string) (AnomalyBaseline, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.version != version {
		return AnomalyBaseline{}, false
	}
	return e.base, true
}

func (c *baselineCache) put(key, version string, b AnomalyBaseline) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxBaselines {
		c.entries = map[string]baselineEntry{}
	}
	c.entries[key] = baselineEntry{version: version, base: b}
}

// anomalyBaseline is the baseline of the AnomalyLookbackMonths before
// period p, under the caller's grant, for a budget in currency.
func (s *Service) anomalyBaseline(ctx context.Context, c finance.Caller, sc finance.Scope, currency string, p Period) (AnomalyBaseline, error) {
	from, to := p.Start.AddDate(0, -AnomalyLookbackMonths, 0), p.Start.AddDate(0, 0, -1)
	version, err := s.store.FlowVersion(ctx, c.UserID, from, to)
	if err != nil {
		return AnomalyBaseline{}, finance.Internal("flow version", err)
	}
	acc, cat := slices.Clone(sc.ExcludedAccounts()), slices.Clone(sc.ExcludedCategories())
	slices.Sort(acc)
	slices.Sort(cat)
	key := strings.Join([]string{c.UserID, currency, finance.Day(from).Format("2006-01-02"), strings.Join(acc, ","),
		strings.Join(cat, ",")}, "|")
	if b, ok := s.baselines.get(key, version); ok {
		return b, nil
	}
	rows, err := s.store.ListBudgetRows(ctx, c.UserID, finance.TransactionFilter{ExcludeAccountIDs: sc.ExcludedAccounts(),
		ExcludeCategoryIDs: sc.ExcludedCategories(), StartDate: from, EndDate: to})
	if err != nil {
		return AnomalyBaseline{}, finance.Internal("list budget rows", err)
	}
	b := BuildAnomalyBaseline(currency, rows)
	s.baselines.put(key, version, b)
	return b, nil
}
