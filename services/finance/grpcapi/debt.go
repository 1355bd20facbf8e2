package grpcapi

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/services/finance/debt"

	"google.golang.org/protobuf/proto"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
)

type debtServer struct {
	financev1.UnimplementedDebtServiceServer
	svc *debt.Service
}

func (s *debtServer) GetDebtSummary(ctx context.Context, _ *financev1.GetDebtSummaryRequest) (*financev1.GetDebtSummaryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetDebtSummaryResponse, error) {
		res, err := s.svc.GetDebtSummary(ctx, c)
		if err != nil {
			return nil, err
		}
		out := &financev1.DebtSummary{Summaries: []*financev1.DebtCurrencySummary{},
			TotalDebtCount: proto.Int32(int32(res.Data.TotalDebtCount))}
		for _, sm := range res.Data.Summaries {
			out.Summaries = append(out.Summaries, &financev1.DebtCurrencySummary{
				Currency:                   proto.String(sm.Currency),
				TotalDebt:                  amount(sm.TotalDebt, sm.Currency),
				DebtCount:                  proto.Int32(int32(sm.DebtCount)),
				TotalYtdInterestPaid:       amount(sm.TotalYTDInterestPaid, sm.Currency),
				YtdInterestDebtCount:       proto.Int32(int32(sm.YTDInterestDebtCount)),
				EstimatedMonthlyInterest:   amount(sm.EstimatedMonthlyInterest, sm.Currency),
				EstimatedInterestDebtCount: proto.Int32(int32(sm.EstimatedInterestDebtCount)),
			})
		}
		return &financev1.GetDebtSummaryResponse{Data: out, RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

func (s *debtServer) CreatePayoffPlan(ctx context.Context, req *financev1.CreatePayoffPlanRequest) (*financev1.CreatePayoffPlanResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.CreatePayoffPlanResponse, error) {
		res, err := s.svc.CreatePayoffPlan(ctx, c, debt.PayoffRequest{LiabilityIDs: req.GetLiabilityIds(),
			Strategy: req.GetStrategy(), CustomOrder: req.GetCustomOrder(),
			TotalMonthlyBudget: req.GetTotalMonthlyBudget(), ExtraMonthlyPay: req.GetExtraMonthlyPayment()})
		if err != nil {
			return nil, err
		}
		return &financev1.CreatePayoffPlanResponse{Data: payoffProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func dateString(t *time.Time) *string {
	if t == nil {
		return nil
	}
	return proto.String(t.Format(finance.DateLayout))
}

func payoffProto(p debt.PayoffPlan) *financev1.DebtPayoffPlan {
	cur := p.Currency
	out := &financev1.DebtPayoffPlan{
		Debts:                  []*financev1.PayoffPlanDebt{},
		DebtFreeDate:           dateString(p.DebtFreeDate),
		TotalInterest:          amount(p.TotalInterest, cur),
		TotalPaid:              amount(p.TotalPaid, cur),
		BaselineTotalInterest:  amount(p.BaselineTotalInterest, cur),
		InterestSavedVsMinimum: amount(p.InterestSavedVsMinimum, cur),
		MinimumRequiredBudget:  amount(p.MinimumRequiredBudget, cur),
		BudgetInsufficient:     proto.Bool(p.BudgetInsufficient),
		PlanFeasible:           proto.Bool(p.PlanFeasible),
		HorizonExceeded:        proto.Bool(p.HorizonExceeded),
		Assumptions:            p.Assumptions,
		Timeline:               []*financev1.PayoffTimelineEntry{},
		Excluded:               []*financev1.PayoffExcludedDebt{},
	}
	if cur != "" {
		out.Currency = proto.String(cur)
	}
	for _, d := range p.Debts {
		pd := &financev1.PayoffPlanDebt{LiabilityId: proto.String(d.LiabilityID), PayoffDate: dateString(d.PayoffDate),
			TotalInterest: amount(d.TotalInterest, cur), TotalPaid: amount(d.TotalPaid, cur),
			NegativeAmortization: proto.Bool(d.NegativeAmortization)}
		if d.PayoffMonth > 0 {
			pd.PayoffMonth = proto.Int32(int32(d.PayoffMonth))
			pd.PayoffOrder = proto.Int32(int32(d.PayoffOrder))
		}
		out.Debts = append(out.Debts, pd)
	}
	for _, e := range p.Timeline {
		pe := &financev1.PayoffTimelineEntry{Month: proto.String(e.Month), TotalBalance: amount(e.TotalBalance, cur),
			CumulativeInterest: amount(e.CumulativeInterest, cur), Debts: make([]*financev1.PayoffTimelineDebt, 0, len(e.Balances))}
		for _, b := range e.Balances {
			pe.Debts = append(pe.Debts, &financev1.PayoffTimelineDebt{LiabilityId: proto.String(b.LiabilityID),
				Balance: amount(b.Balance, cur)})
		}
		out.Timeline = append(out.Timeline, pe)
	}
	for _, x := range p.Excluded {
		out.Excluded = append(out.Excluded, &financev1.PayoffExcludedDebt{LiabilityId: proto.String(x.LiabilityID),
			Reason: proto.String(x.Reason)})
	}
	return out
}
