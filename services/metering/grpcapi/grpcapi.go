// Package grpcapi serves the metering service's gRPC contract
// (proto/metering/v1) on top of the metering, billing, identity and notify
// Services (Services).
package grpcapi

import (
	"context"
	"slices"
	"time"

	"google.golang.org/grpc"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/principal"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
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

// Register adds CredentialService, UsageService, BillingService,
// OAuthService, IdentityService and the internal UsageRefundService to s.
// Every call names no account: it acts for its principal's (docs/portal.md
// for the portal's).
func Register(s grpc.ServiceRegistrar, svcs Services) {
	svc := svcs.Metering
	meteringv1.RegisterCredentialServiceServer(s, &credentialServer{svc: svc, identity: svcs.Identity})
	meteringv1.RegisterUsageServiceServer(s, &usageServer{svc: svc, notify: svcs.Notify})
	meteringv1.RegisterBillingServiceServer(s, &billingServer{svc: svc, billing: svcs.Billing})
	meteringv1.RegisterIdentityServiceServer(s, &identityServer{identity: svcs.Identity})
	meteringv1.RegisterOAuthServiceServer(s, &oauthServer{identity: svcs.Identity})
	meteringv1.RegisterUsageRefundServiceServer(s, &refundServer{svc: svc})
	meteringv1.RegisterSandboxServiceServer(s, &sandboxServer{svc: svc})
}

type usageServer struct {
	meteringv1.UnimplementedUsageServiceServer
	svc    *metering.Service
	notify *notify.Service
}

func (s *usageServer) GetUsage(ctx context.Context, _ *meteringv1.GetUsageRequest) (*meteringv1.GetUsageResponse, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.svc.Usage(ctx, p.AccountID)
	if err != nil {
		return nil, storeError(err)
	}
	return usageProto(u), nil
}

// GetDailyUsage answers the account's metered units per day (GET
// /v1/usage/daily).
func (s *usageServer) GetDailyUsage(ctx context.Context, req *meteringv1.GetDailyUsageRequest) (*meteringv1.GetDailyUsageResponse, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	q := metering.DailyQuery{CredentialID: req.GetCredentialId()}
	if req.Days != nil {
		if q.Days = int(req.GetDays()); q.Days < 1 {
			q.Days = -1 // "days=0" is out of range, not the period
		}
	}
	u, err := s.svc.DailyUsage(ctx, p.AccountID, q)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.GetDailyUsageResponse{StartDate: u.From.Format(time.DateOnly), EndDate: u.To.Format(time.DateOnly),
		PeriodStart: timestamppb.New(u.PeriodStart), PeriodEnd: timestamppb.New(u.PeriodEnd),
		PeriodLive: int32(u.PeriodLive), PeriodUndated: int32(u.PeriodUndated), TestUsed: int32(u.TestUsed), CredentialId: u.CredentialID}
	for _, d := range u.Days {
		out.Days = append(out.Days, &meteringv1.DayUsage{Date: d.Date.Format(time.DateOnly), Live: int32(d.Live), Test: int32(d.Test)})
	}
	for _, c := range u.Credentials {
		out.Credentials = append(out.Credentials, &meteringv1.CredentialUsage{CredentialId: c.CredentialID, Mode: c.Mode, Units: int32(c.Units)})
	}
	return out, nil
}

// ListAlertMails answers the alert mails of the current usage window, not
// the personal mails (resets, invitations) that share the outbox.
func (s *usageServer) ListAlertMails(ctx context.Context, _ *meteringv1.ListAlertMailsRequest) (*meteringv1.ListAlertMailsResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.ListAlertMailsResponse, error) {
		// The window comes from the plan and the clock: no usage counter is read.
		l, err := s.svc.Limits(ctx, p.AccountID)
		if err != nil {
			return nil, err
		}
		mails, err := s.notify.Outbox(ctx, p.AccountID)
		mails = slices.DeleteFunc(mails, func(m notify.OutboxMail) bool {
			return notify.PersonalMail(m.Milestone) || !m.PeriodStart.Equal(l.PeriodStart)
		})
		return &meteringv1.ListAlertMailsResponse{AlertMails: each(mails, alertMailProto)}, err
	})
}

func alertMailProto(m notify.OutboxMail) *meteringv1.AlertMail {
	am := &meteringv1.AlertMail{To: m.To, Subject: m.Subject, CreatedAt: timestamppb.New(m.CreatedAt),
		LastError: m.LastError, GivenUp: m.GivenUp()}
	if m.SentAt != nil {
		am.SentAt = timestamppb.New(*m.SentAt)
	}
	return am
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

// storeError answers a database that did not answer as 503 unavailable with
// Retry-After (pg.Unavailable, the one classification); any other error goes
// on as it is (a problem, or internal through the interceptor).
func storeError(err error) error {
	if p := pg.UnavailableProblem(err); p != nil {
		return p
	}
	return err
}
