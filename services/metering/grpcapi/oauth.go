package grpcapi

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
)

// oauthServer is OAuthService, behind the public token route.
type oauthServer struct {
	meteringv1.UnimplementedOAuthServiceServer
	identity *identity.Service
}

func (s *oauthServer) Token(ctx context.Context, req *meteringv1.TokenRequest) (*meteringv1.TokenResponse, error) {
	tok, err := s.identity.ClientCredentialsToken(ctx, identity.TokenRequest{GrantType: req.GetGrantType(),
		ClientID: req.GetClientId(), ClientSecret: req.GetClientSecret(), Scope: req.GetScope()})
	var oe *identity.OAuthError
	if errors.As(err, &oe) {
		// An OAuth refusal is an answer, not a failure: the edge renders it
		// in RFC 6749's shape.
		return &meteringv1.TokenResponse{Error: oe.Code, ErrorDescription: oe.Description}, nil
	}
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.TokenResponse{AccessToken: tok.AccessToken, TokenType: "Bearer",
		ExpiresIn: int64(tok.ExpiresIn.Seconds()), Scope: strings.Join(tok.Scopes, " ")}, nil
}

func oauthClientProto(c identity.OAuthClient) *meteringv1.PortalOAuthClient {
	out := &meteringv1.PortalOAuthClient{Id: c.ID, Name: c.Name, ClientId: c.ClientID, Scopes: c.Scopes,
		CreatedAt: timestamppb.New(c.CreatedAt)}
	if c.RevokedAt != nil {
		out.RevokedAt = timestamppb.New(*c.RevokedAt)
	}
	return out
}

func (s *portalServer) ListOAuthClients(ctx context.Context, req *meteringv1.ListOAuthClientsRequest) (*meteringv1.ListOAuthClientsResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	cs, err := s.identity.OAuthClients(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.ListOAuthClientsResponse{DefaultScopes: metering.DefaultConversionScopes(), OptInScopes: metering.OptInConversionScopes()}
	for _, c := range cs {
		out.Clients = append(out.Clients, oauthClientProto(c))
	}
	return out, nil
}

func (s *portalServer) CreateOAuthClient(ctx context.Context, req *meteringv1.CreateOAuthClientRequest) (*meteringv1.CreateOAuthClientResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	secret, c, err := s.identity.CreateOAuthClient(ctx, si.Account.ID, req.GetName(), req.GetScopes())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.CreateOAuthClientResponse{Client: oauthClientProto(c), Secret: secret}, nil
}

func (s *portalServer) RevokeOAuthClient(ctx context.Context, req *meteringv1.RevokeOAuthClientRequest) (*meteringv1.RevokeOAuthClientResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	if err := s.identity.RevokeOAuthClient(ctx, si.Account.ID, req.GetClientId()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RevokeOAuthClientResponse{}, nil
}

func (s *portalServer) RequestPasswordReset(ctx context.Context, req *meteringv1.RequestPasswordResetRequest) (*meteringv1.RequestPasswordResetResponse, error) {
	if err := s.identity.RequestPasswordReset(ctx, req.GetEmail(), req.GetLinkBase()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RequestPasswordResetResponse{}, nil
}

func (s *portalServer) GetPasswordReset(ctx context.Context, req *meteringv1.GetPasswordResetRequest) (*meteringv1.GetPasswordResetResponse, error) {
	u, err := s.identity.PasswordResetUser(ctx, req.GetResetToken())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.GetPasswordResetResponse{Email: u.Email}, nil
}

func (s *portalServer) ResetPassword(ctx context.Context, req *meteringv1.ResetPasswordRequest) (*meteringv1.ResetPasswordResponse, error) {
	if err := s.identity.ResetPassword(ctx, req.GetResetToken(), req.GetPassword()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.ResetPasswordResponse{}, nil
}

func (s *portalServer) SendVerification(ctx context.Context, req *meteringv1.SendVerificationRequest) (*meteringv1.SendVerificationResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	if err := s.identity.SendVerification(ctx, si.User.ID, req.GetLinkBase()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SendVerificationResponse{}, nil
}

func (s *portalServer) VerifyEmail(ctx context.Context, req *meteringv1.VerifyEmailRequest) (*meteringv1.VerifyEmailResponse, error) {
	if err := s.identity.VerifyEmail(ctx, req.GetVerifyToken()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.VerifyEmailResponse{}, nil
}
