package grpcapi

import (
	"context"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
)

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
		resp := &financev1.ListHoldingsResponse{Data: make([]*financev1.Holding, 0, len(page.Data)),
			RedactedFields: page.RedactedFields, Filtered: page.Filtered, Pagination: pagination(page.NextCursor, page.HasMore)}
		for _, h := range page.Data {
			resp.Data = append(resp.Data, holdingProto(h))
		}
		resp.Cash = make([]*financev1.CashPosition, 0, len(page.Cash))
		for _, p := range page.Cash {
			resp.Cash = append(resp.Cash, &financev1.CashPosition{AccountId: p.AccountID, Cash: money(&p.Cash),
				AsOf: proto.String(p.AsOf.Format(finance.DateLayout))})
		}
		return resp, nil
	})
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
