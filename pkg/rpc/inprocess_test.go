package rpc

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
)

// probeService is a service whose one method does what the request's
// Service field names, using the health messages so that no proto is
// generated for a test.
type probeService struct{}

const probeMethod = "/rpc.test.Probe/Call"

var probeDesc = grpc.ServiceDesc{
	ServiceName: "rpc.test.Probe",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Call", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		req := new(healthpb.HealthCheckRequest)
		if err := dec(req); err != nil {
			return nil, err
		}
		h := func(ctx context.Context, req any) (any, error) { return probe(ctx, req.(*healthpb.HealthCheckRequest)) }
		if ic == nil {
			return h(ctx, req)
		}
		return ic(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: probeMethod}, h)
	}}},
}

func probe(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	switch req.GetService() {
	case "problem":
		p := problem.New(problem.InvalidInput, "amount is not a number")
		p.Field = "amount"
		return nil, p
	case "panic":
		panic("boom")
	case "principal":
		// The caller's principal, read from the incoming metadata, comes
		// back as a not-found message.
		p, _ := principal.FromIncoming(ctx)
		return nil, problem.New(problem.NotFound, p.AccountID+"/"+p.RequestID)
	case "replayed":
		if err := MarkReplayed(ctx); err != nil {
			return nil, err
		}
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	case "mutate":
		// A handler may change its request; the caller's must not change.
		req.Service = "changed"
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (probeService) Register(s grpc.ServiceRegistrar) { s.RegisterService(&probeDesc, probeService{}) }
func (probeService) Checks() []Check {
	return []Check{{Name: "probe-db", Probe: func(context.Context) error { return problem.New(problem.Unavailable, "down") }}}
}
func (probeService) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (probeService) Close() error                  { return nil }

// TestInProcessAnswersAsLoopbackGRPC: the same calls over a loopback gRPC
// server (NewServiceServer, Dial) and over NewInProcess give the same
// answers: problems with their field, a panic as an internal problem, the
// principal in the metadata, the replayed header, deadlines, health and an
// unknown method.
func TestInProcessAnswersAsLoopbackGRPC(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServiceServer(log, probeService{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, lis, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	remote, err := Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Close() })
	inproc := NewInProcess(log)
	inproc.Register(probeService{})

	for _, tr := range []struct {
		name string
		conn grpc.ClientConnInterface
	}{{"loopback", remote}, {"in-process", inproc}} {
		t.Run(tr.name, func(t *testing.T) {
			call := func(ctx context.Context, what string, opts ...grpc.CallOption) (*healthpb.HealthCheckResponse, error) {
				out := new(healthpb.HealthCheckResponse)
				err := tr.conn.Invoke(ctx, probeMethod, &healthpb.HealthCheckRequest{Service: what}, out, opts...)
				return out, err
			}
			bg := context.Background()

			if out, err := call(bg, "ok"); err != nil || out.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("ok: %v %v", out, err)
			}
			_, err := call(bg, "problem")
			// On the wire form, as the error interceptor makes it: a status
			// error with the problem's code (callers read status.Code).
			if st, ok := status.FromError(err); !ok || st.Code() != codes.InvalidArgument {
				t.Fatalf("problem: not a status error with InvalidArgument: %v", err)
			}
			if p := Problem(err); p.Type != problem.InvalidInput || p.Field != "amount" || p.Detail != "amount is not a number" {
				t.Fatalf("problem: %+v (%v)", p, err)
			}
			_, err = call(bg, "panic")
			if p := Problem(err); p.Type != problem.Internal || status.Code(err) != codes.Internal {
				t.Fatalf("panic: %+v (%v)", p, err)
			}
			md := metadata.Pairs(principal.Principal{AccountID: "acct_7", RequestID: "req_7"}.Pairs()...)
			_, err = call(metadata.NewOutgoingContext(bg, md), "principal")
			if p := Problem(err); p.Type != problem.NotFound || p.Detail != "acct_7/req_7" {
				t.Fatalf("principal: %+v (%v)", p, err)
			}
			var hdr metadata.MD
			if _, err := call(bg, "replayed", grpc.Header(&hdr)); err != nil || len(hdr.Get(ReplayedHeader)) != 1 || hdr.Get(ReplayedHeader)[0] != "true" {
				t.Fatalf("replayed header: %v %v", hdr, err)
			}
			short, stop := context.WithTimeout(bg, 50*time.Millisecond)
			defer stop()
			if _, err := call(short, "slow"); status.Code(err) != codes.DeadlineExceeded || Problem(err).Type != problem.Unavailable {
				t.Fatalf("deadline: %v", err)
			}
			req := &healthpb.HealthCheckRequest{Service: "mutate"}
			if err := tr.conn.Invoke(bg, probeMethod, req, new(healthpb.HealthCheckResponse)); err != nil || req.GetService() != "mutate" {
				t.Fatalf("the handler's change reached the caller's request: %q %v", req.GetService(), err)
			}
			hc := healthpb.NewHealthClient(tr.conn)
			if _, err := hc.Check(bg, &healthpb.HealthCheckRequest{}); status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "probe-db unreachable" {
				t.Fatalf("readiness: %v", err)
			}
			if resp, err := hc.Check(bg, &healthpb.HealthCheckRequest{Service: LivenessService}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("liveness: %v %v", resp, err)
			}
			err = tr.conn.Invoke(bg, "/rpc.test.Probe/Missing", &healthpb.HealthCheckRequest{}, new(healthpb.HealthCheckResponse))
			if status.Code(err) != codes.Unimplemented {
				t.Fatalf("unknown method: %v", err)
			}
		})
	}
}
