package rpc

import (
	"context"
	"log/slog"

	"github.com/fullstorydev/grpchan/inprocgrpc"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ledgerlane/platform/pkg/tracing"
)

// InProcess is a client connection to services served in the same process:
// a call runs the registered handler on a goroutine of its own, with the
// request and the answer copied rather than encoded, so no HTTP/2 framing,
// no loopback socket and no protobuf encoding stand between the gateway and
// a service that `make run` starts beside it (deploy/local). Calls pass the
// interceptors NewServer installs (metrics, panic recovery, the call log,
// the error interceptor) and, when tracing is on, its client and server
// spans, so handlers, the gateway and operators see what a remote call
// gives them: metadata in, headers and trailers out, status errors,
// deadlines and cancellation. Each service's binary (the Kubernetes path)
// serves real gRPC instead; NewServer's own tests and the fault suite cover
// that transport.
type InProcess struct {
	ch *inprocgrpc.Channel
}

var _ grpc.ClientConnInterface = (*InProcess)(nil)

// NewInProcess returns an empty connection; Register adds a service to it.
func NewInProcess(log *slog.Logger) *InProcess {
	ch := new(inprocgrpc.Channel).
		WithServerUnaryInterceptor(chainUnary(unaryInterceptors(log))).
		WithServerStreamInterceptor(chainStream(streamInterceptors(log)))
	if h := tracing.ServerStatsHandler(); h != nil {
		ch = ch.WithServerStatsHandler(h)
	}
	if h := tracing.ClientStatsHandler(); h != nil {
		ch = ch.WithClientStatsHandler(h)
	}
	return &InProcess{ch: ch}
}

// Register adds svc's APIs and its health service (following svc's checks,
// as NewServiceServer's does) to c. Register every service before the
// first call: registration is not safe beside calls.
func (c *InProcess) Register(svc Service) {
	svc.Register(c.ch)
	healthpb.RegisterHealthServer(c.ch, &healthServer{checks: svc.Checks()})
}

// Invoke runs a unary call.
func (c *InProcess) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.ch.Invoke(ctx, method, args, reply, opts...)
}

// NewStream opens a streaming call.
func (c *InProcess) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.ch.NewStream(ctx, desc, method, opts...)
}

// chainUnary runs ics outermost first around the handler, as
// grpc.ChainUnaryInterceptor does for a server.
func chainUnary(ics []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		for i := len(ics) - 1; i >= 0; i-- {
			ic, next := ics[i], h
			h = func(ctx context.Context, req any) (any, error) { return ic(ctx, req, info, next) }
		}
		return h(ctx, req)
	}
}

func chainStream(ics []grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		for i := len(ics) - 1; i >= 0; i-- {
			ic, next := ics[i], h
			h = func(srv any, ss grpc.ServerStream) error { return ic(srv, ss, info, next) }
		}
		return h(srv, ss)
	}
}
