// Package route is the edge's single table of public routes: for each method
// and path pattern, which surface serves it, which scope it needs, how large
// its body may be, and the edge's policy for it: metering and units,
// idempotency, success status, a hand-written handler and what runs after
// success. Authentication, scope checks, body limits, admission, 404 and 405
// are all decided from this table; proto/http.yaml binds the same routes to
// gRPC methods, and a test keeps the two identical.
package route

import (
	"net/http"
	"slices"
	"sort"
	"strings"
)

// Surface says which credentials may call a route.
type Surface string

const (
	Public     Surface = "public"     // no credential
	Conversion Surface = "conversion" // conversion API keys and tokens
	Finance    Surface = "finance"    // finance credentials bound to a user and grant
	// Web is a browser's: the portal's pages, whose credential is the
	// session cookie. The edge resolves it to a principal of the portal
	// surface as it resolves a key, then hands the request to the row's
	// handler, which calls the services with that principal.
	Web Surface = "web"
)

// Body limits. Convert and batch limits come from the conversion spec; every
// other JSON body is small, so 1 MiB is generous without inviting abuse.
const (
	ConvertBodyLimit = 2 << 20
	BatchBodyLimit   = 16 << 20
	// MaxBatchItems is the most items one batch may hold: the jobs
	// service's jobs.MaxItems, checked at the edge before anything is
	// reserved (deploy/local TestBatchLimitsAgree holds the two equal).
	MaxBatchItems    = 10_000
	DefaultBodyLimit = 1 << 20
)

// Idempotency says what a route does with an Idempotency-Key header.
type Idempotency int

const (
	IdempotencyNone     Idempotency = iota // no key taken (reads, pure computations)
	IdempotencyOptional                    // honoured when sent
	IdempotencyRequired                    // 400 without one
)

// Units says how many quota units a metered request draws.
type Units int

const (
	UnitsOne     Units = iota // one per request
	UnitsPerItem              // one per element of the JSON body's "items" (a batch)
)

// Handler names a hand-written handler for a route grpc-gateway cannot
// serve; the gateway maps each name to its function and refuses to start on
// a name it does not know.
type Handler string

const (
	HandlerGenerated Handler = ""        // grpc-gateway's generated handler
	HandlerConvert   Handler = "convert" // POST /v1/convert: raw bodies and Accept negotiation
	HandlerOpenAPI   Handler = "openapi" // GET /v1/openapi.json: the embedded OpenAPI 3 document
	// POST /v1/oauth/token: a form body, HTTP Basic and RFC 6749 answers.
	HandlerOAuthToken Handler = "oauth-token"
	// The portal's HTML pages and forms (gateway/portal).
	HandlerPortal Handler = "portal"
)

// After names what the gateway runs once a route answered 2xx.
type After string

const (
	AfterNothing      After = ""
	AfterForgetLimits After = "forget-limits" // drop the account's cached limits
)

// Route is one method on one path pattern for one surface, with the edge's
// policy for it.
type Route struct {
	Method   string
	Pattern  string // segments; {name} matches one non-empty segment
	Surface  Surface
	Scope    string // empty for public routes
	Selector string // the gRPC method bound in proto/http.yaml
	Limit    int64  // body limit in bytes
	// Metered routes draw Units of quota per request.
	Metered     bool
	Units       Units
	Idempotency Idempotency
	// Status is the success status; 0 means 200.
	Status  int
	Handler Handler
	After   After
	// Prefix rows (web rows) match their pattern's path and every path
	// below it, under any method: the handler owns that subtree and answers
	// its own 404s and 405s.
	Prefix bool
}

// get is a read: no body worth fingerprinting, no idempotency.
func get(pattern string, s Surface, scope, selector string) Route {
	return Route{Method: http.MethodGet, Pattern: pattern, Surface: s, Scope: scope, Selector: selector, Limit: DefaultBodyLimit}
}

// write is any other method, with its idempotency stated.
func write(method, pattern string, s Surface, scope, selector string, idem Idempotency) Route {
	return Route{Method: method, Pattern: pattern, Surface: s, Scope: scope, Selector: selector, Limit: DefaultBodyLimit, Idempotency: idem}
}

// web is a browser surface served whole by one hand-written handler.
func web(prefix string, h Handler) Route {
	return Route{Pattern: prefix, Surface: Web, Limit: DefaultBodyLimit, Handler: h, Prefix: true}
}

func (rt Route) metered(u Units) Route   { rt.Metered, rt.Units = true, u; return rt }
func (rt Route) limit(n int64) Route     { rt.Limit = n; return rt }
func (rt Route) status(code int) Route   { rt.Status = code; return rt }
func (rt Route) handler(h Handler) Route { rt.Handler = h; return rt }
func (rt Route) after(a After) Route     { rt.After = a; return rt }

const (
	none     = IdempotencyNone
	optional = IdempotencyOptional
	required = IdempotencyRequired
)

// Finance read scopes are ours (the finance spec leaves them open); writes use
// the spec's names. docs/scopes.md lists them. Finance writes require an
// Idempotency-Key; conversion-surface writes honour one when sent.
var table = []Route{
	get("/v1/health", Public, "", "edge.v1.EdgeService.Health"),
	get("/v1/ready", Public, "", "edge.v1.EdgeService.Ready"),
	get("/v1/version", Public, "", "edge.v1.EdgeService.Version"),
	// The OpenAPI 3 document, generated from the protos and this table by
	// `make gen` and served as a file.
	get("/v1/openapi.json", Public, "", "edge.v1.EdgeService.OpenAPI").handler(HandlerOpenAPI),
	// The OAuth token route (client-credentials grant, RFC 6749 §4.4): public,
	// since the client authenticates with its own id and secret, not a key.
	// Each grant makes a new token, so no idempotency.
	write(http.MethodPost, "/v1/oauth/token", Public, "", "metering.v1.OAuthService.Token", none).
		limit(16 << 10).handler(HandlerOAuthToken),

	// Conversion surface: scopes exactly as the conversion spec's table.
	write(http.MethodPost, "/v1/convert", Conversion, "convert", "conversion.v1.ConversionService.Convert", optional).
		metered(UnitsOne).limit(ConvertBodyLimit).handler(HandlerConvert),
	// A batch draws one quota unit per item, admitted whole or refused whole,
	// and is accepted, not done: 202.
	write(http.MethodPost, "/v1/convert/batch", Conversion, "convert", "jobs.v1.JobService.CreateBatch", optional).
		metered(UnitsPerItem).limit(BatchBodyLimit).status(http.StatusAccepted),
	write(http.MethodPost, "/v1/normalize", Conversion, "normalize", "conversion.v1.ConversionService.Normalize", optional).
		metered(UnitsOne).limit(ConvertBodyLimit),
	write(http.MethodPost, "/v1/validate", Conversion, "validate", "conversion.v1.ConversionService.Validate", optional).
		metered(UnitsOne).limit(ConvertBodyLimit),
	write(http.MethodPost, "/v1/enrich", Conversion, "enrich", "conversion.v1.ConversionService.Enrich", optional).
		metered(UnitsOne).limit(ConvertBodyLimit),
	get("/v1/formats", Conversion, "formats:read", "conversion.v1.ConversionService.ListFormats"),
	get("/v1/jobs/{id}", Conversion, "jobs:read", "jobs.v1.JobService.GetJob"),
	write(http.MethodDelete, "/v1/jobs/{id}", Conversion, "jobs:read", "jobs.v1.JobService.DeleteJob", optional),
	write(http.MethodPost, "/v1/webhooks", Conversion, "webhooks:manage", "jobs.v1.WebhookService.CreateWebhook", optional),
	get("/v1/webhooks", Conversion, "webhooks:manage", "jobs.v1.WebhookService.ListWebhooks"),
	write(http.MethodDelete, "/v1/webhooks/{id}", Conversion, "webhooks:manage", "jobs.v1.WebhookService.DeleteWebhook", optional),
	write(http.MethodPatch, "/v1/webhooks/{id}", Conversion, "webhooks:manage", "jobs.v1.WebhookService.UpdateWebhook", optional),
	get("/v1/webhooks/event-types", Conversion, "webhooks:manage", "jobs.v1.WebhookService.ListEventTypes"),
	get("/v1/webhooks/{id}/deliveries", Conversion, "webhooks:manage", "jobs.v1.WebhookService.ListDeliveries"),
	get("/v1/webhooks/{id}/deliveries/{delivery_id}", Conversion, "webhooks:manage", "jobs.v1.WebhookService.GetDelivery"),
	// A resend or test event is accepted, not yet sent: 202. Neither is
	// metered (no quota unit); the jobs service holds each endpoint to
	// jobs.MaxPendingManual of them pending (docs/webhooks.md, "Limits").
	write(http.MethodPost, "/v1/webhooks/{id}/deliveries/{delivery_id}/resend", Conversion, "webhooks:manage", "jobs.v1.WebhookService.ResendDelivery", optional).
		status(http.StatusAccepted),
	write(http.MethodPost, "/v1/webhooks/{id}/test", Conversion, "webhooks:manage", "jobs.v1.WebhookService.SendTestEvent", optional).
		status(http.StatusAccepted),
	write(http.MethodPost, "/v1/webhooks/{id}/rotate-secret", Conversion, "webhooks:manage", "jobs.v1.WebhookService.RotateWebhookSecret", optional),
	write(http.MethodPost, "/v1/webhooks/{id}/enable", Conversion, "webhooks:manage", "jobs.v1.WebhookService.EnableWebhook", optional),
	write(http.MethodPost, "/v1/connections", Conversion, "connections:manage", "conversion.v1.AccountingConnectionService.CreateConnection", optional),
	get("/v1/connections", Conversion, "connections:manage", "conversion.v1.AccountingConnectionService.ListConnections"),
	write(http.MethodDelete, "/v1/connections/{id}", Conversion, "connections:manage", "conversion.v1.AccountingConnectionService.DeleteConnection", optional),
	// A statement pushed to an accounting platform is converted once (to read
	// its entries), so it is metered and limited like one conversion.
	write(http.MethodPost, "/v1/connections/{id}/statements", Conversion, "connections:manage", "conversion.v1.AccountingConnectionService.PushStatement", optional).
		metered(UnitsOne).limit(ConvertBodyLimit),
	// The OAuth redirect target: the platform sends the user's browser here,
	// without a key; the single-use state names the account and connection.
	get("/v1/connections/callback", Public, "", "conversion.v1.AccountingCallbackService.CompleteConnection"),
	get("/v1/usage", Conversion, "usage:read", "metering.v1.UsageService.GetUsage"),
	get("/v1/usage/daily", Conversion, "usage:read", "metering.v1.UsageService.GetDailyUsage"),
	// The account's request log: the edge's own record, metadata only.
	get("/v1/requests", Conversion, "usage:read", "edge.v1.RequestLogService.ListRequests"),
	get("/v1/requests/daily", Conversion, "usage:read", "edge.v1.RequestLogService.GetRequestCounts"),
	// The spec names no scope for spend caps; changing billing is an account
	// owner's act, so it needs the reserved operator scope, like usage. The
	// gateway forgets its cached limits at once so the change applies to the
	// very next request.
	write(http.MethodPost, "/v1/portal/billing/limits", Conversion, "usage:read", "metering.v1.BillingService.SetBillingLimits", optional).
		after(AfterForgetLimits),
	// The finance sandbox (docs/finance-sandbox.md): a conversion test key
	// with the opt-in finance_sandbox:manage makes its account's test-mode
	// finance users, links them to pretend institutions and gets finance
	// credentials on their grants. The services refuse live keys.
	write(http.MethodPost, "/v1/sandbox/users", Conversion, "finance_sandbox:manage", "finance.v1.SandboxService.CreateSandboxUser", optional),
	get("/v1/sandbox/users", Conversion, "finance_sandbox:manage", "finance.v1.SandboxService.ListSandboxUsers"),
	get("/v1/sandbox/institutions", Conversion, "finance_sandbox:manage", "finance.v1.SandboxService.ListSandboxInstitutions"),
	write(http.MethodPost, "/v1/sandbox/links", Conversion, "finance_sandbox:manage", "finance.v1.SandboxService.CreateSandboxLink", optional),
	get("/v1/sandbox/links", Conversion, "finance_sandbox:manage", "finance.v1.SandboxService.ListSandboxLinks"),
	get("/v1/sandbox/links/{id}", Conversion, "finance_sandbox:manage", "finance.v1.SandboxService.GetSandboxLink"),
	write(http.MethodPost, "/v1/sandbox/links/{id}/mfa", Conversion, "finance_sandbox:manage", "finance.v1.SandboxService.AnswerSandboxLinkMfa", optional),
	write(http.MethodPost, "/v1/sandbox/credentials", Conversion, "finance_sandbox:manage", "metering.v1.SandboxService.CreateSandboxCredential", optional),
	// A finance grant's privacy settings (docs/privacy.md, "Changing a
	// grant"): the tenant that owns the finance user changes them with a
	// conversion credential carrying the opt-in finance_grants:manage, never
	// the finance credential they constrain. Versioned like the finance
	// writes, so the key is required as theirs is.
	get("/v1/finance-grants/{id}", Conversion, "finance_grants:manage", "finance.v1.GrantService.GetFinanceGrant"),
	write(http.MethodPatch, "/v1/finance-grants/{id}", Conversion, "finance_grants:manage", "finance.v1.GrantService.UpdateFinanceGrant", required),

	// Finance surface.
	get("/v1/transactions", Finance, "transactions:read", "finance.v1.TransactionService.ListTransactions"),
	get("/v1/transactions/search", Finance, "transactions:read", "finance.v1.TransactionService.SearchTransactions"),
	get("/v1/transactions/sync", Finance, "transactions:read", "finance.v1.TransactionService.SyncTransactions"),
	get("/v1/transactions/{id}", Finance, "transactions:read", "finance.v1.TransactionService.GetTransaction"),
	write(http.MethodPatch, "/v1/transactions/{id}", Finance, "transactions:write", "finance.v1.TransactionService.UpdateTransaction", required),
	write(http.MethodPost, "/v1/transactions/bulk-categorize", Finance, "transactions:write", "finance.v1.TransactionService.BulkCategorizeTransactions", required),
	// A statement file for one account; the body carries the file's text, so
	// it may be as large as a message the converter takes.
	write(http.MethodPost, "/v1/imports", Finance, "transactions:write", "finance.v1.ImportService.ImportStatement", required).
		limit(ConvertBodyLimit),
	get("/v1/categories", Finance, "categories:read", "finance.v1.CategoryService.ListCategories"),
	write(http.MethodPost, "/v1/categories", Finance, "categories:write", "finance.v1.CategoryService.CreateCategory", required),
	write(http.MethodPatch, "/v1/categories/{id}", Finance, "categories:write", "finance.v1.CategoryService.UpdateCategory", required),
	write(http.MethodDelete, "/v1/categories/{id}", Finance, "categories:write", "finance.v1.CategoryService.DeleteCategory", required),
	get("/v1/accounts", Finance, "accounts:read", "finance.v1.AccountService.ListAccounts"),
	get("/v1/connections", Finance, "accounts:read", "finance.v1.AccountService.ListConnections"),
	get("/v1/accounts/{id}/balances", Finance, "accounts:read", "finance.v1.AccountService.GetAccountBalances"),
	get("/v1/accounts/{id}/balance-history", Finance, "accounts:read", "finance.v1.AccountService.GetAccountBalanceHistory"),
	get("/v1/sync-status", Finance, "accounts:read", "finance.v1.AccountService.GetSyncStatus"),
	get("/v1/budgets", Finance, "budgets:read", "finance.v1.BudgetService.ListBudgets"),
	get("/v1/budgets/{id}", Finance, "budgets:read", "finance.v1.BudgetService.GetBudget"),
	get("/v1/budgets/{id}/progress", Finance, "budgets:read", "finance.v1.BudgetService.GetBudgetProgress"),
	write(http.MethodPost, "/v1/budgets/switch-method", Finance, "budgets:write", "finance.v1.BudgetService.SwitchBudgetMethod", required),
	write(http.MethodPatch, "/v1/budgets/{id}/allocations", Finance, "budgets:write", "finance.v1.BudgetService.UpdateBudgetAllocations", required),
	get("/v1/goals", Finance, "goals:read", "finance.v1.GoalService.ListGoals"),
	get("/v1/goals/{id}", Finance, "goals:read", "finance.v1.GoalService.GetGoal"),
	write(http.MethodPost, "/v1/goals", Finance, "goals:write", "finance.v1.GoalService.CreateGoal", required),
	write(http.MethodPatch, "/v1/goals/{id}", Finance, "goals:write", "finance.v1.GoalService.UpdateGoal", required),
	write(http.MethodDelete, "/v1/goals/{id}", Finance, "goals:write", "finance.v1.GoalService.DeleteGoal", required),
	get("/v1/holdings", Finance, "holdings:read", "finance.v1.HoldingService.ListHoldings"),
	get("/v1/debt/summary", Finance, "debt:read", "finance.v1.DebtService.GetDebtSummary"),
	// The payoff plan only computes: nothing to make idempotent.
	write(http.MethodPost, "/v1/debt/payoff-plan", Finance, "debt:read", "finance.v1.DebtService.CreatePayoffPlan", none),
	get("/v1/insights/cash-flow-forecast", Finance, "insights:read", "finance.v1.InsightService.GetCashFlowForecast"),
	get("/v1/insights/month-summary", Finance, "insights:read", "finance.v1.InsightService.GetMonthSummary"),
	get("/v1/insights/spending-by-category", Finance, "insights:read", "finance.v1.InsightService.GetSpendingByCategory"),
	get("/v1/bills/upcoming", Finance, "insights:read", "finance.v1.InsightService.ListUpcomingBills"),
	get("/v1/net-worth", Finance, "net_worth:read", "finance.v1.NetWorthService.GetNetWorth"),
	get("/v1/net-worth/history", Finance, "net_worth:read", "finance.v1.NetWorthService.GetNetWorthHistory"),

	// The portal: the account holders' pages are one row, a client of the
	// same services as the rows above (docs/portal.md). The edge resolves
	// its session cookie to a principal; the pages call metering with it.
	web("/portal/", HandlerPortal),
}

// GRPCMethod is the route's gRPC method as grpc-gateway names it
// ("/jobs.v1.JobService/CreateBatch").
func (rt Route) GRPCMethod() string {
	i := strings.LastIndexByte(rt.Selector, '.')
	return "/" + rt.Selector[:i] + "/" + rt.Selector[i+1:]
}

// All returns the API rows, each bound to a gRPC method (what OpenAPI
// documents); web rows are left out.
func All() []Route {
	var out []Route
	for _, rt := range table {
		if !rt.Prefix {
			out = append(out, rt)
		}
	}
	return out
}

// WebRows returns the web rows.
func WebRows() []Route {
	var out []Route
	for _, rt := range table {
		if rt.Prefix {
			out = append(out, rt)
		}
	}
	return out
}

// Match is the outcome of looking a request up.
type Match struct {
	// Routes that match method and path: one per surface serving it (two only
	// for GET /v1/connections). Empty when nothing matched.
	Routes []Route
	// Allowed lists the methods the path does answer, for 405's Allow header.
	Allowed []string
}

// patternSegs holds each table row's pattern split into segments, by row:
// Lookup runs on every request and would otherwise split every pattern of the
// table each time (most of the edge's allocations per request, before this).
var patternSegs = func() [][]string {
	out := make([][]string, len(table))
	for i, rt := range table {
		out[i] = split(rt.Pattern)
	}
	return out
}()

// Lookup finds the routes for method and path. A path that no pattern matches
// yields an empty Match; a path matched under other methods only yields
// Allowed without Routes.
func Lookup(method, path string) Match {
	segs := split(path)
	var m Match
	best := -1
	for i, rt := range table {
		if rt.Prefix {
			if path == strings.TrimSuffix(rt.Pattern, "/") || strings.HasPrefix(path, rt.Pattern) {
				// Nothing else lives under a web row's prefix.
				return Match{Routes: []Route{rt}, Allowed: []string{method}}
			}
			continue
		}
		lit, ok := matches(patternSegs[i], segs)
		if !ok {
			continue
		}
		// A path answers a handful of methods at most: a scan beats a set.
		if !slices.Contains(m.Allowed, rt.Method) {
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

// matches reports whether segs fit the pattern split into ps and how many
// literal segments matched.
func matches(ps, segs []string) (int, bool) {
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
