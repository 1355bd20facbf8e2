// Package grpcapi serves the metering service's gRPC contract
// (proto/metering/v1) on top of metering.Service.
package grpcapi

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/problem"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
)

// Register adds CredentialService, UsageService and BillingService to s.
// Usage and billing answer Unimplemented until they are built.
func Register(s grpc.ServiceRegistrar, svc *metering.Service) {
	meteringv1.RegisterCredentialServiceServer(s, &credentialServer{svc: svc})
	meteringv1.RegisterUsageServiceServer(s, usageServer{})
	meteringv1.RegisterBillingServiceServer(s, billingServer{})
}

type credentialServer struct {
	meteringv1.UnimplementedCredentialServiceServer
	svc *metering.Service
}

func (s *credentialServer) ResolveCredential(ctx context.Context, req *meteringv1.ResolveCredentialRequest) (*meteringv1.ResolveCredentialResponse, error) {
	c, err := s.svc.Resolve(ctx, req.GetSecret())
	switch {
	case errors.Is(err, metering.ErrNotFound):
		// One answer for unknown, malformed and revoked, so the edge cannot
		// tell them apart either.
		return nil, problem.Error(problem.Unauthorized, "invalid credential")
	case err != nil:
		// Fail closed but retryable: an outage is not a bad key. The Service
		// has logged the cause.
		return nil, problem.Error(problem.Unavailable, "credential store unavailable")
	}
	return &meteringv1.ResolveCredentialResponse{Principal: &meteringv1.Principal{
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

// usageServer and billingServer hold the place of the public usage and billing
// RPCs until a later issue builds them.
type usageServer struct {
	meteringv1.UnimplementedUsageServiceServer
}

type billingServer struct {
	meteringv1.UnimplementedBillingServiceServer
}
