// Package grpcapi serves the metering service's gRPC contract
// (proto/metering/v1) on top of the metering, billing, identity and notify
// Services (Services).
package grpcapi

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission/limitswire"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// Services are the metering service's domain packages the APIs serve.
type Services struct {
	Metering *metering.Service
	Billing  *billing.Service
	Identity *identity.Service
	Notify   *notify.Service
}

// Register adds CredentialService, UsageService, BillingService, OAuthService,
// PortalService and the internal UsageRefundService to s.
func Register(s grpc.ServiceRegistrar, svcs Services) {
	svc := svcs.Metering
	meteringv1.RegisterCredentialServiceServer(s, &credentialServer{svc: svc})
	meteringv1.RegisterUsageServiceServer(s, &usageServer{svc: svc})
	meteringv1.RegisterBillingServiceServer(s, &billingServer{svc: svc})
	meteringv1.RegisterPortalServiceServer(s, &portalServer{svc: svc, billing: svcs.Billing, identity: svcs.Identity, notify: svcs.Notify})
	meteringv1.RegisterOAuthServiceServer(s, &oauthServer{identity: svcs.Identity})
	meteringv1.RegisterUsageRefundServiceServer(s, &refundServer{svc: svc})
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
		return nil, problem.New(problem.Unauthorized, "invalid credential")
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

type usageServer struct {
	meteringv1.UnimplementedUsageServiceServer
	svc *metering.Service
}

func (s *usageServer) GetUsage(ctx context.Context, _ *meteringv1.GetUsageRequest) (*meteringv1.GetUsageResponse, error) {
	p, ok := principal.FromIncoming(ctx)
	if !ok {
		return nil, problem.New(problem.Unauthorized, "no caller")
	}
	u, err := s.svc.Usage(ctx, p.AccountID)
	if err != nil {
		return nil, storeError(err)
	}
	return usageProto(u), nil
}

func usageProto(u metering.UsageSummary) *meteringv1.GetUsageResponse {
	out := &meteringv1.GetUsageResponse{
		Plan: u.Plan, MonthlyQuota: int32(u.MonthlyQuota), Used: int32(u.Used), Remaining: int32(u.Remaining),
		OverageAllowed: u.OverageAllowed, OverageBlocked: u.OverageBlocked, OverageCapCents: capValue(u.OverageCapCents),
		Currency: u.Currency, PeriodStart: timestamppb.New(u.PeriodStart), PeriodEnd: timestamppb.New(u.PeriodEnd),
		ResetsAt: timestamppb.New(u.PeriodEnd), TestQuota: int32(u.TestQuota), TestUsed: int32(u.TestUsed),
		TestRemaining: int32(u.TestRemaining), ScheduledPlan: structpb.NewNullValue(),
		ScheduledPlanAt: structpb.NewNullValue(), PaymentState: u.PaymentState,
	}
	if u.ScheduledAt != nil {
		out.ScheduledPlan = structpb.NewStringValue(u.ScheduledPlan)
		// The form protojson gives a Timestamp: RFC 3339 in UTC.
		out.ScheduledPlanAt = structpb.NewStringValue(u.ScheduledAt.UTC().Format(time.RFC3339Nano))
	}
	return out
}

// capValue is the cap as a JSON number, or JSON null when none is set.
func capValue(c *int64) *structpb.Value {
	if c == nil {
		return structpb.NewNullValue()
	}
	return structpb.NewNumberValue(float64(*c)) // cents fit a float64 exactly below 2^53
}

type billingServer struct {
	meteringv1.UnimplementedBillingServiceServer
	svc *metering.Service
}

func (s *billingServer) SetBillingLimits(ctx context.Context, req *meteringv1.SetBillingLimitsRequest) (*meteringv1.SetBillingLimitsResponse, error) {
	p, ok := principal.FromIncoming(ctx)
	if !ok {
		return nil, problem.New(problem.Unauthorized, "no caller")
	}
	change := metering.BillingChange{HardStop: req.HardStop, ClearCap: req.GetClearOverageCap()}
	if req.OverageCapCents != nil {
		v := int64(req.GetOverageCapCents())
		change.OverageCapCents = &v
	}
	a, err := s.svc.SetBillingLimits(ctx, p.AccountID, change)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.SetBillingLimitsResponse{Limits: &meteringv1.BillingLimits{
		HardStop: a.HardStop, OverageCapCents: capValue(a.OverageCapCents), Currency: string(a.BillingCurrency),
	}}
	if u, err := s.svc.Usage(ctx, p.AccountID); err == nil {
		out.Usage = usageProto(u)
	}
	return out, nil
}

// storeError answers a database that did not answer as 503 unavailable with
// Retry-After (pg.Unavailable, the one classification); any other error goes
// on as it is (a problem, or internal through the interceptor).
func storeError(err error) error {
	if p := pg.UnavailableProblem(err); p != nil {
		return p
	}
	return err
}
