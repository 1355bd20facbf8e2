package metering

import (
	"fmt"
	"slices"

	"github.com/ledgerlane/platform/pkg/problem"
)

// Conversion scopes, exactly the table of the conversion API's Authentication
// section.
const (
	ScopeConvert     = "convert"
	ScopeNormalize   = "normalize"
	ScopeValidate    = "validate"
	ScopeFormatsRead = "formats:read"
	ScopeJobsRead    = "jobs:read"
	ScopeEnrich      = "enrich"

	ScopeWebhooksManage    = "webhooks:manage"
	ScopeConnectionsManage = "connections:manage"
	// ScopeFinanceSandboxManage is ours: the finance sandbox's routes
	// (/v1/sandbox/…, docs/finance-sandbox.md), which answer test
	// credentials only.
	ScopeFinanceSandboxManage = "finance_sandbox:manage"
	// ScopeFinanceGrantsManage is ours: reading and changing the privacy
	// settings of the account's finance grants (/v1/finance-grants/{id},
	// docs/privacy.md), in the credential's mode.
	ScopeFinanceGrantsManage = "finance_grants:manage"

	// ScopeKeysManage is reserved: no credential can ever carry it, because
	// key lifecycle is portal-only.
	ScopeKeysManage = "keys:manage"
	// ScopeUsageRead is reserved: not assignable from the portal, only by an
	// operator through the admin command.
	ScopeUsageRead = "usage:read"
)

// Finance scopes.
const (
	ScopeTransactionsRead = "transactions:read"
	ScopeCategoriesRead   = "categories:read"
	ScopeAccountsRead     = "accounts:read"
	ScopeBudgetsRead      = "budgets:read"
	ScopeGoalsRead        = "goals:read"
	ScopeHoldingsRead     = "holdings:read"
	ScopeDebtRead         = "debt:read"
	ScopeInsightsRead     = "insights:read"
	ScopeNetWorthRead     = "net_worth:read"

	ScopeTransactionsWrite = "transactions:write"
	ScopeCategoriesWrite   = "categories:write"
	ScopeBudgetsWrite      = "budgets:write"
	ScopeGoalsWrite        = "goals:write"
)

// grant says how a scope may be put on a credential.
type grant int

const (
	grantDefault  grant = iota // granted when no scopes are asked for
	grantOptIn                 // only when asked for at creation
	grantOperator              // only when asked for by an operator
	grantNever                 // never
)

type scopeDef struct {
	name  string
	grant grant
}

var conversionScopes = []scopeDef{
	{ScopeConvert, grantDefault},
	{ScopeNormalize, grantDefault},
	{ScopeValidate, grantDefault},
	{ScopeFormatsRead, grantDefault},
	{ScopeJobsRead, grantDefault},
	{ScopeEnrich, grantDefault},
	{ScopeWebhooksManage, grantOptIn},
	{ScopeConnectionsManage, grantOptIn},
	{ScopeFinanceSandboxManage, grantOptIn},
	{ScopeFinanceGrantsManage, grantOptIn},
	{ScopeKeysManage, grantNever},
	{ScopeUsageRead, grantOperator},
}

// The finance spec names only the write scopes; reads are our decision. Reads
// are the default and writes opt-in, mirroring the conversion table.
var financeScopes = []scopeDef{
	{ScopeTransactionsRead, grantDefault},
	{ScopeCategoriesRead, grantDefault},
	{ScopeAccountsRead, grantDefault},
	{ScopeBudgetsRead, grantDefault},
	{ScopeGoalsRead, grantDefault},
	{ScopeHoldingsRead, grantDefault},
	{ScopeDebtRead, grantDefault},
	{ScopeInsightsRead, grantDefault},
	{ScopeNetWorthRead, grantDefault},
	{ScopeTransactionsWrite, grantOptIn},
	{ScopeCategoriesWrite, grantOptIn},
	{ScopeBudgetsWrite, grantOptIn},
	{ScopeGoalsWrite, grantOptIn},
}

func scopesWith(defs []scopeDef, g grant) []string {
	var out []string
	for _, d := range defs {
		if d.grant == g {
			out = append(out, d.name)
		}
	}
	return out
}

// DefaultConversionScopes are the six scopes a conversion key gets when none
// are asked for.
func DefaultConversionScopes() []string { return scopesWith(conversionScopes, grantDefault) }

// OptInConversionScopes are granted only when asked for at key creation.
func OptInConversionScopes() []string { return scopesWith(conversionScopes, grantOptIn) }

// FinanceReadScopes are the finance read scopes, the default for a finance
// credential.
func FinanceReadScopes() []string { return scopesWith(financeScopes, grantDefault) }

// FinanceWriteScopes are granted only when asked for.
func FinanceWriteScopes() []string { return scopesWith(financeScopes, grantOptIn) }

// DefaultScopes returns what a credential of surface gets when no scopes are
// asked for.
func DefaultScopes(surface string) []string {
	switch surface {
	case SurfaceConversion:
		return DefaultConversionScopes()
	case SurfaceFinance:
		return FinanceReadScopes()
	}
	return nil
}

// ValidateScopes checks that scopes may be put on a credential of surface and
// returns them deduplicated in catalogue order. operator is true only for the
// admin command; it unlocks usage:read and nothing else. Errors are
// invalid-input problems naming the "scopes" field.
func ValidateScopes(surface string, scopes []string, operator bool) ([]string, error) {
	var own, other []scopeDef
	switch surface {
	case SurfaceConversion:
		own, other = conversionScopes, financeScopes
	case SurfaceFinance:
		own, other = financeScopes, conversionScopes
	default:
		return nil, problem.New(problem.InvalidInput, fmt.Sprintf("unknown surface %q", surface)).WithField("surface")
	}
	if len(scopes) == 0 {
		return nil, invalidScopes("at least one scope is required")
	}
	find := func(defs []scopeDef, name string) (scopeDef, bool) {
		i := slices.IndexFunc(defs, func(d scopeDef) bool { return d.name == name })
		if i < 0 {
			return scopeDef{}, false
		}
		return defs[i], true
	}
	for _, s := range scopes {
		d, ok := find(own, s)
		if !ok {
			if _, theirs := find(other, s); theirs {
				return nil, invalidScopes(fmt.Sprintf("scope %q does not belong to the %s surface", s, surface))
			}
			return nil, invalidScopes(fmt.Sprintf("unknown scope %q", s))
		}
		switch {
		case d.grant == grantNever:
			return nil, invalidScopes(fmt.Sprintf("scope %q is reserved: no credential can carry it", s))
		case d.grant == grantOperator && !operator:
			return nil, invalidScopes(fmt.Sprintf("scope %q is reserved for operators", s))
		}
	}
	var out []string
	for _, d := range own {
		if slices.Contains(scopes, d.name) {
			out = append(out, d.name)
		}
	}
	return out, nil
}

func invalidScopes(detail string) error {
	return problem.New(problem.InvalidInput, detail).WithField("scopes")
}
