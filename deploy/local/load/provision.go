package load

import (
	"context"
	"fmt"

	"github.com/ledgerlane/platform/services/metering"
)

// Provision creates n accounts on plan through the metering service (the
// one operators use: in process for the local stack, or over the metering
// database as meteringctl does), each with one live conversion key that
// also carries usage:read, so the tool can read the account's usage back.
// Names carry runID so runs against one database stay apart.
func Provision(ctx context.Context, svc *metering.Service, n int, plan, runID string) ([]Account, error) {
	if _, ok := metering.PlanByID(plan); !ok {
		return nil, fmt.Errorf("unknown plan %q", plan)
	}
	scopes := append(metering.DefaultConversionScopes(), metering.ScopeUsageRead)
	out := make([]Account, 0, n)
	for i := range n {
		a, err := svc.CreateAccount(ctx, fmt.Sprintf("Load %s %03d", runID, i+1), plan, metering.USD)
		if err != nil {
			return nil, fmt.Errorf("account %d: %w", i+1, err)
		}
		secret, _, err := svc.IssueCredential(ctx, metering.IssueParams{
			AccountID: a.ID, Name: "load", Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion,
			Mode: metering.ModeLive, Scopes: scopes, Operator: true,
		})
		if err != nil {
			return nil, fmt.Errorf("key of account %d: %w", i+1, err)
		}
		out = append(out, Account{ID: a.ID, Key: secret})
	}
	return out, nil
}
