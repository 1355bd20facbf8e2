package main

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// summaries are the operations' one-line summaries, written for a reader of
// the reference: what the route does, not how it is bound. The proto
// comment (scope, policy, decisions) stays the description. A route without
// one fails `make gen`.
var summaries = map[string]string{
	"GET /v1/health":                                 "Check that the gateway is up",
	"GET /v1/ready":                                  "Check that the gateway and its backends can serve",
	"GET /v1/version":                                "Get the build and API version",
	"GET /v1/openapi.json":                           "Get this OpenAPI document",
	"POST /v1/oauth/token":                           "Get an access token for a test OAuth client",
	"POST /v1/convert":                               "Convert a message or statement",
	"POST /v1/convert/batch":                         "Convert many messages as one asynchronous job",
	"POST /v1/normalize":                             "Normalize a message in its own format",
	"POST /v1/validate":                              "Validate a message without converting it",
	"POST /v1/enrich":                                "List the parties, agents and references a message names",
	"GET /v1/formats":                                "List the supported conversion pairs",
	"GET /v1/jobs/{id}":                              "Get a batch job and its results",
	"DELETE /v1/jobs/{id}":                           "Delete a batch job",
	"POST /v1/webhooks":                              "Register a webhook endpoint",
	"GET /v1/webhooks":                               "List the webhook endpoints",
	"DELETE /v1/webhooks/{id}":                       "Remove a webhook endpoint",
	"PATCH /v1/webhooks/{id}":                        "Change a webhook endpoint's URL, event types or description",
	"GET /v1/webhooks/event-types":                   "List the event types an endpoint can subscribe to",
	"GET /v1/webhooks/{id}/deliveries":               "List an endpoint's deliveries with their attempts, newest first",
	"GET /v1/webhooks/{id}/deliveries/{delivery_id}": "Get one delivery with its attempts",
	"POST /v1/webhooks/{id}/deliveries/{delivery_id}/resend": "Send a delivery's event again (same event id)",
	"POST /v1/webhooks/{id}/test":                            "Send a webhook.test event to an endpoint",
	"POST /v1/webhooks/{id}/rotate-secret":                   "Rotate an endpoint's signing secret (24 h overlap)",
	"POST /v1/webhooks/{id}/enable":                          "Re-enable a disabled endpoint",
	"POST /v1/connections":                                   "Start connecting an accounting platform",
	"GET /v1/connections":                                    "List connections (accounting platforms, or a finance user's banks)",
	"DELETE /v1/connections/{id}":                            "Disconnect an accounting platform",
	"POST /v1/connections/{id}/statements":                   "Book a bank statement in a connected accounting platform",
	"GET /v1/connections/callback":                           "Complete an accounting platform's authorization (browser redirect)",
	"GET /v1/usage":                                          "Get the account's usage against its quota",
	"GET /v1/usage/daily":                                    "Count the account's metered units per day",
	"GET /v1/requests":                                       "List the account's recent requests",
	"GET /v1/requests/daily":                                 "Count the account's requests per day",
	"POST /v1/portal/billing/limits":                         "Set the hard stop and the overage spend cap",
	"GET /v1/transactions":                                   "List transactions",
	"GET /v1/transactions/search":                            "Search transactions",
	"GET /v1/transactions/sync":                              "Get the transactions that changed since a cursor",
	"GET /v1/transactions/{id}":                              "Get a transaction",
	"PATCH /v1/transactions/{id}":                            "Edit a transaction",
	"POST /v1/transactions/bulk-categorize":                  "Recategorize many transactions",
	"POST /v1/imports":                                       "Import a bank statement file",
	"GET /v1/categories":                                     "List categories",
	"POST /v1/categories":                                    "Create a category",
	"PATCH /v1/categories/{id}":                              "Edit a category",
	"DELETE /v1/categories/{id}":                             "Delete a category",
	"GET /v1/accounts":                                       "List accounts",
	"GET /v1/accounts/{id}/balances":                         "Get an account's balances",
	"GET /v1/accounts/{id}/balance-history":                  "Get an account's daily balances over time",
	"GET /v1/sync-status":                                    "Get how fresh each bank connection is",
	"GET /v1/budgets":                                        "List budgets",
	"GET /v1/budgets/{id}":                                   "Get a budget",
	"GET /v1/budgets/{id}/progress":                          "Get a budget's progress in a period",
	"POST /v1/budgets/switch-method":                         "Switch the budgeting method",
	"PATCH /v1/budgets/{id}/allocations":                     "Change a budget's allocations",
	"GET /v1/goals":                                          "List savings goals",
	"GET /v1/goals/{id}":                                     "Get a savings goal",
	"POST /v1/goals":                                         "Create a savings goal",
	"PATCH /v1/goals/{id}":                                   "Edit a savings goal",
	"DELETE /v1/goals/{id}":                                  "Delete a savings goal",
	"GET /v1/holdings":                                       "List investment holdings",
	"GET /v1/debt/summary":                                   "Get the debt summary",
	"POST /v1/debt/payoff-plan":                              "Compute a debt payoff plan",
	"GET /v1/insights/cash-flow-forecast":                    "Forecast cash flow",
	"GET /v1/insights/month-summary":                         "Summarize a month",
	"GET /v1/insights/spending-by-category":                  "Get spending by category",
	"GET /v1/bills/upcoming":                                 "List upcoming bills",
	"GET /v1/net-worth":                                      "Get net worth",
	"GET /v1/net-worth/history":                              "Get net worth over time",
	"POST /v1/sandbox/users":                                 "Create a sandbox finance user",
	"GET /v1/sandbox/users":                                  "List the sandbox finance users",
	"GET /v1/sandbox/institutions":                           "List the sandbox institutions and their test credentials",
	"POST /v1/sandbox/links":                                 "Link a sandbox user to an institution",
	"GET /v1/sandbox/links":                                  "List the sandbox links",
	"GET /v1/sandbox/links/{id}":                             "Read a sandbox link",
	"POST /v1/sandbox/links/{id}/mfa":                        "Answer a sandbox link's MFA step",
	"GET /v1/finance-grants/{id}":                            "Get a finance grant's privacy settings",
	"PATCH /v1/finance-grants/{id}":                          "Change a finance grant's privacy settings",
	"POST /v1/sandbox/credentials":                           "Issue a finance credential on a sandbox grant",
}

// summarize gives op its written summary; what protoc-gen-openapiv2 put in
// the summary (the proto comment's first paragraph) leads the description.
func summarize(op *openapi3.Operation, method, pattern string) error {
	s, ok := summaries[method+" "+pattern]
	if !ok {
		return fmt.Errorf("%s %s has no summary: add one to gateway/openapi/gen/summaries.go", method, pattern)
	}
	if op.Summary != "" && !strings.Contains(op.Description, op.Summary) {
		op.Description = strings.TrimSpace(op.Summary + "\n\n" + op.Description)
	}
	op.Summary = s
	return nil
}
