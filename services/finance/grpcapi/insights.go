package grpcapi

import (
	"context"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/insights"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// insightServer serves the InsightService reports.
type insightServer struct {
	financev1.UnimplementedInsightServiceServer
	// insights serves the month reports; recurring the upcoming bills and
	// the cash-flow forecast (built from the recurring streams).
	insights  *insights.Service
	recurring *recurring.Service
}

func (s *insightServer) GetMonthSummary(ctx context.Context, req *financev1.GetMonthSummaryRequest) (*financev1.GetMonthSummaryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetMonthSummaryResponse, error) {
		res, err := s.insights.GetMonthSummary(ctx, c, req.GetMonth(), req.GetCurrency())
		if err != nil {
			return nil, err
		}
		m := res.Data
		out := &financev1.MonthSummary{Month: proto.String(m.Month), Currency: proto.String(m.Currency),
			TotalIncome: amount(m.TotalIncome, m.Currency), TotalExpenses: amount(m.TotalExpenses, m.Currency),
			NetSavings: amount(m.NetSavings, m.Currency), TransactionCount: proto.Int32(int32(m.TransactionCount))}
		if m.SavingsRate != nil {
			out.SavingsRate = proto.String(m.SavingsRate.StringFixed(2))
		}
		return &financev1.GetMonthSummaryResponse{Data: out, RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

func (s *insightServer) GetSpendingByCategory(ctx context.Context, req *financev1.GetSpendingByCategoryRequest) (*financev1.GetSpendingByCategoryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetSpendingByCategoryResponse, error) {
		res, err := s.insights.GetSpendingByCategory(ctx, c, insights.SpendingQuery{StartDate: req.GetStartDate(),
			EndDate: req.GetEndDate(), Currency: req.GetCurrency()})
		if err != nil {
			return nil, err
		}
		return &financev1.GetSpendingByCategoryResponse{Data: protos(res.Data, categorySpendProto),
			RedactedFields: res.RedactedFields, Filtered: res.Filtered, Pagination: pagination("", false)}, nil
	})
}

func categorySpendProto(l insights.CategorySpend) *financev1.CategorySpending {
	return &financev1.CategorySpending{CategoryId: proto.String(l.CategoryID),
		CategoryName: optional(l.CategoryName), Amount: amount(l.Amount, l.Currency),
		Percentage: proto.Float64(l.Percentage.InexactFloat64()), Currency: proto.String(l.Currency)}
}

func (s *insightServer) ListUpcomingBills(ctx context.Context, req *financev1.ListUpcomingBillsRequest) (*financev1.ListUpcomingBillsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListUpcomingBillsResponse, error) {
		res, err := s.recurring.ListUpcomingBills(ctx, c, req.GetDaysAhead())
		if err != nil {
			return nil, err
		}
		return &financev1.ListUpcomingBillsResponse{Data: protos(res.Data, upcomingBillProto),
			RedactedFields: res.RedactedFields, Filtered: res.Filtered, Pagination: pagination("", false)}, nil
	})
}

func upcomingBillProto(b recurring.UpcomingBill) *financev1.UpcomingBill {
	return &financev1.UpcomingBill{RuleId: proto.String(b.RuleID), Merchant: optional(b.Merchant),
		DisplayName: optional(b.DisplayName), ExpectedAmount: amount(b.ExpectedAmount.Amount, b.ExpectedAmount.Currency),
		ExpectedDate: proto.String(b.ExpectedDate.Format(finance.DateLayout)), Frequency: optional(b.Frequency),
		StreamType: optional(b.StreamType), LogoUrl: optional(b.LogoURL), Currency: proto.String(b.ExpectedAmount.Currency)}
}

func (s *insightServer) GetCashFlowForecast(ctx context.Context, req *financev1.GetCashFlowForecastRequest) (*financev1.GetCashFlowForecastResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetCashFlowForecastResponse, error) {
		res, err := s.recurring.GetCashFlowForecast(ctx, c, req.GetDaysAhead(), req.GetAccountId())
		if err != nil {
			return nil, err
		}
		f := res.Data
		cur := f.Currency
		opt := func(d *decimal.Decimal) *string {
			if d == nil {
				return nil
			}
			return amount(*d, cur)
		}
		out := &financev1.CashFlowForecast{Points: make([]*financev1.CashFlowPoint, 0, len(f.Points)),
			StartingBalance: opt(f.StartingBalance), ProjectedEndBalance: opt(f.ProjectedEndBalance),
			StartingBalanceAvailable: proto.Bool(f.StartingBalanceAvailable), Currency: proto.String(cur),
			Projections: []*financev1.CashFlowProjection{}, RecurringItems: []*financev1.RecurringCashFlowItem{}}
		for _, p := range f.Points {
			out.Points = append(out.Points, &financev1.CashFlowPoint{Date: proto.String(p.Date.Format(finance.DateLayout)),
				ProjectedBalance: opt(p.ProjectedBalance), Income: amount(p.Income, cur), Expenses: amount(p.Expenses, cur)})
		}
		for _, p := range f.Projections {
			out.Projections = append(out.Projections, &financev1.CashFlowProjection{PeriodDays: proto.Int32(int32(p.PeriodDays)),
				ExpectedIncome: amount(p.ExpectedIncome, cur), ExpectedExpenses: amount(p.ExpectedExpenses, cur),
				NetCashFlow: amount(p.NetCashFlow, cur), ProjectedBalance: opt(p.ProjectedBalance)})
		}
		for _, r := range f.RecurringItems {
			out.RecurringItems = append(out.RecurringItems, &financev1.RecurringCashFlowItem{Merchant: optional(r.Merchant),
				Amount: amount(r.Amount, cur), Frequency: optional(r.Frequency), StreamType: optional(r.StreamType),
				NextExpected: proto.String(r.NextExpected.Format(finance.DateLayout))})
		}
		return &financev1.GetCashFlowForecastResponse{Data: out, RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}
