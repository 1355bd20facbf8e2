package grpcapi

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
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

func oauthClientProto(c identity.OAuthClient) *meteringv1.OAuthClient {
	out := &meteringv1.OAuthClient{Id: c.ID, Name: c.Name, ClientId: c.ClientID, Scopes: c.Scopes,
		CreatedAt: timestamppb.New(c.CreatedAt)}
	if c.RevokedAt != nil {
		out.RevokedAt = timestamppb.New(*c.RevokedAt)
	}
	return out
}

func (s *oauthServer) ListOAuthClients(ctx context.Context, _ *meteringv1.ListOAuthClientsRequest) (*meteringv1.ListOAuthClientsResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.ListOAuthClientsResponse, error) {
		cs, err := s.identity.OAuthClients(ctx, p.AccountID)
		return &meteringv1.ListOAuthClientsResponse{Clients: each(cs, oauthClientProto), DefaultScopes: metering.DefaultConversionScopes(),
			OptInScopes: metering.OptInConversionScopes()}, err
	})
}

func (s *oauthServer) CreateOAuthClient(ctx context.Context, req *meteringv1.CreateOAuthClientRequest) (*meteringv1.CreateOAuthClientResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.CreateOAuthClientResponse, error) {
		secret, c, err := s.identity.CreateOAuthClient(ctx, p.AccountID, req.GetName(), req.GetScopes())
		return &meteringv1.CreateOAuthClientResponse{Client: oauthClientProto(c), Secret: secret}, err
	})
}

func (s *oauthServer) RevokeOAuthClient(ctx context.Context, req *meteringv1.RevokeOAuthClientRequest) (*meteringv1.RevokeOAuthClientResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.RevokeOAuthClientResponse, error) {
		return &meteringv1.RevokeOAuthClientResponse{}, s.identity.RevokeOAuthClient(ctx, p.AccountID, req.GetClientId())
	})
}
