package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// portalServer is PortalService: the gateway's HTML portal calls it. Every
// call after sign-in resolves its session token first and acts only on that
// session's account.
type portalServer struct {
	meteringv1.UnimplementedPortalServiceServer
	svc      *metering.Service
	billing  *billing.Service
	identity *identity.Service
	notify   *notify.Service
}

func sessionProto(si identity.SessionInfo) *meteringv1.PortalSession {
	return &meteringv1.PortalSession{UserId: si.User.ID, Email: si.User.Email, Name: si.User.Name,
		AccountId: si.Account.ID, AccountName: si.Account.Name, CsrfToken: si.CSRFToken, ExpiresAt: timestamppb.New(si.ExpiresAt),
		EmailVerified: si.User.EmailVerified}
}

func keyProto(c metering.Credential) *meteringv1.PortalKey {
	k := &meteringv1.PortalKey{Id: c.ID, Name: c.Name, Prefix: c.Prefix, Mode: c.Mode, Scopes: c.Scopes, CreatedAt: timestamppb.New(c.CreatedAt)}
	if c.RevokedAt != nil {
		k.RevokedAt = timestamppb.New(*c.RevokedAt)
	}
	if c.LastUsedAt != nil {
		k.LastUsedAt = timestamppb.New(*c.LastUsedAt)
	}
	return k
}

func (s *portalServer) SignUp(ctx context.Context, req *meteringv1.SignUpRequest) (*meteringv1.SignUpResponse, error) {
	token, si, err := s.identity.SignUp(ctx, req.GetEmail(), req.GetPassword(), req.GetAccountName(), req.GetName())
	if err != nil {
		return nil, storeError(err)
	}
	if base := req.GetVerifyLinkBase(); base != "" {
		// The account exists now: a mail that cannot be queued does not undo
		// it, and the portal offers to send the link again.
		_ = s.identity.SendVerification(ctx, si.User.ID, base)
	}
	return &meteringv1.SignUpResponse{Session: sessionProto(si), Token: token}, nil
}

func (s *portalServer) SignIn(ctx context.Context, req *meteringv1.SignInRequest) (*meteringv1.SignInResponse, error) {
	token, si, err := s.identity.SignIn(ctx, req.GetEmail(), req.GetPassword())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SignInResponse{Session: sessionProto(si), Token: token}, nil
}

func (s *portalServer) GetSession(ctx context.Context, req *meteringv1.GetSessionRequest) (*meteringv1.GetSessionResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.GetSessionResponse{Session: sessionProto(si)}, nil
}

func (s *portalServer) SignOut(ctx context.Context, req *meteringv1.SignOutRequest) (*meteringv1.SignOutResponse, error) {
	if err := s.identity.SignOut(ctx, req.GetToken(), req.GetEverywhere()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SignOutResponse{}, nil
}

func (s *portalServer) ListKeys(ctx context.Context, req *meteringv1.ListKeysRequest) (*meteringv1.ListKeysResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	cs, err := s.identity.PortalKeys(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.ListKeysResponse{DefaultScopes: metering.DefaultConversionScopes(), OptInScopes: metering.OptInConversionScopes()}
	for _, c := range cs {
		out.Keys = append(out.Keys, keyProto(c))
	}
	return out, nil
}

func (s *portalServer) CreateKey(ctx context.Context, req *meteringv1.CreateKeyRequest) (*meteringv1.CreateKeyResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	if err := identity.RequireVerified(si.User, req.GetMode(), req.GetScopes()); err != nil {
		return nil, err
	}
	secret, c, err := s.identity.IssuePortalKey(ctx, si.Account.ID, identity.PortalKeyParams{Name: req.GetName(), Mode: req.GetMode(), Scopes: req.GetScopes()})
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.CreateKeyResponse{Key: keyProto(c), Secret: secret}, nil
}

func (s *portalServer) RevokeKey(ctx context.Context, req *meteringv1.RevokeKeyRequest) (*meteringv1.RevokeKeyResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	if err := s.identity.RevokeAccountCredential(ctx, si.Account.ID, req.GetKeyId()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RevokeKeyResponse{}, nil
}

func (s *portalServer) GetPortalUsage(ctx context.Context, req *meteringv1.GetPortalUsageRequest) (*meteringv1.GetPortalUsageResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	u, err := s.svc.Usage(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.GetPortalUsageResponse{Usage: usageProto(u), HardStop: si.Account.HardStop}
	mails, err := s.notify.Outbox(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	for _, m := range mails {
		if notify.PersonalMail(m.Milestone) || !m.PeriodStart.Equal(u.PeriodStart) {
			continue
		}
		am := &meteringv1.PortalAlertMail{To: m.To, Subject: m.Subject, CreatedAt: timestamppb.New(m.CreatedAt),
			LastError: m.LastError, GivenUp: m.GivenUp()}
		if m.SentAt != nil {
			am.SentAt = timestamppb.New(*m.SentAt)
		}
		out.AlertMails = append(out.AlertMails, am)
	}
	invs, err := s.billing.Invoices(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	for i := len(invs) - 1; i >= 0; i-- {
		inv := invs[i]
		pi := &meteringv1.PortalInvoice{PeriodStart: timestamppb.New(inv.PeriodStart),
			PeriodEnd: timestamppb.New(inv.PeriodEnd), Plan: inv.PlanID, SubtotalCents: inv.SubtotalCents,
			CreditCents: inv.CreditCents, TotalCents: inv.TotalCents,
			CollectionState: inv.Collection.State, CollectionAttempts: int32(inv.Collection.Attempts)}
		// Only a retry's due time: while an attempt runs it is its lease.
		if c := inv.Collection; c.State == billing.CollectionCollecting && c.NextAttemptAt != nil && c.LastError != "" {
			pi.NextAttemptAt = timestamppb.New(*c.NextAttemptAt)
		}
		out.Invoices = append(out.Invoices, pi)
	}
	cur := si.Account.BillingCurrency
	for _, p := range metering.Plans() {
		flat, _ := p.MonthlyPrice.In(cur)
		over, _ := p.OveragePer1000.In(cur)
		out.Plans = append(out.Plans, &meteringv1.PortalPlan{Id: p.ID, IncludedConversions: p.IncludedConversions,
			MonthlyPriceCents: flat, OveragePer_1000Cents: over, HardStop: p.HardStop, DirectDebitOnly: p.DirectDebitOnly})
	}
	return out, nil
}

func (s *portalServer) SetPortalLimits(ctx context.Context, req *meteringv1.SetPortalLimitsRequest) (*meteringv1.SetPortalLimitsResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	l := req.GetLimits()
	change := metering.BillingChange{HardStop: l.HardStop, ClearCap: l.GetClearOverageCap()}
	if l.OverageCapCents != nil {
		v := int64(l.GetOverageCapCents())
		change.OverageCapCents = &v
	}
	a, err := s.svc.SetBillingLimits(ctx, si.Account.ID, change)
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SetPortalLimitsResponse{Limits: &meteringv1.BillingLimits{
		HardStop: a.HardStop, OverageCapCents: capValue(a.OverageCapCents), Currency: string(a.BillingCurrency)}}, nil
}

func (s *portalServer) ChangePortalPlan(ctx context.Context, req *meteringv1.ChangePortalPlanRequest) (*meteringv1.ChangePortalPlanResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	ch, err := s.billing.ChangePlan(ctx, si.Account.ID, req.GetPlan())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.ChangePortalPlanResponse{Kind: ch.Kind, FromPlan: ch.FromPlan, ToPlan: ch.ToPlan,
		EffectiveAt: timestamppb.New(ch.EffectiveAt), ChargeCents: ch.ChargeCents, Canceled: ch.CanceledAt != nil}, nil
}

func personProto(u identity.PortalUser) *meteringv1.PortalPerson {
	return &meteringv1.PortalPerson{Id: u.ID, Email: u.Email, Name: u.Name, CreatedAt: timestamppb.New(u.CreatedAt),
		CanSignIn: u.PasswordHash != "", Invited: u.InviteHash != ""}
}

func (s *portalServer) ListPeople(ctx context.Context, req *meteringv1.ListPeopleRequest) (*meteringv1.ListPeopleResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	us, err := s.identity.PortalUsers(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.ListPeopleResponse{}
	for _, u := range us {
		out.People = append(out.People, personProto(u))
	}
	return out, nil
}

func (s *portalServer) InvitePerson(ctx context.Context, req *meteringv1.InvitePersonRequest) (*meteringv1.InvitePersonResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	u, err := s.identity.Invite(ctx, si.Account.ID, si.User, req.GetEmail(), req.GetLinkBase())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.InvitePersonResponse{Person: personProto(u)}, nil
}

func (s *portalServer) GetInvitation(ctx context.Context, req *meteringv1.GetInvitationRequest) (*meteringv1.GetInvitationResponse, error) {
	u, a, err := s.identity.Invitation(ctx, req.GetInvitation())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.GetInvitationResponse{Email: u.Email, AccountName: a.Name}, nil
}

func (s *portalServer) AcceptInvitation(ctx context.Context, req *meteringv1.AcceptInvitationRequest) (*meteringv1.AcceptInvitationResponse, error) {
	token, si, err := s.identity.AcceptInvite(ctx, req.GetInvitation(), req.GetPassword(), req.GetName())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.AcceptInvitationResponse{Session: sessionProto(si), Token: token}, nil
}
