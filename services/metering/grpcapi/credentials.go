package grpcapi

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission/limitswire"
	"github.com/ledgerlane/platform/services/metering/identity"
)

// credentialServer is CredentialService: the edge resolves every presented
// secret through it, and the portal manages the account's keys and finance
// credentials with it.
type credentialServer struct {
	meteringv1.UnimplementedCredentialServiceServer
	svc      *metering.Service
	identity *identity.Service
}

// One answer for unknown, malformed, revoked and expired, so the edge cannot
// tell them apart either.
var errInvalidCredential = problem.New(problem.Unauthorized, "invalid credential")

func (s *credentialServer) ResolveCredential(ctx context.Context, req *meteringv1.ResolveCredentialRequest) (*meteringv1.ResolveCredentialResponse, error) {
	if strings.HasPrefix(req.GetSecret(), "ps_") {
		return s.resolveSession(ctx, req.GetSecret())
	}
	c, err := s.svc.Resolve(ctx, req.GetSecret())
	switch {
	case errors.Is(err, metering.ErrNotFound):
		return nil, errInvalidCredential
	case err != nil:
		// Fail closed but retryable: an outage is not a bad key. The Service
		// has logged the cause.
		return nil, problem.New(problem.Unavailable, "credential store unavailable")
	}
	l, err := s.svc.Limits(ctx, c.AccountID)
	if err != nil {
		return nil, problem.New(problem.Unavailable, "credential store unavailable")
	}
	return &meteringv1.ResolveCredentialResponse{Limits: limitswire.ToProto(l), Principal: &meteringv1.Principal{
		AccountId:     c.AccountID,
		CredentialId:  c.ID,
		Kind:          c.Kind,
		Surface:       c.Surface,
		Mode:          c.Mode,
		Scopes:        c.Scopes,
		FinanceUserId: c.FinanceUserID,
		GrantId:       c.GrantID,
	}}, nil
}

// sessionScopes are what a signed-in person may do: manage the account's
// credentials and billing (keys:manage, reserved to sessions), read its
// usage, and manage its webhook endpoints on the portal's Webhooks page
// (webhooks:manage, which a key may also carry: docs/scopes.md).
var sessionScopes = []string{principal.ScopeKeysManage, "usage:read", "webhooks:manage"}

// resolveSession answers a portal session as a principal of the portal
// surface, with the person as the portal shows them. It carries no limits:
// the portal's pages are not metered.
func (s *credentialServer) resolveSession(ctx context.Context, token string) (*meteringv1.ResolveCredentialResponse, error) {
	si, err := s.identity.Session(ctx, token)
	var pr *problem.Problem
	switch {
	case errors.As(err, &pr) && pr.Type == problem.Unauthorized:
		return nil, errInvalidCredential
	case err != nil:
		return nil, problem.New(problem.Unavailable, "credential store unavailable")
	}
	return &meteringv1.ResolveCredentialResponse{Session: sessionProto(si), Principal: &meteringv1.Principal{
		AccountId: si.Account.ID, CredentialId: si.ID, Kind: "ps", Surface: principal.SurfacePortal,
		Mode: metering.ModeLive, Scopes: sessionScopes, PersonId: si.User.ID,
	}}, nil
}

func keyProto(c metering.Credential) *meteringv1.Key {
	k := &meteringv1.Key{Id: c.ID, Name: c.Name, Prefix: c.Prefix, Mode: c.Mode, Scopes: c.Scopes, CreatedAt: timestamppb.New(c.CreatedAt)}
	if c.RevokedAt != nil {
		k.RevokedAt = timestamppb.New(*c.RevokedAt)
	}
	if c.LastUsedAt != nil {
		k.LastUsedAt = timestamppb.New(*c.LastUsedAt)
	}
	return k
}

func financeCredentialProto(c metering.Credential) *meteringv1.FinanceCredential {
	out := &meteringv1.FinanceCredential{Id: c.ID, Name: c.Name, Prefix: c.Prefix, Kind: c.Kind, Mode: c.Mode, Scopes: c.Scopes,
		FinanceUserId: c.FinanceUserID, GrantId: c.GrantID, CreatedAt: timestamppb.New(c.CreatedAt)}
	if c.RevokedAt != nil {
		out.RevokedAt = timestamppb.New(*c.RevokedAt)
	}
	if c.LastUsedAt != nil {
		out.LastUsedAt = timestamppb.New(*c.LastUsedAt)
	}
	return out
}

func (s *credentialServer) ListKeys(ctx context.Context, _ *meteringv1.ListKeysRequest) (*meteringv1.ListKeysResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.ListKeysResponse, error) {
		cs, err := s.identity.PortalKeys(ctx, p.AccountID)
		return &meteringv1.ListKeysResponse{Keys: each(cs, keyProto), DefaultScopes: metering.DefaultConversionScopes(),
			OptInScopes: metering.OptInConversionScopes()}, err
	})
}

// verified refuses a live credential to a person whose address is not
// verified yet (read from the store, not from what the edge resolved).
func (s *credentialServer) verified(ctx context.Context, p principal.Principal, mode string, scopes []string) error {
	u, err := s.identity.Person(ctx, p.AccountID, p.PersonID)
	if err != nil {
		return err
	}
	return identity.RequireVerified(u, mode, scopes)
}

func (s *credentialServer) CreateKey(ctx context.Context, req *meteringv1.CreateKeyRequest) (*meteringv1.CreateKeyResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.CreateKeyResponse, error) {
		if err := s.verified(ctx, p, req.GetMode(), req.GetScopes()); err != nil {
			return nil, err
		}
		secret, c, err := s.identity.IssuePortalKey(ctx, p.AccountID, identity.PortalKeyParams{Name: req.GetName(), Mode: req.GetMode(), Scopes: req.GetScopes()})
		return &meteringv1.CreateKeyResponse{Key: keyProto(c), Secret: secret}, err
	})
}

func (s *credentialServer) RevokeKey(ctx context.Context, req *meteringv1.RevokeKeyRequest) (*meteringv1.RevokeKeyResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.RevokeKeyResponse, error) {
		return &meteringv1.RevokeKeyResponse{}, s.identity.RevokeAccountCredential(ctx, p.AccountID, req.GetKeyId())
	})
}

func (s *credentialServer) ListFinanceCredentials(ctx context.Context, _ *meteringv1.ListFinanceCredentialsRequest) (*meteringv1.ListFinanceCredentialsResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.ListFinanceCredentialsResponse, error) {
		cs, err := s.identity.PortalFinanceCredentials(ctx, p.AccountID)
		return &meteringv1.ListFinanceCredentialsResponse{Credentials: each(cs, financeCredentialProto),
			DefaultScopes: metering.FinanceReadScopes(), OptInScopes: metering.FinanceWriteScopes()}, err
	})
}

func (s *credentialServer) CreateFinanceCredential(ctx context.Context, req *meteringv1.CreateFinanceCredentialRequest) (*meteringv1.CreateFinanceCredentialResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.CreateFinanceCredentialResponse, error) {
		if err := s.verified(ctx, p, req.GetMode(), req.GetScopes()); err != nil {
			return nil, err
		}
		secret, c, err := s.identity.IssuePortalFinanceCredential(ctx, p.AccountID, identity.FinanceCredentialParams{Name: req.GetName(),
			Kind: req.GetKind(), Mode: req.GetMode(), Scopes: req.GetScopes(), FinanceUserID: req.GetFinanceUserId(), GrantID: req.GetGrantId()})
		return &meteringv1.CreateFinanceCredentialResponse{Credential: financeCredentialProto(c), Secret: secret}, err
	})
}
