package grpcapi

import (
	"context"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
)

// sandboxServer is SandboxService: finance credentials on the finance
// sandbox's grants, for a conversion credential with finance_sandbox:manage
// (POST /v1/sandbox/credentials).
type sandboxServer struct {
	meteringv1.UnimplementedSandboxServiceServer
	svc *metering.Service
}

func (s *sandboxServer) CreateSandboxCredential(ctx context.Context, req *meteringv1.CreateSandboxCredentialRequest) (*meteringv1.CreateSandboxCredentialResponse, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	// The gateway checked the scope; this service is reached only through
	// that route, but a principal of another surface never gets here.
	if p.Surface != principal.SurfaceConversion || !p.HasScope(metering.ScopeFinanceSandboxManage) {
		return nil, problem.New(problem.ForbiddenScope, "the finance sandbox needs a test key with "+metering.ScopeFinanceSandboxManage)
	}
	secret, c, err := s.svc.IssueSandboxCredential(ctx, p.AccountID, metering.SandboxCredentialParams{Mode: p.Mode,
		Name: req.GetName(), Kind: req.GetKind(), Scopes: req.GetScopes(), FinanceUserID: req.GetUserId(), GrantID: req.GetGrantId()})
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.CreateSandboxCredentialResponse{Credential: financeCredentialProto(c), Secret: secret}, nil
}
