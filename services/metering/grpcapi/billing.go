package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
)

// billingServer is BillingService: spend caps (POST /v1/portal/billing/limits,
// also what the portal's usage page posts), and the account holder's plan,
// invoices and payment methods.
type billingServer struct {
	meteringv1.UnimplementedBillingServiceServer
	svc     *metering.Service
	billing *billing.Service
}

func limitsProto(a metering.Account) *meteringv1.BillingLimits {
	return &meteringv1.BillingLimits{HardStop: a.HardStop, OverageCapCents: capValue(a.OverageCapCents), Currency: string(a.BillingCurrency)}
}

func (s *billingServer) SetBillingLimits(ctx context.Context, req *meteringv1.SetBillingLimitsRequest) (*meteringv1.SetBillingLimitsResponse, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
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
	out := &meteringv1.SetBillingLimitsResponse{Limits: limitsProto(a)}
	if u, err := s.svc.Usage(ctx, p.AccountID); err == nil {
		out.Usage = usageProto(u)
	}
	return out, nil
}

func invoiceProto(inv billing.Invoice) *meteringv1.Invoice {
	out := &meteringv1.Invoice{PeriodStart: timestamppb.New(inv.PeriodStart),
		PeriodEnd: timestamppb.New(inv.PeriodEnd), Plan: inv.PlanID, SubtotalCents: inv.SubtotalCents,
		CreditCents: inv.CreditCents, TotalCents: inv.TotalCents,
		CollectionState: inv.Collection.State, CollectionAttempts: int32(inv.Collection.Attempts)}
	// Only a retry's due time: while an attempt runs it is its lease.
	if c := inv.Collection; c.State == billing.CollectionCollecting && c.NextAttemptAt != nil && c.LastError != "" {
		out.NextAttemptAt = timestamppb.New(*c.NextAttemptAt)
	}
	return out
}

func (s *billingServer) GetBilling(ctx context.Context, _ *meteringv1.GetBillingRequest) (*meteringv1.GetBillingResponse, error) {
	p, err := holder(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.svc.Account(ctx, p.AccountID)
	if err != nil {
		return nil, storeError(err)
	}
	invs, err := s.billing.Invoices(ctx, a.ID)
	if err != nil {
		return nil, storeError(err)
	}
	out := &meteringv1.GetBillingResponse{Limits: limitsProto(a)}
	for i := len(invs) - 1; i >= 0; i-- {
		out.Invoices = append(out.Invoices, invoiceProto(invs[i]))
	}
	for _, pl := range metering.Plans() {
		flat, _ := pl.MonthlyPrice.In(a.BillingCurrency)
		over, _ := pl.OveragePer1000.In(a.BillingCurrency)
		out.Plans = append(out.Plans, &meteringv1.Plan{Id: pl.ID, IncludedConversions: pl.IncludedConversions,
			MonthlyPriceCents: flat, OveragePer_1000Cents: over, HardStop: pl.HardStop, DirectDebitOnly: pl.DirectDebitOnly})
	}
	return out, nil
}

func (s *billingServer) ChangePlan(ctx context.Context, req *meteringv1.ChangePlanRequest) (*meteringv1.ChangePlanResponse, error) {
	p, err := holder(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := s.billing.ChangePlan(ctx, p.AccountID, req.GetPlan())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.ChangePlanResponse{Kind: ch.Kind, FromPlan: ch.FromPlan, ToPlan: ch.ToPlan,
		EffectiveAt: timestamppb.New(ch.EffectiveAt), ChargeCents: ch.ChargeCents, Canceled: ch.CanceledAt != nil}, nil
}

func methodProto(m billing.PaymentMethod) *meteringv1.PaymentMethod {
	return &meteringv1.PaymentMethod{Id: m.ID, Type: m.Type, Scheme: m.Scheme, Brand: m.Brand, Last4: m.Last4,
		HolderName: m.HolderName, IsDefault: m.IsDefault, CreatedAt: timestamppb.New(m.CreatedAt)}
}

func paymentProto(p billing.Payment) *meteringv1.Payment {
	out := &meteringv1.Payment{Id: p.ID, Purpose: p.Purpose, AmountCents: p.AmountCents, Currency: string(p.Currency),
		Scheme: p.Scheme, State: p.State, FirstDebit: p.FirstDebit, CreatedAt: timestamppb.New(p.CreatedAt),
		SettleBy: timestamppb.New(p.SettleBy), FailureReason: p.FailureReason}
	if p.ResolvedAt != nil {
		out.ResolvedAt = timestamppb.New(*p.ResolvedAt)
	}
	return out
}

func (s *billingServer) ListPaymentMethods(ctx context.Context, _ *meteringv1.ListPaymentMethodsRequest) (*meteringv1.ListPaymentMethodsResponse, error) {
	p, err := holder(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.svc.Account(ctx, p.AccountID)
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

func (s *billingServer) AddPaymentMethod(ctx context.Context, req *meteringv1.AddPaymentMethodRequest) (*meteringv1.AddPaymentMethodResponse, error) {
	p, err := holder(ctx)
	if err != nil {
		return nil, err
	}
	m, err := s.billing.AddPaymentMethod(ctx, p.AccountID, billing.MethodDetails{Type: req.GetType(), Scheme: req.GetScheme(),
		HolderName: req.GetHolderName(), CardNumber: req.GetCardNumber(), ExpMonth: int(req.GetExpMonth()), ExpYear: int(req.GetExpYear()),
		IBAN: req.GetIban(), RoutingNumber: req.GetRoutingNumber(), SortCode: req.GetSortCode(), AccountNumber: req.GetAccountNumber(),
		MakeDefault: req.GetMakeDefault()})
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.AddPaymentMethodResponse{Method: methodProto(m)}, nil
}

func (s *billingServer) SetDefaultPaymentMethod(ctx context.Context, req *meteringv1.SetDefaultPaymentMethodRequest) (*meteringv1.SetDefaultPaymentMethodResponse, error) {
	p, err := holder(ctx)
	if err != nil {
		return nil, err
	}
	m, err := s.billing.SetDefaultPaymentMethod(ctx, p.AccountID, req.GetMethodId())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SetDefaultPaymentMethodResponse{Method: methodProto(m)}, nil
}

func (s *billingServer) RemovePaymentMethod(ctx context.Context, req *meteringv1.RemovePaymentMethodRequest) (*meteringv1.RemovePaymentMethodResponse, error) {
	p, err := holder(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.billing.RemovePaymentMethod(ctx, p.AccountID, req.GetMethodId()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RemovePaymentMethodResponse{}, nil
}

func (s *billingServer) RetryPayment(ctx context.Context, req *meteringv1.RetryPaymentRequest) (*meteringv1.RetryPaymentResponse, error) {
	p, err := holder(ctx)
	if err != nil {
		return nil, err
	}
	pay, err := s.billing.RetryPayment(ctx, p.AccountID, req.GetPaymentId())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RetryPaymentResponse{Payment: paymentProto(pay)}, nil
}
