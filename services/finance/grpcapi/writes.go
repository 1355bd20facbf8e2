package grpcapi

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ledgerlane/platform/pkg/problem"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

func (s *transactionServer) SearchTransactions(ctx context.Context, req *financev1.SearchTransactionsRequest) (*financev1.SearchTransactionsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.SearchTransactionsResponse, error) {
		page, err := s.svc.SearchTransactions(ctx, c, finance.SearchQuery{
			PageQuery: finance.PageQuery{Cursor: req.GetCursor(), PageSize: req.PageSize},
			Q:         req.GetQ(), StartDate: req.GetStartDate(), EndDate: req.GetEndDate(),
		})
		if err != nil {
			return nil, err
		}
		return &financev1.SearchTransactionsResponse{
			Data:           protos(page.Data, transactionProto),
			RedactedFields: page.RedactedFields,
			Filtered:       page.Filtered,
			Pagination:     pagination(page.NextCursor, page.HasMore),
		}, nil
	})
}

func (s *transactionServer) UpdateTransaction(ctx context.Context, req *financev1.UpdateTransactionRequest) (*financev1.UpdateTransactionResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.UpdateTransactionResponse, error) {
		amount, currency, err := amountFrom(req.GetAmount())
		if err != nil {
			return nil, err
		}
		// Absent (or JSON null) tags stay unchanged, an array replaces them,
		// [] clears them.
		tags, err := stringsFrom(req.GetTags(), "tags")
		if err != nil {
			return nil, err
		}
		u := finance.TransactionUpdate{
			ID:               req.GetId(),
			ExpectedVersion:  int64(req.GetExpectedVersion()),
			Merchant:         req.Merchant,
			Description:      req.Description,
			Date:             req.Date,
			Amount:           amount,
			AmountCurrency:   currency,
			CategoryID:       req.CategoryId,
			Tags:             tags,
			Memo:             req.Memo,
			Location:         locationFrom(req.GetLocation()),
			ClearLocation:    req.GetClearLocation(),
			RevertToProvider: req.GetRevertToProvider(),
		}
		res, err := s.svc.UpdateTransaction(ctx, c, u)
		if err != nil {
			return nil, err
		}
		if err := markReplayed(ctx, res.Replayed); err != nil {
			return nil, err
		}
		return &financev1.UpdateTransactionResponse{Data: transactionProto(res.Data),
			RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

// amountFrom reads the PATCH amount: a decimal string ("-12.50", or
// "-12.50 USD"), or the Money object responses carry, {"amount": "-12.50",
// "currency": "USD"}, with exactly those two string members. The service
// checks the values. Absent and JSON null leave the amount unchanged.
func amountFrom(v *structpb.Value) (amount, currency *string, err error) {
	switch k := v.GetKind().(type) {
	case nil, *structpb.Value_NullValue:
		return nil, nil, nil
	case *structpb.Value_StringValue:
		return &k.StringValue, nil, nil
	case *structpb.Value_StructValue:
		m := k.StructValue.GetFields()
		a, okA := m["amount"].GetKind().(*structpb.Value_StringValue)
		c, okC := m["currency"].GetKind().(*structpb.Value_StringValue)
		if okA && okC && len(m) == 2 {
			return &a.StringValue, &c.StringValue, nil
		}
	}
	return nil, nil, problem.New(problem.InvalidInput,
		`amount must be a decimal string such as "-12.50", or an object {"amount": "-12.50", "currency": "USD"} of two strings`).
		WithField("amount")
}

func (s *transactionServer) BulkCategorizeTransactions(ctx context.Context, req *financev1.BulkCategorizeTransactionsRequest) (*financev1.BulkCategorizeTransactionsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.BulkCategorizeTransactionsResponse, error) {
		items := make([]finance.BulkItem, 0, len(req.GetItems()))
		for _, it := range req.GetItems() {
			items = append(items, finance.BulkItem{TransactionID: it.GetTransactionId(), CategoryID: it.GetCategoryId(),
				ExpectedVersion: int64(it.GetExpectedVersion())})
		}
		res, err := s.svc.BulkCategorize(ctx, c, items)
		if err != nil {
			return nil, err
		}
		out := &financev1.BulkCategorizeResult{AppliedCount: int32(res.Data.AppliedCount),
			Results: make([]*financev1.BulkCategorizeRowResult, 0, len(res.Data.Results))}
		for _, r := range res.Data.Results {
			out.Results = append(out.Results, &financev1.BulkCategorizeRowResult{TransactionId: r.TransactionID, Status: r.Status})
		}
		return &financev1.BulkCategorizeTransactionsResponse{Data: out, RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

func (s *categoryServer) CreateCategory(ctx context.Context, req *financev1.CreateCategoryRequest) (*financev1.CreateCategoryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.CreateCategoryResponse, error) {
		res, err := s.svc.CreateCategory(ctx, c, finance.NewCategory{Name: req.GetName(), ParentID: req.GetParentId(),
			Icon: req.GetIcon(), Color: req.GetColor()})
		if err != nil {
			return nil, err
		}
		return &financev1.CreateCategoryResponse{Data: categoryProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func (s *categoryServer) UpdateCategory(ctx context.Context, req *financev1.UpdateCategoryRequest) (*financev1.UpdateCategoryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.UpdateCategoryResponse, error) {
		res, err := s.svc.UpdateCategory(ctx, c, finance.CategoryPatch{ID: req.GetId(), Name: req.Name, Icon: req.Icon,
			Color: req.Color, ParentID: req.ParentId, SortOrder: req.SortOrder})
		if err != nil {
			return nil, err
		}
		return &financev1.UpdateCategoryResponse{Data: categoryProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func (s *categoryServer) DeleteCategory(ctx context.Context, req *financev1.DeleteCategoryRequest) (*financev1.DeleteCategoryResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.DeleteCategoryResponse, error) {
		res, err := s.svc.DeleteCategory(ctx, c, req.GetId(), req.MergeIntoCategoryId)
		if err != nil {
			return nil, err
		}
		return &financev1.DeleteCategoryResponse{
			Data: &financev1.CategoryDeleteResult{Deleted: proto.Bool(res.Data.Deleted),
				TransactionsMerged: proto.Int32(int32(res.Data.TransactionsMerged))},
			RedactedFields: res.RedactedFields, Filtered: res.Filtered,
		}, nil
	})
}

// syncServer is the internal SyncService. It takes no principal: it has no
// HTTP route, so only in-cluster callers reach it.
type syncServer struct {
	financev1.UnimplementedSyncServiceServer
	svc *banksync.Service
}

func (s *syncServer) UpsertProviderTransactions(ctx context.Context, req *financev1.UpsertProviderTransactionsRequest) (*financev1.UpsertProviderTransactionsResponse, error) {
	txs := make([]banksync.ProviderTransaction, 0, len(req.GetTransactions()))
	for _, p := range req.GetTransactions() {
		var posted *time.Time
		if p.GetPostedAt() != nil {
			t := p.GetPostedAt().AsTime()
			posted = &t
		}
		txs = append(txs, banksync.ProviderTransaction{
			ProviderTransactionID: p.GetProviderTransactionId(),
			AccountID:             p.GetAccountId(),
			Amount:                p.GetAmount().GetAmount(),
			Currency:              p.GetAmount().GetCurrency(),
			MerchantName:          p.GetMerchantName(),
			Date:                  p.GetTransactionDate(),
			Description:           p.GetDescription(),
			Memo:                  p.GetMemo(),
			IsPending:             p.GetIsPending(),
			PostedAt:              posted,
			Location:              locationFrom(p.GetLocation()),
			Removed:               p.GetRemoved(),
			PaymentChannel:        p.GetPaymentChannel(),
			CheckNumber:           p.GetCheckNumber(),
		})
	}
	res, err := s.svc.UpsertProviderTransactions(ctx, req.GetConnectionId(), txs)
	if err != nil {
		return nil, err
	}
	return &financev1.UpsertProviderTransactionsResponse{Inserted: int32(res.Inserted), Updated: int32(res.Updated),
		Removed: int32(res.Removed)}, nil
}

func locationFrom(l *financev1.Location) *finance.Location {
	if l == nil {
		return nil
	}
	return &finance.Location{Street: l.GetStreet(), City: l.GetCity(), State: l.GetState(),
		PostalCode: l.GetPostalCode(), Country: l.GetCountry()}
}
