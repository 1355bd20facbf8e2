package grpcapi

import (
	"context"
	"slices"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
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
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.GetBillingResponse, error) {
		a, err := s.svc.Account(ctx, p.AccountID)
		if err != nil {
			return nil, err
		}
		invs, err := s.billing.Invoices(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		slices.Reverse(invs) // newest period first
		out := &meteringv1.GetBillingResponse{Limits: limitsProto(a), Invoices: each(invs, invoiceProto)}
		for _, pl := range metering.Plans() {
			flat, _ := pl.MonthlyPrice.In(a.BillingCurrency)
			over, _ := pl.OveragePer1000.In(a.BillingCurrency)
			out.Plans = append(out.Plans, &meteringv1.Plan{Id: pl.ID, IncludedConversions: pl.IncludedConversions,
				MonthlyPriceCents: flat, OveragePer_1000Cents: over, HardStop: pl.HardStop, DirectDebitOnly: pl.DirectDebitOnly})
		}
		return out, nil
	})
}

func (s *billingServer) ChangePlan(ctx context.Context, req *meteringv1.ChangePlanRequest) (*meteringv1.ChangePlanResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.ChangePlanResponse, error) {
		ch, err := s.billing.ChangePlan(ctx, p.AccountID, req.GetPlan())
		if err != nil {
			return nil, err
		}
		return &meteringv1.ChangePlanResponse{Kind: ch.Kind, FromPlan: ch.FromPlan, ToPlan: ch.ToPlan,
			EffectiveAt: timestamppb.New(ch.EffectiveAt), ChargeCents: ch.ChargeCents, Canceled: ch.CanceledAt != nil}, nil
	})
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
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.ListPaymentMethodsResponse, error) {
		a, err := s.svc.Account(ctx, p.AccountID)
		if err != nil {
			return nil, err
		}
		ms, err := s.billing.PaymentMethods(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		ps, err := s.billing.Payments(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		state, err := s.billing.PaymentState(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		slices.Reverse(ps) // newest first
		plan, _ := metering.PlanByID(a.PlanID)
		return &meteringv1.ListPaymentMethodsResponse{PaymentState: state, Plan: plan.ID, DirectDebitOnly: plan.DirectDebitOnly,
			DirectDebitScheme: billing.SchemeFor(a.BillingCurrency), Currency: string(a.BillingCurrency),
			Methods: each(ms, methodProto), Payments: each(ps, paymentProto)}, nil
	})
}

func (s *billingServer) AddPaymentMethod(ctx context.Context, req *meteringv1.AddPaymentMethodRequest) (*meteringv1.AddPaymentMethodResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.AddPaymentMethodResponse, error) {
		m, err := s.billing.AddPaymentMethod(ctx, p.AccountID, billing.MethodDetails{Type: req.GetType(), Scheme: req.GetScheme(),
			HolderName: req.GetHolderName(), CardNumber: req.GetCardNumber(), ExpMonth: int(req.GetExpMonth()), ExpYear: int(req.GetExpYear()),
			IBAN: req.GetIban(), RoutingNumber: req.GetRoutingNumber(), SortCode: req.GetSortCode(), AccountNumber: req.GetAccountNumber(),
			MakeDefault: req.GetMakeDefault()})
		return &meteringv1.AddPaymentMethodResponse{Method: methodProto(m)}, err
	})
}

func (s *billingServer) SetDefaultPaymentMethod(ctx context.Context, req *meteringv1.SetDefaultPaymentMethodRequest) (*meteringv1.SetDefaultPaymentMethodResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.SetDefaultPaymentMethodResponse, error) {
		m, err := s.billing.SetDefaultPaymentMethod(ctx, p.AccountID, req.GetMethodId())
		return &meteringv1.SetDefaultPaymentMethodResponse{Method: methodProto(m)}, err
	})
}

func (s *billingServer) RemovePaymentMethod(ctx context.Context, req *meteringv1.RemovePaymentMethodRequest) (*meteringv1.RemovePaymentMethodResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.RemovePaymentMethodResponse, error) {
		return &meteringv1.RemovePaymentMethodResponse{}, s.billing.RemovePaymentMethod(ctx, p.AccountID, req.GetMethodId())
	})
}

func (s *billingServer) RetryPayment(ctx context.Context, req *meteringv1.RetryPaymentRequest) (*meteringv1.RetryPaymentResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.RetryPaymentResponse, error) {
		pay, err := s.billing.RetryPayment(ctx, p.AccountID, req.GetPaymentId())
		return &meteringv1.RetryPaymentResponse{Payment: paymentProto(pay)}, err
	})
}
