package grpcapi

import (
	"context"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

type netWorthServer struct {
	financev1.UnimplementedNetWorthServiceServer
	svc *networth.Service
}

func (s *netWorthServer) GetNetWorth(ctx context.Context, req *financev1.GetNetWorthRequest) (*financev1.GetNetWorthResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetNetWorthResponse, error) {
		v, err := s.svc.GetNetWorth(ctx, c, req.GetBaseCurrency())
		if err != nil {
			return nil, err
		}
		f := v.NetWorthFigures
		cur := f.Currency
		var prev networth.NetWorthFigures
		hasPrev := v.Previous != nil
		if hasPrev {
			prev = *v.Previous
		}
		entries := func(es []networth.AllocationEntry) []*financev1.AllocationEntry {
			return protos(es, func(e networth.AllocationEntry) *financev1.AllocationEntry { return allocationProto(e, cur) })
		}
		liq := func(label string) *financev1.AllocationEntry {
			return allocationProto(networth.Allocation(label, f.Liquidity[label], f.TotalAssets, prev.Liquidity, hasPrev), cur)
		}
		nw := &financev1.NetWorth{
			NetWorth: amount(f.NetWorth, cur), TotalAssets: amount(f.TotalAssets, cur),
			TotalLiabilities: amount(f.TotalLiabilities, cur), BaseCurrency: proto.String(cur),
			SnapshotDate: proto.String(f.Date.Format(finance.DateLayout)), IsManual: proto.Bool(v.IsManual),
			LiquidNetWorth: amount(f.LiquidNetWorth, cur), InvestableNetWorth: amount(f.InvestableNetWorth, cur),
			Breakdown: &financev1.NetWorthBreakdown{
				Liquidity: &financev1.LiquidityBreakdown{Liquid: liq(networth.LiquidityLiquid),
					Investable: liq(networth.LiquidityInvestable), Illiquid: liq(networth.LiquidityIlliquid)},
				ByAssetType:         entries(networth.Allocations(f.ByAssetType, f.TotalAssets, prev.ByAssetType, hasPrev)),
				ByCurrency:          entries(networth.Allocations(f.ByCurrency, f.TotalAssets, prev.ByCurrency, hasPrev)),
				ByRetirementSubtype: entries(networth.Allocations(f.ByRetirementSubtype, f.TotalAssets, prev.ByRetirementSubtype, hasPrev)),
			},
			ComputedAt: timestamp(&v.ComputedAt),
		}
		return &financev1.GetNetWorthResponse{Data: nw, RedactedFields: []string{}}, nil
	})
}

func allocationProto(e networth.AllocationEntry, cur string) *financev1.AllocationEntry {
	out := &financev1.AllocationEntry{Label: e.Label, Value: amount(e.Value, cur)}
	if e.Percentage != nil {
		out.Percentage = proto.Float64(e.Percentage.InexactFloat64())
	}
	if e.DayChange != nil {
		out.DayChangeAmount = amount(*e.DayChange, cur)
	}
	if e.DayChangePct != nil {
		out.DayChangePct = proto.String(e.DayChangePct.StringFixed(2))
	}
	return out
}

func (s *netWorthServer) GetNetWorthHistory(ctx context.Context, req *financev1.GetNetWorthHistoryRequest) (*financev1.GetNetWorthHistoryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetNetWorthHistoryResponse, error) {
		h, err := s.svc.GetNetWorthHistory(ctx, c, req.GetPeriod(), req.GetBaseCurrency())
		if err != nil {
			return nil, err
		}
		point := func(p networth.NetWorthFigures) *financev1.NetWorthHistoryPoint {
			return &financev1.NetWorthHistoryPoint{
				Date: proto.String(p.Date.Format(finance.DateLayout)), NetWorth: amount(p.NetWorth, h.Currency),
				TotalAssets: amount(p.TotalAssets, h.Currency), TotalLiabilities: amount(p.TotalLiabilities, h.Currency),
				BaseCurrency: proto.String(h.Currency), LiquidNetWorth: amount(p.LiquidNetWorth, h.Currency),
				InvestableNetWorth: amount(p.InvestableNetWorth, h.Currency), Derived: proto.Bool(p.Derived)}
		}
		return &financev1.GetNetWorthHistoryResponse{Data: protos(h.Points, point), RedactedFields: []string{},
			Pagination: pagination("", false), MissingRateDates: nonNil(h.MissingRateDates)}, nil
	})
}

func (s *accountServer) GetAccountBalanceHistory(ctx context.Context, req *financev1.GetAccountBalanceHistoryRequest) (*financev1.GetAccountBalanceHistoryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetAccountBalanceHistoryResponse, error) {
		res, err := s.netWorth.BalanceHistory(ctx, c, req.GetId(), req.GetPeriod())
		if err != nil {
			return nil, err
		}
		return &financev1.GetAccountBalanceHistoryResponse{Data: protos(res.Data, balancePointProto),
			RedactedFields: []string{}, Pagination: pagination("", false)}, nil
	})
}

func balancePointProto(p networth.BalancePoint) *financev1.AccountBalancePoint {
	return &financev1.AccountBalancePoint{Date: proto.String(p.Date.Format(finance.DateLayout)),
		Balance: money(&p.Balance), Derived: proto.Bool(p.Derived)}
}

type holdingServer struct {
	financev1.UnimplementedHoldingServiceServer
	svc *networth.Service
}

func (s *holdingServer) ListHoldings(ctx context.Context, req *financev1.ListHoldingsRequest) (*financev1.ListHoldingsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListHoldingsResponse, error) {
		page, err := s.svc.ListHoldings(ctx, c, finance.PageQuery{Cursor: req.GetCursor(), PageSize: req.PageSize}, req.GetAccountId())
		if err != nil {
			return nil, err
		}
		return &financev1.ListHoldingsResponse{Data: protos(page.Data, holdingProto), Cash: protos(page.Cash, cashProto),
			RedactedFields: page.RedactedFields, Filtered: page.Filtered, Pagination: pagination(page.NextCursor, page.HasMore)}, nil
	})
}

func cashProto(p networth.CashPosition) *financev1.CashPosition {
	return &financev1.CashPosition{AccountId: p.AccountID, Cash: money(&p.Cash),
		AsOf: proto.String(p.AsOf.Format(finance.DateLayout))}
}

func decString(d *decimal.Decimal) *string {
	if d == nil {
		return nil
	}
	return proto.String(d.String())
}

func holdingProto(v networth.HoldingView) *financev1.Holding {
	h := v.Holding
	out := &financev1.Holding{Id: h.ID, AssetType: optional(h.AssetType), Ticker: optional(h.Ticker),
		Name: optional(h.Name), Quantity: proto.String(h.Quantity.String()), CostBasisMethod: optional(h.CostBasisMethod),
		DailyChangePct: decString(v.DailyChangePct),
		PriceSource:    optional(v.PriceSource), Currency: optional(h.Currency), DataSource: optional(h.DataSource),
		RetirementSubtype: optional(h.RetirementSubtype), Notes: optional(h.Notes), CurrentValue: money(v.CurrentValue),
		AccountId: optional(h.AccountID), AcquiredAt: timestamp(h.AcquiredAt), CreatedAt: timestamp(&h.CreatedAt),
		UpdatedAt: timestamp(&h.UpdatedAt)}
	if v.CurrentPrice != nil {
		out.CurrentPrice = amount(*v.CurrentPrice, h.Currency)
	}
	if h.CostBasis != nil {
		out.CostBasis = amount(*h.CostBasis, h.Currency)
	}
	if v.DailyChangePct != nil {
		out.DailyChangePct = proto.String(v.DailyChangePct.StringFixed(2))
	}
	return out
}
