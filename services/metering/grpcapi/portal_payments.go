package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
)

// The portal's payment-method and finance-credential calls. As every portal
// call, each resolves its session first and acts only on its account.

func methodProto(m billing.PaymentMethod) *meteringv1.PortalPaymentMethod {
	return &meteringv1.PortalPaymentMethod{Id: m.ID, Type: m.Type, Scheme: m.Scheme, Brand: m.Brand, Last4: m.Last4,
		HolderName: m.HolderName, IsDefault: m.IsDefault, CreatedAt: timestamppb.New(m.CreatedAt)}
}

func paymentProto(p billing.Payment) *meteringv1.PortalPayment {
	out := &meteringv1.PortalPayment{Id: p.ID, Purpose: p.Purpose, AmountCents: p.AmountCents, Currency: string(p.Currency),
		Scheme: p.Scheme, State: p.State, FirstDebit: p.FirstDebit, CreatedAt: timestamppb.New(p.CreatedAt),
		SettleBy: timestamppb.New(p.SettleBy), FailureReason: p.FailureReason}
	if p.ResolvedAt != nil {
		out.ResolvedAt = timestamppb.New(*p.ResolvedAt)
	}
	return out
}

func (s *portalServer) ListPaymentMethods(ctx context.Context, req *meteringv1.ListPaymentMethodsRequest) (*meteringv1.ListPaymentMethodsResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	a, err := s.svc.Account(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	ms, err := s.billing.PaymentMethods(ctx, a.ID)
	if err != nil {
		return nil, storeError(err)
	}
	ps, err := s.billing.Payments(ctx, a.ID)
	if err != nil {
		return nil, storeError(err)
	}
	state, err := s.billing.PaymentState(ctx, a.ID)
	if err != nil {
		return nil, storeError(err)
	}
	plan, _ := metering.PlanByID(a.PlanID)
	out := &meteringv1.ListPaymentMethodsResponse{PaymentState: state, Plan: plan.ID, DirectDebitOnly: plan.DirectDebitOnly,
		DirectDebitScheme: billing.SchemeFor(a.BillingCurrency), Currency: string(a.BillingCurrency)}
	for _, m := range ms {
		out.Methods = append(out.Methods, methodProto(m))
	}
	for i := len(ps) - 1; i >= 0; i-- {
		out.Payments = append(out.Payments, paymentProto(ps[i]))
	}
	return out, nil
}

func (s *portalServer) AddPaymentMethod(ctx context.Context, req *meteringv1.AddPaymentMethodRequest) (*meteringv1.AddPaymentMethodResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	m, err := s.billing.AddPaymentMethod(ctx, si.Account.ID, billing.MethodDetails{Type: req.GetType(), Scheme: req.GetScheme(),
		HolderName: req.GetHolderName(), CardNumber: req.GetCardNumber(), ExpMonth: int(req.GetExpMonth()), ExpYear: int(req.GetExpYear()),
		IBAN: req.GetIban(), RoutingNumber: req.GetRoutingNumber(), SortCode: req.GetSortCode(), AccountNumber: req.GetAccountNumber(),
		MakeDefault: req.GetMakeDefault()})
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.AddPaymentMethodResponse{Method: methodProto(m)}, nil
}

func (s *portalServer) SetDefaultPaymentMethod(ctx context.Context, req *meteringv1.SetDefaultPaymentMethodRequest) (*meteringv1.SetDefaultPaymentMethodResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	m, err := s.billing.SetDefaultPaymentMethod(ctx, si.Account.ID, req.GetMethodId())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SetDefaultPaymentMethodResponse{Method: methodProto(m)}, nil
}

func (s *portalServer) RemovePaymentMethod(ctx context.Context, req *meteringv1.RemovePaymentMethodRequest) (*meteringv1.RemovePaymentMethodResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	if err := s.billing.RemovePaymentMethod(ctx, si.Account.ID, req.GetMethodId()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RemovePaymentMethodResponse{}, nil
}

func (s *portalServer) RetryPayment(ctx context.Context, req *meteringv1.RetryPaymentRequest) (*meteringv1.RetryPaymentResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	p, err := s.billing.RetryPayment(ctx, si.Account.ID, req.GetPaymentId())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RetryPaymentResponse{Payment: paymentProto(p)}, nil
}

func financeCredentialProto(c metering.Credential) *meteringv1.PortalFinanceCredential {
	out := &meteringv1.PortalFinanceCredential{Id: c.ID, Name: c.Name, Prefix: c.Prefix, Kind: c.Kind, Mode: c.Mode, Scopes: c.Scopes,
		FinanceUserId: c.FinanceUserID, GrantId: c.GrantID, CreatedAt: timestamppb.New(c.CreatedAt)}
	if c.RevokedAt != nil {
		out.RevokedAt = timestamppb.New(*c.RevokedAt)
	}
	if c.LastUsedAt != nil {
		out.LastUsedAt = timestamppb.New(*c.LastUsedAt)
	}
	return out
}

func (s *portalServer) ListFinanceCredentials(ctx context.Context, req *meteringv1.ListFinanceCredentialsRequest) (*meteringv1.ListFinanceCredentialsResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	cs, err := s.identity.PortalFinanceCredentials(ctx, si.Account.ID)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.ListFinanceCredentialsResponse{DefaultScopes: metering.FinanceReadScopes(), OptInScopes: metering.FinanceWriteScopes()}
	for _, c := range cs {
		out.Credentials = append(out.Credentials, financeCredentialProto(c))
	}
	return out, nil
}

func (s *portalServer) CreateFinanceCredential(ctx context.Context, req *meteringv1.CreateFinanceCredentialRequest) (*meteringv1.CreateFinanceCredentialResponse, error) {
	si, err := s.identity.Session(ctx, req.GetToken())
	if err != nil {
		return nil, storeError(err)
	}
	if err := identity.RequireVerified(si.User, req.GetMode(), req.GetScopes()); err != nil {
		return nil, err
	}
	secret, c, err := s.identity.IssuePortalFinanceCredential(ctx, si.Account.ID, identity.FinanceCredentialParams{Name: req.GetName(),
		Kind: req.GetKind(), Mode: req.GetMode(), Scopes: req.GetScopes(), FinanceUserID: req.GetFinanceUserId(), GrantID: req.GetGrantId()})
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.CreateFinanceCredentialResponse{Credential: financeCredentialProto(c), Secret: secret}, nil
}
