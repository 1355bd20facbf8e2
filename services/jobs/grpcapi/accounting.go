package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/pkg/principal"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs/accounting"
)

type connectionServer struct {
	conversionv1.UnimplementedAccountingConnectionServiceServer
	svc *accounting.Service
}

type callbackServer struct {
	conversionv1.UnimplementedAccountingCallbackServiceServer
	svc *accounting.Service
}

// RegisterAccounting adds conversion.v1's AccountingConnectionService and
// the public AccountingCallbackService to s.
func RegisterAccounting(s grpc.ServiceRegistrar, svc *accounting.Service) {
	conversionv1.RegisterAccountingConnectionServiceServer(s, &connectionServer{svc: svc})
	conversionv1.RegisterAccountingCallbackServiceServer(s, &callbackServer{svc: svc})
}

func acctCaller(ctx context.Context) accounting.Caller {
	p, _ := principal.FromIncoming(ctx)
	return accounting.Caller{AccountID: p.AccountID, Mode: p.Mode, RequestID: p.RequestID}
}

// apiErr answers a database that does not answer as 503 unavailable, like
// the rest of the service; problems pass as they are.
func apiErr(err error) error {
	if p := pg.UnavailableProblem(err); p != nil {
		return p
	}
	return err
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// connectionPB never carries a token, a verifier or the state hash.
func connectionPB(c accounting.Connection) *conversionv1.Connection {
	out := &conversionv1.Connection{
		Id: c.ID, Platform: c.Platform, DisplayName: c.DisplayName, Status: c.Status,
		CreatedAt: tsOrNil(c.CreatedAt), StatusReason: strOrNil(c.StatusReason),
		ConnectedAt: tsOrNil(c.ConnectedAt), PlatformTenantId: strOrNil(c.PlatformTenantID),
	}
	if c.Status == accounting.StatusPending {
		out.AuthorizationExpiresAt = tsOrNil(c.StateExpiresAt)
	}
	return out
}

func (s *connectionServer) CreateConnection(ctx context.Context, req *conversionv1.CreateConnectionRequest) (*conversionv1.CreateConnectionResponse, error) {
	cr, err := s.svc.Create(ctx, acctCaller(ctx), accounting.CreateRequest{Platform: req.GetPlatform(), DisplayName: req.GetDisplayName()})
	if err != nil {
		return nil, apiErr(err)
	}
	pb := connectionPB(cr.Connection)
	pb.AuthorizationUrl = &cr.AuthorizationURL
	return &conversionv1.CreateConnectionResponse{Connection: pb}, nil
}

func (s *connectionServer) ListConnections(ctx context.Context, req *conversionv1.ListConnectionsRequest) (*conversionv1.ListConnectionsResponse, error) {
	page, err := s.svc.List(ctx, acctCaller(ctx), req.GetCursor(), req.PageSize)
	if err != nil {
		return nil, apiErr(err)
	}
	out := &conversionv1.ListConnectionsResponse{NextCursor: page.NextCursor, Connections: make([]*conversionv1.Connection, len(page.Connections))}
	for i, c := range page.Connections {
		out.Connections[i] = connectionPB(c)
	}
	return out, nil
}

func (s *connectionServer) DeleteConnection(ctx context.Context, req *conversionv1.DeleteConnectionRequest) (*conversionv1.DeleteConnectionResponse, error) {
	if err := s.svc.Delete(ctx, acctCaller(ctx), req.GetId()); err != nil {
		return nil, apiErr(err)
	}
	return &conversionv1.DeleteConnectionResponse{}, nil
}

func (s *connectionServer) PushStatement(ctx context.Context, req *conversionv1.PushStatementRequest) (*conversionv1.PushStatementResponse, error) {
	res, err := s.svc.Push(ctx, acctCaller(ctx), accounting.PushRequest{
		ConnectionID: req.GetId(), Message: req.GetMessage(), From: req.GetFrom(),
		BankAccount: req.GetBankAccount(), ContraAccount: req.GetContraAccount(),
	})
	if err != nil {
		return nil, apiErr(err)
	}
	out := &conversionv1.PushStatementResponse{ConnectionId: res.ConnectionID, Created: int32(res.Created),
		AlreadyPresent: int32(res.AlreadyPresent), Entries: make([]*conversionv1.PushedEntry, len(res.Entries))}
	for i, e := range res.Entries {
		out.Entries[i] = &conversionv1.PushedEntry{EntryId: e.Entry.ID, Status: e.Status, PlatformTransactionId: e.PlatformID,
			BookingDate: e.Entry.BookingDate, Amount: e.Entry.Amount, Currency: e.Entry.Currency}
	}
	return out, nil
}

func (s *callbackServer) CompleteConnection(ctx context.Context, req *conversionv1.CompleteConnectionRequest) (*conversionv1.CompleteConnectionResponse, error) {
	c, err := s.svc.Complete(ctx, accounting.CallbackRequest{Code: req.GetCode(), State: req.GetState(), RealmID: req.GetRealmId(),
		Error: req.GetError(), ErrorDesc: req.GetErrorDescription()})
	if err != nil {
		return nil, apiErr(err)
	}
	return &conversionv1.CompleteConnectionResponse{Connection: connectionPB(c)}, nil
}
