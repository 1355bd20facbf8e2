package metering

import (
	"context"
	"slices"
)

// FinanceCredentialParams is a finance credential asked for in the portal.
type FinanceCredentialParams struct {
	Name          string
	Kind          string // KindAccessToken (default) or KindAPIKey
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
func (s *Service) IssuePortalFinanceCredential(ctx context.Context, accountID string, p FinanceCredentialParams) (string, Credential, error) {
	if p.Kind == "" {
		p.Kind = KindAccessToken
	}
	return s.IssueCredential(ctx, IssueParams{AccountID: accountID, Name: p.Name, Kind: p.Kind, Surface: SurfaceFinance,
		Mode: p.Mode, Scopes: p.Scopes, FinanceUserID: p.FinanceUserID, GrantID: p.GrantID})
}

// PortalFinanceCredentials returns the account's finance credentials,
// revoked ones too, oldest first.
func (s *Service) PortalFinanceCredentials(ctx context.Context, accountID string) ([]Credential, error) {
	all, err := s.store.ListCredentials(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c Credential) bool { return c.Surface != SurfaceFinance }), nil
}
