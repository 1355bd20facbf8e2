package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
)

// ScopeGrants is the conversion-surface scope of /v1/finance-grants (the
// metering scope finance_grants:manage).
const ScopeGrants = "finance_grants:manage"

type grantServer struct {
	financev1.UnimplementedGrantServiceServer
	svc *finance.Service
}

// tenant reads who changes a grant: a conversion credential with
// finance_grants:manage (the gateway checked the scope; checked again here
// since the service is reachable without the edge), in its mode. A finance
// credential never may: these are its own grant's limits.
func tenant(ctx context.Context) (finance.Tenant, error) {
	p, ok := principal.FromIncoming(ctx)
	switch {
	case !ok || p.AccountID == "":
		return finance.Tenant{}, problem.New(problem.Unauthorized, "a credential is required")
	case p.Surface != principal.SurfaceConversion || !p.HasScope(ScopeGrants):
		return finance.Tenant{}, problem.New(problem.ForbiddenScope, "changing a finance grant needs a key with "+ScopeGrants)
	}
	return finance.Tenant{AccountID: p.AccountID, Mode: p.Mode, CredentialID: p.CredentialID, IdempotencyKey: p.IdempotencyKey}, nil
}

func grantProto(g finance.Grant) *financev1.FinanceGrant {
	out := &financev1.FinanceGrant{Id: g.ID, UserId: g.UserID, RedactedFields: nonNil(g.RedactedFields),
		ExcludedAccountIds: nonNil(g.ExcludedAccountIDs), ExcludedCategoryIds: nonNil(g.ExcludedCategoryIDs),
		WritesEnabled: g.WritesEnabled, Version: int32(max(g.Version, 1)), CreatedAt: timestamppb.New(g.CreatedAt)}
	if !g.UpdatedAt.IsZero() {
		out.UpdatedAt = timestamppb.New(g.UpdatedAt)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *grantServer) GetFinanceGrant(ctx context.Context, req *financev1.GetFinanceGrantRequest) (*financev1.GetFinanceGrantResponse, error) {
	t, err := tenant(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.svc.TenantGrant(ctx, t, req.GetId())
	if err != nil {
		return nil, err
	}
	return &financev1.GetFinanceGrantResponse{Grant: grantProto(g)}, nil
}

func (s *grantServer) UpdateFinanceGrant(ctx context.Context, req *financev1.UpdateFinanceGrantRequest) (*financev1.UpdateFinanceGrantResponse, error) {
	t, err := tenant(ctx)
	if err != nil {
		return nil, err
	}
	u := finance.GrantUpdate{ID: req.GetId(), ExpectedVersion: int64(req.GetExpectedVersion()), WritesEnabled: req.WritesEnabled}
	for _, l := range []struct {
		in    *structpb.ListValue
		field string
		out   **[]string
	}{
		{req.GetRedactedFields(), "redacted_fields", &u.RedactedFields},
		{req.GetExcludedAccountIds(), "excluded_account_ids", &u.ExcludedAccountIDs},
		{req.GetExcludedCategoryIds(), "excluded_category_ids", &u.ExcludedCategoryIDs},
	} {
		if *l.out, err = stringsFrom(l.in, l.field); err != nil {
			return nil, err
		}
	}
	res, err := s.svc.UpdateGrantSettings(ctx, t, u)
	if err != nil {
		return nil, err
	}
	if err := markReplayed(ctx, res.Replayed); err != nil {
		return nil, err
	}
	return &financev1.UpdateFinanceGrantResponse{Grant: grantProto(res.Data)}, nil
}

// stringsFrom reads a PATCH list of strings: absent (or JSON null) is nil,
// an array of strings the list, anything else 400 naming field.
func stringsFrom(l *structpb.ListValue, field string) (*[]string, error) {
	if l == nil {
		return nil, nil
	}
	out := make([]string, 0, len(l.GetValues()))
	for _, v := range l.GetValues() {
		s, ok := v.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return nil, problem.New(problem.InvalidInput, field+" must be an array of strings").WithField(field)
		}
		out = append(out, s.StringValue)
	}
	return &out, nil
}
