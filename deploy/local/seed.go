package local

import (
	"context"
	"fmt"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	financeseed "github.com/ledgerlane/platform/services/finance/seed"
	"github.com/ledgerlane/platform/services/metering"
)

// Key is one demo credential, as printed at start and written to
// LOCAL_KEYS_FILE.
type Key struct {
	Name   string   `json:"name"`
	Key    string   `json:"key"`
	Scopes []string `json:"scopes"`
}

// seed creates one metering account on plan, its demo finance user with
// about two years of data, and the seven demo credentials. The account is
// new on every start and the user's ids derive from it, so on a database
// that outlives a start each start seeds beside the earlier ones.
func seed(ctx context.Context, fs finance.Store, ms *metering.Service, plan string, now time.Time) (financeseed.DemoData, metering.Account, []Key, error) {
	var demo financeseed.DemoData
	acct, err := ms.CreateAccount(ctx, "Demo Company", plan, metering.USD)
	if err != nil {
		return demo, acct, nil, err
	}
	demo, err = financeseed.Demo(ctx, fs, acct.ID, now)
	if err != nil {
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
		{"conversion-all", metering.KindAPIKey, metering.SurfaceConversion, metering.ModeLive, append(append([]string{}, conv...), "webhooks:manage", "connections:manage"), false, ""},
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

// financeDirectory is metering's FinanceDirectory in process: the local stack
// holds both services, so it asks the finance Service directly (a cluster's
// meteringctl asks over gRPC: services/metering/financedir).
type financeDirectory struct{ svc *finance.Service }

// CheckGrant implements metering.FinanceDirectory.
func (d financeDirectory) CheckGrant(ctx context.Context, accountID, userID, grantID string) error {
	check, err := d.svc.CheckGrant(ctx, accountID, userID, grantID)
	switch {
	case err != nil:
		return fmt.Errorf("finance: check grant: %w", err)
	case !check.UserInAccount:
		return metering.ErrFinanceUserNotInAccount
	case !check.GrantOfUser:
		return metering.ErrGrantNotOfUser
	}
	return nil
}
