package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ledgerlane/platform/gateway/route"
)

// resourceTags group the operations for a reader, by surface and resource,
// in the order the reference shows them (tagFor picks a route's; surfaces
// tell apart a path two surfaces serve). The gRPC service names protoc-gen-openapiv2 writes are
// internals, six of them never reachable, and are replaced.
var resourceTags = []struct {
	name, description string
	surface           route.Surface // empty: any
	prefixes          []string
}{
	{"Service", "Health, readiness, version and this document: no credential.", route.Public,
		[]string{"/v1/health", "/v1/ready", "/v1/version", "/v1/openapi.json"}},
	{"Conversion", "SWIFT MT ⇄ ISO 20022 conversion, validation, normalization and enrichment; the supported pairs. Metered.", route.Conversion,
		[]string{"/v1/convert", "/v1/normalize", "/v1/validate", "/v1/enrich", "/v1/formats"}},
	{"Batches", "Asynchronous batch jobs: submit, poll, delete (docs/jobs.md).", route.Conversion, []string{"/v1/convert/batch", "/v1/jobs"}},
	{"Webhooks", "Signed job.completed deliveries to your endpoints.", route.Conversion, []string{"/v1/webhooks"}},
	{"Accounting connections", "QuickBooks and Xero connections and statements pushed to them (docs/accounting.md).", "",
		[]string{"/v1/connections/callback"}},
	{"Accounting connections", "", route.Conversion, []string{"/v1/connections"}},
	{"Usage and billing", "Usage against the quota, the request log and spend caps (reserved scope usage:read).", route.Conversion,
		[]string{"/v1/usage", "/v1/requests", "/v1/portal/"}},
	{"OAuth", "Access tokens for test OAuth clients, by the client-credentials grant.", route.Public, []string{"/v1/oauth/"}},
	{"Finance sandbox", "Test-mode finance users linked to pretend institutions, and finance credentials on their grants (docs/finance-sandbox.md; test keys with finance_sandbox:manage).",
		route.Conversion, []string{"/v1/sandbox/"}},
	{"Finance grants", "A finance grant's privacy settings, read and changed by the account that owns the user (docs/privacy.md; keys with finance_grants:manage).",
		route.Conversion, []string{"/v1/finance-grants/"}},
	{"Transactions", "A finance user's transactions as the grant sees them: list, search, the change feed, edits, imports.", route.Finance,
		[]string{"/v1/transactions", "/v1/imports"}},
	{"Categories", "The user's category tree.", route.Finance, []string{"/v1/categories"}},
	{"Accounts", "Linked accounts, their connections, balances and sync status.", route.Finance,
		[]string{"/v1/accounts", "/v1/connections", "/v1/sync-status"}},
	{"Budgets and goals", "Budgets, their progress and allocations; savings goals.", route.Finance, []string{"/v1/budgets", "/v1/goals"}},
	{"Net worth and holdings", "Net worth now and over time; investment holdings.", route.Finance, []string{"/v1/net-worth", "/v1/holdings"}},
	{"Debt", "Debt summary and payoff plans.", route.Finance, []string{"/v1/debt"}},
	{"Insights", "Cash-flow forecast, month summary, spending by category, upcoming bills.", route.Finance,
		[]string{"/v1/insights", "/v1/bills"}},
}

// tagFor is rt's resource tag: the one with the longest prefix of its
// pattern (/v1/convert/batch is a batch, not a conversion).
func tagFor(rt route.Route) (string, error) {
	name, best := "", 0
	for _, t := range resourceTags {
		if t.surface != "" && t.surface != rt.Surface {
			continue
		}
		for _, p := range t.prefixes {
			if strings.HasPrefix(rt.Pattern, p) && len(p) > best {
				name, best = t.name, len(p)
			}
		}
	}
	if name == "" {
		return "", fmt.Errorf("%s %s has no resource tag: add it to resourceTags (gateway/openapi/gen/tags.go)", rt.Method, rt.Pattern)
	}
	return name, nil
}

// tag sets each operation's tags (one per surface serving it) and the
// document's tag list: only the tags in use, described, in reading order.
func (b *builder) tag(op *openapi3.Operation, rts []route.Route) error {
	op.Tags = nil
	for _, rt := range rts {
		name, err := tagFor(rt)
		if err != nil {
			return err
		}
		if !slices.Contains(op.Tags, name) {
			op.Tags = append(op.Tags, name)
		}
	}
	return nil
}

// tagList is the document's tags: those operations use, in reading order.
func (b *builder) tagList() {
	used := map[string]bool{}
	for _, item := range b.doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, t := range op.Tags {
				used[t] = true
			}
		}
	}
	b.doc.Tags = nil
	for _, t := range resourceTags {
		if used[t.name] && t.description != "" {
			b.doc.Tags = append(b.doc.Tags, &openapi3.Tag{Name: t.name, Description: t.description})
			used[t.name] = false
		}
	}
}
