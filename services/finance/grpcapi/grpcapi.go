// Package grpcapi serves the finance Service as the finance.v1 gRPC services.
// It only translates: the caller comes from the principal metadata the
// gateway attaches, and domain values become proto messages. Service errors
// are returned as they are: the server's interceptor (pkg/rpc) carries a
// *problem.Problem over the wire and answers anything else as internal.
// Methods not built yet stay on the generated Unimplemented servers, which the
// gateway answers with 501.
package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/insights"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

// Services are what the finance.v1 services serve: the kernel (finance)
// and each subdomain's service.
type Services struct {
	Finance   *finance.Service
	BankSync  *banksync.Service
	Budgets   *budgets.Service
	Debt      *debt.Service
	Insights  *insights.Service
	Imports   *imports.Service
	NetWorth  *networth.Service
	Recurring *recurring.Service
	Sandbox   *sandboxlink.Service
}

// Register registers every finance.v1 service on s.
func Register(s grpc.ServiceRegistrar, svcs Services) {
	svc := svcs.Finance
	financev1.RegisterTransactionServiceServer(s, &transactionServer{svc: svc})
	financev1.RegisterCategoryServiceServer(s, &categoryServer{svc: svc})
	financev1.RegisterAccountServiceServer(s, &accountServer{svc: svc, recurring: svcs.Recurring, netWorth: svcs.NetWorth})
	financev1.RegisterBudgetServiceServer(s, &budgetServer{svc: svcs.Budgets})
	financev1.RegisterGoalServiceServer(s, &goalServer{svc: svcs.Budgets})
	financev1.RegisterHoldingServiceServer(s, &holdingServer{svc: svcs.NetWorth})
	financev1.RegisterDebtServiceServer(s, &debtServer{svc: svcs.Debt})
	financev1.RegisterInsightServiceServer(s, &insightServer{insights: svcs.Insights, recurring: svcs.Recurring})
	financev1.RegisterNetWorthServiceServer(s, &netWorthServer{svc: svcs.NetWorth})
	financev1.RegisterSyncServiceServer(s, &syncServer{svc: svcs.BankSync})
	financev1.RegisterDirectoryServiceServer(s, &directoryServer{svc: svc})
	financev1.RegisterImportServiceServer(s, &importServer{svc: svcs.Imports})
	financev1.RegisterSandboxServiceServer(s, &sandboxServer{svc: svcs.Sandbox})
	financev1.RegisterGrantServiceServer(s, &grantServer{svc: svc})
}

type transactionServer struct {
	financev1.UnimplementedTransactionServiceServer
	svc *finance.Service
}

func (s *transactionServer) ListTransactions(ctx context.Context, req *financev1.ListTransactionsRequest) (*financev1.ListTransactionsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListTransactionsResponse, error) {
		page, err := s.svc.ListTransactions(ctx, c, finance.TransactionQuery{
			PageQuery:     finance.PageQuery{Cursor: req.GetCursor(), PageSize: req.PageSize},
			AccountID:     req.GetAccountId(),
			CategoryID:    req.GetCategoryId(),
			StartDate:     req.GetStartDate(),
			EndDate:       req.GetEndDate(),
			Pending:       req.Pending,
			Source:        req.GetSource(),
			Uncategorized: req.GetUncategorized(),
		})
		if err != nil {
			return nil, err
		}
		return &financev1.ListTransactionsResponse{
			Data:           protos(page.Data, transactionProto),
			RedactedFields: page.RedactedFields,
			Filtered:       page.Filtered,
			Pagination:     pagination(page.NextCursor, page.HasMore),
		}, nil
	})
}

func (s *transactionServer) SyncTransactions(ctx context.Context, req *financev1.SyncTransactionsRequest) (*financev1.SyncTransactionsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.SyncTransactionsResponse, error) {
		page, err := s.svc.SyncTransactions(ctx, c, finance.SyncQuery{Cursor: req.GetCursor(), Count: req.Count})
		if err != nil {
			return nil, err
		}
		return &financev1.SyncTransactionsResponse{
			Added:          protos(page.Added, transactionProto),
			Modified:       protos(page.Modified, transactionProto),
			Removed:        page.Removed,
			NextCursor:     page.NextCursor,
			HasMore:        page.HasMore,
			RedactedFields: page.RedactedFields,
			Filtered:       page.Filtered,
		}, nil
	})
}

func (s *transactionServer) GetTransaction(ctx context.Context, req *financev1.GetTransactionRequest) (*financev1.GetTransactionResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetTransactionResponse, error) {
		res, err := s.svc.GetTransaction(ctx, c, req.GetId())
		if err != nil {
			return nil, err
		}
		return &financev1.GetTransactionResponse{Data: transactionProto(res.Data),
			RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

type categoryServer struct {
	financev1.UnimplementedCategoryServiceServer
	svc *finance.Service
}

func (s *categoryServer) ListCategories(ctx context.Context, _ *financev1.ListCategoriesRequest) (*financev1.ListCategoriesResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListCategoriesResponse, error) {
		page, err := s.svc.ListCategories(ctx, c)
		if err != nil {
			return nil, err
		}
		return &financev1.ListCategoriesResponse{
			Data:           protos(page.Data, categoryProto),
			RedactedFields: page.RedactedFields,
			Filtered:       page.Filtered,
			Pagination:     pagination(page.NextCursor, page.HasMore),
		}, nil
	})
}

func categoryProto(cat finance.Category) *financev1.Category {
	return &financev1.Category{
		Id:        cat.ID,
		ParentId:  optional(cat.ParentID),
		Name:      optional(cat.Name),
		Icon:      optional(cat.Icon),
		Color:     optional(cat.Color),
		TypeTag:   optional(cat.TypeTag),
		IsSystem:  proto.Bool(cat.IsSystem()),
		SortOrder: proto.Int32(cat.SortOrder),
	}
}

type accountServer struct {
	financev1.UnimplementedAccountServiceServer
	svc *finance.Service
	// recurring adds detection's freshness to the sync status.
	recurring *recurring.Service
	// netWorth walks balances back (the balance history).
	netWorth *networth.Service
}

func (s *accountServer) ListConnections(ctx context.Context, req *financev1.ListConnectionsRequest) (*financev1.ListConnectionsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListConnectionsResponse, error) {
		page, err := s.svc.ListConnections(ctx, c, finance.PageQuery{Cursor: req.GetCursor(), PageSize: req.PageSize})
		if err != nil {
			return nil, err
		}
		return &financev1.ListConnectionsResponse{
			Data:           protos(page.Data, connectionProto),
			RedactedFields: page.RedactedFields,
			Filtered:       page.Filtered,
			Pagination:     pagination(page.NextCursor, page.HasMore),
		}, nil
	})
}

func connectionProto(conn finance.ConnectionSummary) *financev1.BankConnection {
	return &financev1.BankConnection{
		Id:                 conn.ID,
		Provider:           optional(conn.Provider),
		SourceAggregator:   optional(conn.SourceAggregator),
		Institution:        optional(conn.Institution),
		InstitutionLogoUrl: optional(conn.InstitutionLogoURL),
		Status:             optional(conn.Status),
		LastSyncedAt:       timestamp(conn.LastSyncedAt),
		ErrorCode:          optional(conn.ErrorCode),
		ErrorMessage:       optional(conn.ErrorMessage),
		AccountCount:       proto.Int32(int32(conn.AccountCount)),
		CreatedAt:          timestamp(&conn.CreatedAt),
		UpdatedAt:          timestamp(&conn.UpdatedAt),
	}
}

func (s *accountServer) GetAccountBalances(ctx context.Context, req *financev1.GetAccountBalancesRequest) (*financev1.GetAccountBalancesResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetAccountBalancesResponse, error) {
		res, err := s.svc.GetAccountBalances(ctx, c, req.GetId())
		if err != nil {
			return nil, err
		}
		b := res.Data
		return &financev1.GetAccountBalancesResponse{
			Data: &financev1.AccountBalance{
				AccountId:        b.AccountID,
				Name:             optional(b.Name),
				Balance:          money(&b.Balance),
				AvailableBalance: money(b.AvailableBalance),
				AsOf:             timestamp(b.AsOf),
			},
			RedactedFields: res.RedactedFields,
			Filtered:       res.Filtered,
		}, nil
	})
}

func (s *accountServer) GetSyncStatus(ctx context.Context, _ *financev1.GetSyncStatusRequest) (*financev1.GetSyncStatusResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetSyncStatusResponse, error) {
		res, err := s.svc.GetSyncStatus(ctx, c)
		if err != nil {
			return nil, err
		}
		st := &financev1.SyncStatus{
			Connections:    make([]*financev1.ConnectionSyncStatus, 0, len(res.Data.Connections)),
			AllHealthy:     proto.Bool(res.Data.AllHealthy),
			OldestSyncedAt: timestamp(res.Data.OldestSyncedAt),
		}
		for _, line := range res.Data.Connections {
			st.Connections = append(st.Connections, &financev1.ConnectionSyncStatus{
				ConnectionId: line.ConnectionID,
				Institution:  optional(line.Institution),
				Status:       optional(line.Status),
				LastSyncedAt: timestamp(line.LastSyncedAt),
				Healthy:      proto.Bool(line.Healthy),
			})
		}
		if s.recurring != nil {
			f, err := s.recurring.Freshness(ctx, c.UserID)
			if err != nil {
				return nil, err
			}
			st.RecurringDetectionDueSince = timestamp(f.DueSince)
			st.RecurringDetectionLastRunAt = timestamp(f.LastRunAt)
			st.RecurringDetectionPending = proto.Bool(f.Pending)
		}
		return &financev1.GetSyncStatusResponse{Data: st, RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

// markReplayed marks the answer of a versioned write the service recognised
// as the retry of one an earlier attempt committed (finance.WriteMark), so
// the gateway sends Idempotency-Replayed: true, as for a batch the jobs
// service replays. Finance answers are unmetered, so the mark changes no
// billing (gateway/gate.go settle).
func markReplayed(ctx context.Context, replayed bool) error {
	if !replayed {
		return nil
	}
	return rpc.MarkReplayed(ctx)
}

// caller reads the account, finance user and grant the gateway
// authenticated. A call without them, or from a credential of another
// surface, is unauthorized.
func caller(ctx context.Context) (finance.Caller, error) {
	p, ok := principal.FromIncoming(ctx)
	if !ok || p.Surface != principal.SurfaceFinance || p.FinanceUserID == "" || p.GrantID == "" {
		return finance.Caller{}, problem.New(problem.Unauthorized, "a finance credential is required")
	}
	return finance.Caller{UserID: p.FinanceUserID, GrantID: p.GrantID, OwnerAccountID: p.AccountID, Mode: p.Mode,
		CredentialID: p.CredentialID, IdempotencyKey: p.IdempotencyKey}, nil
}

func transactionProto(t finance.Transaction) *financev1.Transaction {
	out := &financev1.Transaction{
		Id:                   t.ID,
		AccountId:            optional(t.AccountID),
		CategoryId:           optional(t.CategoryID),
		Amount:               money(&t.Amount),
		Merchant:             optional(t.Merchant),
		DisplayName:          optional(t.DisplayName),
		Description:          optional(t.Description),
		Date:                 proto.String(t.Date.Format(finance.DateLayout)),
		PostedAt:             timestamp(t.PostedAt),
		IsPending:            proto.Bool(t.IsPending),
		Source:               optional(t.Source),
		PaymentChannel:       optional(t.PaymentChannel),
		TransferPairId:       optional(t.TransferPairID),
		RecurringRuleId:      optional(t.RecurringRuleID),
		ExternalRef:          optional(t.ExternalRef),
		Tags:                 t.Tags,
		CheckNumber:          optional(t.CheckNumber),
		Memo:                 optional(t.Memo),
		ProviderAmount:       money(t.ProviderAmount),
		ProviderMerchantName: t.ProviderMerchantName,
		ProviderDescription:  t.ProviderDescription,
		ProviderMemo:         t.ProviderMemo,
		// The wire version is int32 (a JSON number); a row edited 2^31 times
		// does not happen.
		Version:   proto.Int32(int32(t.Version)),
		CreatedAt: timestamp(&t.CreatedAt),
		UpdatedAt: timestamp(&t.UpdatedAt),
	}
	if t.ProviderTransactionDate != nil {
		out.ProviderTransactionDate = proto.String(t.ProviderTransactionDate.Format(finance.DateLayout))
	}
	if l := t.Location; l != nil {
		out.Location = &financev1.Location{
			Street:     optional(l.Street),
			City:       optional(l.City),
			State:      optional(l.State),
			PostalCode: optional(l.PostalCode),
			Country:    optional(l.Country),
		}
	}
	return out
}

func pagination(next string, more bool) *financev1.Pagination {
	return &financev1.Pagination{NextCursor: next, HasMore: more}
}

// optional leaves empty strings absent: the domain keeps "no value" as "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func money(m *finance.Money) *financev1.Money {
	if m == nil {
		return nil
	}
	return &financev1.Money{Amount: m.AmountString(), Currency: m.Currency}
}

func timestamp(t *time.Time) *timestamppb.Timestamp {
	if t == nil || t.IsZero() {
		return nil
	}
	return timestamppb.New(*t)
}

// protos converts each of in with conv. An empty list stays an empty list,
// not nil.
func protos[T, P any](in []T, conv func(T) P) []P {
	out := make([]P, 0, len(in))
	for _, v := range in {
		out = append(out, conv(v))
	}
	return out
}

// asCaller is the frame of every finance call: it reads the caller
// (caller) and runs do for it; on an error the answer is only the error.
func asCaller[R any](ctx context.Context, do func(finance.Caller) (R, error)) (R, error) {
	var zero R
	c, err := caller(ctx)
	if err != nil {
		return zero, err
	}
	r, err := do(c)
	if err != nil {
		return zero, err
	}
	return r, nil
}
