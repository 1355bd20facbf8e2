package identity

import (
	"context"
	"slices"

	"github.com/ledgerlane/platform/services/metering"
)

// FinanceCredentialParams is a finance credential asked for in the portal.
type FinanceCredentialParams struct {
	Name          string
	Kind          string // metering.KindAccessToken (default) or metering.KindAPIKey
	Mode          string
	Scopes        []string // empty: the finance read scopes
	FinanceUserID string
	GrantID       string
}

// IssuePortalFinanceCredential issues a finance credential for the account,
// by the rules meteringctl's `key issue --surface finance` follows
// (IssueCredential, never as an operator): the user must be the account's
// and the grant the user's, which the FinanceDirectory checks. The grant's
// privacy settings (redacted fields, excluded accounts and categories,
// writes_enabled) are the finance service's, applied on every request.
func (s *Service) IssuePortalFinanceCredential(ctx context.Context, accountID string, p FinanceCredentialParams) (string, metering.Credential, error) {
	if p.Kind == "" {
		p.Kind = metering.KindAccessToken
	}
	return s.accounts.IssueCredential(ctx, metering.IssueParams{AccountID: accountID, Name: p.Name, Kind: p.Kind, Surface: metering.SurfaceFinance,
		Mode: p.Mode, Scopes: p.Scopes, FinanceUserID: p.FinanceUserID, GrantID: p.GrantID})
}

// PortalFinanceCredentials returns the account's finance credentials,
// revoked ones too, oldest first.
func (s *Service) PortalFinanceCredentials(ctx context.Context, accountID string) ([]metering.Credential, error) {
	all, err := s.accounts.ListCredentials(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c metering.Credential) bool { return c.Surface != metering.SurfaceFinance }), nil
}
