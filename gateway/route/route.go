// Package route is the edge's single table of public routes: for each method and
// path pattern, which surface serves it, which scope it needs, how large its
// body may be and whether it is metered. Authentication, scope checks, body
// limits, 404 and 405 are all decided from this table; proto/http.yaml binds the
// same routes to gRPC methods, and a test keeps the two identical.
package route

import (
	"net/http"
	"sort"
	"strings"
)

// Surface says which credentials may call a route.
type Surface string

const (
	Public     Surface = "public"     // no credential
	Conversion Surface = "conversion" // conversion API keys and tokens
	Finance    Surface = "finance"    // finance credentials bound to a user and grant
)

// Body limits. Convert and batch limits come from the conversion spec; every
// other JSON body is small, so 1 MiB is generous without inviting abuse.
const (
	ConvertBodyLimit = 2 << 20
	BatchBodyLimit   = 16 << 20
	DefaultBodyLimit = 1 << 20
)

// Route is one method on one path pattern for one surface.
type Route struct {
	Method   string
	Pattern  string // segments; {name} matches one non-empty segment
	Surface  Surface
	Scope    string // empty for public routes
	Selector string // the gRPC method bound in proto/http.yaml
	Metered  bool
	Limit    int64
}

func r(method, pattern string, s Surface, scope, selector string) Route {
	return Route{Method: method, Pattern: pattern, Surface: s, Scope: scope, Selector: selector, Limit: DefaultBodyLimit}
}

func metered(rt Route) Route { rt.Metered = true; return rt }

func limit(rt Route, n int64) Route { rt.Limit = n; return rt }

// Finance read scopes are ours (the finance spec leaves them open); writes use
// the spec's names. docs/scopes.md lists them.
var table = []Route{
	r(http.MethodGet, "/v1/health", Public, "", "edge.v1.EdgeService.Health"),
	r(http.MethodGet, "/v1/ready", Public, "", "edge.v1.EdgeService.Ready"),
	r(http.MethodGet, "/v1/version", Public, "", "edge.v1.EdgeService.Version"),

	// Conversion surface: scopes exactly as the conversion spec's table.
	limit(metered(r(http.MethodPost, "/v1/convert", Conversion, "convert", "conversion.v1.ConversionService.Convert")), ConvertBodyLimit),
	// A batch draws one quota unit per item, admitted whole or refused whole.
	limit(metered(r(http.MethodPost, "/v1/convert/batch", Conversion, "convert", "jobs.v1.JobService.CreateBatch")), BatchBodyLimit),
	limit(metered(r(http.MethodPost, "/v1/normalize", Conversion, "normalize", "conversion.v1.ConversionService.Normalize")), ConvertBodyLimit),
	limit(metered(r(http.MethodPost, "/v1/validate", Conversion, "validate", "conversion.v1.ConversionService.Validate")), ConvertBodyLimit),
	limit(metered(r(http.MethodPost, "/v1/enrich", Conversion, "enrich", "conversion.v1.ConversionService.Enrich")), ConvertBodyLimit),
	r(http.MethodGet, "/v1/formats", Conversion, "formats:read", "conversion.v1.ConversionService.ListFormats"),
	r(http.MethodGet, "/v1/jobs/{id}", Conversion, "jobs:read", "jobs.v1.JobService.GetJob"),
	r(http.MethodDelete, "/v1/jobs/{id}", Conversion, "jobs:read", "jobs.v1.JobService.DeleteJob"),
	r(http.MethodPost, "/v1/webhooks", Conversion, "webhooks:manage", "jobs.v1.WebhookService.CreateWebhook"),
	r(http.MethodGet, "/v1/webhooks", Conversion, "webhooks:manage", "jobs.v1.WebhookService.ListWebhooks"),
	r(http.MethodDelete, "/v1/webhooks/{id}", Conversion, "webhooks:manage", "jobs.v1.WebhookService.DeleteWebhook"),
	r(http.MethodPost, "/v1/connections", Conversion, "connections:manage", "conversion.v1.AccountingConnectionService.CreateConnection"),
	r(http.MethodGet, "/v1/connections", Conversion, "connections:manage", "conversion.v1.AccountingConnectionService.ListConnections"),
	r(http.MethodDelete, "/v1/connections/{id}", Conversion, "connections:manage", "conversion.v1.AccountingConnectionService.DeleteConnection"),
	r(http.MethodGet, "/v1/usage", Conversion, "usage:read", "metering.v1.UsageService.GetUsage"),
	// The spec names no scope for spend caps; changing billing is an account
	// owner's act, so it needs the reserved operator scope, like usage.
	r(http.MethodPost, "/v1/portal/billing/limits", Conversion, "usage:read", "metering.v1.BillingService.SetBillingLimits"),

	// Finance surface.
	r(http.MethodGet, "/v1/transactions", Finance, "transactions:read", "finance.v1.TransactionService.ListTransactions"),
	r(http.MethodGet, "/v1/transactions/search", Finance, "transactions:read", "finance.v1.TransactionService.SearchTransactions"),
	r(http.MethodGet, "/v1/transactions/{id}", Finance, "transactions:read", "finance.v1.TransactionService.GetTransaction"),
	r(http.MethodPatch, "/v1/transactions/{id}", Finance, "transactions:write", "finance.v1.TransactionService.UpdateTransaction"),
	r(http.MethodPost, "/v1/transactions/bulk-categorize", Finance, "transactions:write", "finance.v1.TransactionService.BulkCategorizeTransactions"),
	r(http.MethodGet, "/v1/categories", Finance, "categories:read", "finance.v1.CategoryService.ListCategories"),
	r(http.MethodPost, "/v1/categories", Finance, "categories:write", "finance.v1.CategoryService.CreateCategory"),
	r(http.MethodPatch, "/v1/categories/{id}", Finance, "categories:write", "finance.v1.CategoryService.UpdateCategory"),
	r(http.MethodDelete, "/v1/categories/{id}", Finance, "categories:write", "finance.v1.CategoryService.DeleteCategory"),
	r(http.MethodGet, "/v1/connections", Finance, "accounts:read", "finance.v1.AccountService.ListConnections"),
	r(http.MethodGet, "/v1/accounts/{id}/balances", Finance, "accounts:read", "finance.v1.AccountService.GetAccountBalances"),
	r(http.MethodGet, "/v1/sync-status", Finance, "accounts:read", "finance.v1.AccountService.GetSyncStatus"),
	r(http.MethodGet, "/v1/budgets/{id}", Finance, "budgets:read", "finance.v1.BudgetService.GetBudget"),
	r(http.MethodGet, "/v1/budgets/{id}/progress", Finance, "budgets:read", "finance.v1.BudgetService.GetBudgetProgress"),
	r(http.MethodPost, "/v1/budgets/switch-method", Finance, "budgets:write", "finance.v1.BudgetService.SwitchBudgetMethod"),
	r(http.MethodGet, "/v1/goals", Finance, "goals:read", "finance.v1.GoalService.ListGoals"),
	r(http.MethodGet, "/v1/goals/{id}", Finance, "goals:read", "finance.v1.GoalService.GetGoal"),
	r(http.MethodGet, "/v1/holdings", Finance, "holdings:read", "finance.v1.HoldingService.ListHoldings"),
	r(http.MethodGet, "/v1/debt/summary", Finance, "debt:read", "finance.v1.DebtService.GetDebtSummary"),
	r(http.MethodPost, "/v1/debt/payoff-plan", Finance, "debt:read", "finance.v1.DebtService.CreatePayoffPlan"),
	r(http.MethodGet, "/v1/insights/cash-flow-forecast", Finance, "insights:read", "finance.v1.InsightService.GetCashFlowForecast"),
	r(http.MethodGet, "/v1/insights/month-summary", Finance, "insights:read", "finance.v1.InsightService.GetMonthSummary"),
	r(http.MethodGet, "/v1/insights/spending-by-category", Finance, "insights:read", "finance.v1.InsightService.GetSpendingByCategory"),
	r(http.MethodGet, "/v1/bills/upcoming", Finance, "insights:read", "finance.v1.InsightService.ListUpcomingBills"),
	r(http.MethodGet, "/v1/net-worth", Finance, "net_worth:read", "finance.v1.NetWorthService.GetNetWorth"),
	r(http.MethodGet, "/v1/net-worth/history", Finance, "net_worth:read", "finance.v1.NetWorthService.GetNetWorthHistory"),
}

// All returns a copy of the table.
func All() []Route { return append([]Route(nil), table...) }

// Match is the outcome of looking a request up.
type Match struct {
	// Routes that match method and path: one per surface serving it (two only
	// for GET /v1/connections). Empty when nothing matched.
	Routes []Route
	// Allowed lists the methods the path does answer, for 405's Allow header.
	Allowed []string
}

// Lookup finds the routes for method and path. A path that no pattern matches
// yields an empty Match; a path matched under other methods only yields
// Allowed without Routes.
func Lookup(method, path string) Match {
	segs := split(path)
	var m Match
	seen := map[string]bool{}
	best := -1
	for _, rt := range table {
		lit, ok := matches(rt.Pattern, segs)
		if !ok {
			continue
		}
		if !seen[rt.Method] {
			seen[rt.Method] = true
			m.Allowed = append(m.Allowed, rt.Method)
		}
		if rt.Method != method {
			continue
		}
		// Literal segments win over parameters: /v1/transactions/search is
		// never the transaction with id "search".
		switch {
		case lit > best:
			best = lit
			m.Routes = []Route{rt}
		case lit == best:
			m.Routes = append(m.Routes, rt)
		}
	}
	sort.Strings(m.Allowed)
	return m
}

// For picks the route serving surface s, if any.
func (m Match) For(s Surface) (Route, bool) {
	for _, rt := range m.Routes {
		if rt.Surface == s {
			return rt, true
		}
	}
	return Route{}, false
}

// split keeps a trailing empty segment, so "/v1/health/" matches nothing.
func split(path string) []string {
	path = strings.TrimPrefix(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// matches reports whether segs fit pattern and how many literal segments matched.
func matches(pattern string, segs []string) (int, bool) {
	ps := split(pattern)
	if len(ps) != len(segs) {
		return 0, false
	}
	lit := 0
	for i, p := range ps {
		if strings.HasPrefix(p, "{") {
			if segs[i] == "" {
				return 0, false
			}
			continue
		}
		if p != segs[i] {
			return 0, false
		}
		lit++
	}
	return lit, true
}
