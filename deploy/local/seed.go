package local

import (
	"context"
	"time"

	financeseed "github.com/ledgerlane/platform/services/finance/seed"
	financeserver "github.com/ledgerlane/platform/services/finance/server"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/identity"
	meteringserver "github.com/ledgerlane/platform/services/metering/server"
)

// DemoUserEmail is the demo account's portal user, who receives its usage
// alert e-mails.
const DemoUserEmail = "owner@demo.example"

// Key is one demo credential, as printed at start and written to
// LOCAL_KEYS_FILE.
type Key struct {
	Name   string   `json:"name"`
	Key    string   `json:"key"`
	Scopes []string `json:"scopes"`
}

// seed seeds the demo account (seed) into the finance and metering services
// and counts cfg.DemoUsage live conversions in its window on counters.
func (s *Stack) seed(ctx context.Context, cfg Config, fin *financeserver.Server, met *meteringserver.Server, counters *admission.Controller) error {
	demo, acct, keys, err := seed(ctx, fin.Store(), met.Service(), met.Identity(), cfg.DemoPlan, cfg.Now())
	if err != nil {
		return err
	}
	s.Demo, s.Keys, s.AccountID = demo, keys, acct.ID
	if cfg.DemoUsage > 0 {
		l, err := met.Service().Limits(ctx, acct.ID)
		if err != nil {
			return err
		}
		return counters.Reconcile(ctx, admission.Request{AccountID: acct.ID, Metered: true, Limits: l}, cfg.DemoUsage)
	}
	return nil
}

// seed creates one metering account on plan, its demo finance user with
// about two years of data, and the seven demo credentials. The account is
// new on every start and the user's ids derive from it, so on a database
// that outlives a start each start seeds beside the earlier ones.
func seed(ctx context.Context, fs financeseed.Store, ms *metering.Service, people *identity.Service, plan string, now time.Time) (financeseed.DemoData, metering.Account, []Key, error) {
	var demo financeseed.DemoData
	acct, err := ms.CreateAccount(ctx, "Demo Company", plan, metering.USD)
	if err != nil {
		return demo, acct, nil, err
	}
	demo, err = financeseed.Demo(ctx, fs, acct.ID, now)
	if err != nil {
		return demo, acct, nil, err
	}
	// The account's one portal user receives its usage alert e-mails.
	if _, err := people.AddPortalUser(ctx, acct.ID, DemoUserEmail, "Demo Owner"); err != nil {
		return demo, acct, nil, err
	}
	conv := metering.DefaultConversionScopes()
	financeRead := metering.FinanceReadScopes()
	financeWrite := append(metering.FinanceReadScopes(), metering.FinanceWriteScopes()...)
	specs := []struct {
		name     string
		kind     string
		surface  string
		mode     string
		scopes   []string
		operator bool
		grant    string
	}{
		{"conversion-live", metering.KindAPIKey, metering.SurfaceConversion, metering.ModeLive, conv, false, ""},
		{"conversion-test", metering.KindAPIKey, metering.SurfaceConversion, metering.ModeTest, conv, false, ""},
		{"conversion-all", metering.KindAPIKey, metering.SurfaceConversion, metering.ModeLive, append(append([]string{}, conv...), "webhooks:manage", "connections:manage", "finance_grants:manage"), false, ""},
		{"conversion-usage", metering.KindAPIKey, metering.SurfaceConversion, metering.ModeLive, append(append([]string{}, conv...), "usage:read"), true, ""},
		{"finance-read", metering.KindAccessToken, metering.SurfaceFinance, metering.ModeLive, financeRead, false, demo.GrantReadID},
		{"finance-write", metering.KindAccessToken, metering.SurfaceFinance, metering.ModeLive, financeWrite, false, demo.GrantWriteID},
		{"finance-redacted", metering.KindAccessToken, metering.SurfaceFinance, metering.ModeLive, financeWrite, false, demo.GrantRedactedID},
	}
	keys := make([]Key, 0, len(specs))
	for _, sp := range specs {
		p := metering.IssueParams{
			AccountID: acct.ID, Name: sp.name, Kind: sp.kind, Surface: sp.surface, Mode: sp.mode,
			Scopes: sp.scopes, Operator: sp.operator,
		}
		if sp.surface == metering.SurfaceFinance {
			p.FinanceUserID, p.GrantID = demo.UserID, sp.grant
		}
		secret, cred, err := ms.IssueCredential(ctx, p)
		if err != nil {
			return demo, acct, nil, err
		}
		keys = append(keys, Key{Name: sp.name, Key: secret, Scopes: cred.Scopes})
	}
	return demo, acct, keys, nil
}
