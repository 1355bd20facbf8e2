package rpc

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ledgerlane/platform/pkg/tracing"
)

// InProcess is a client connection to services served in the same process
// (deploy/local, `make run`): a unary call runs the registered handler on
// the caller's goroutine, behind the interceptors NewServer installs
// (metrics, panic recovery, the call log, the error interceptor) and, when
// tracing is on, its client and server spans, with the request and the
// answer copied rather than encoded. Handlers and callers see what a remote
// call gives them: a server context without the caller's values but with
// its deadline and cancellation, the caller's outgoing metadata as incoming,
// response headers and trailers (grpc.Header, grpc.Trailer), status errors.
// No HTTP/2 framing, loopback socket, protobuf encoding or goroutine hand-off
// stands between the gateway and the service, which is most of what a
// remote call to the converter costs (docs/load.md).
//
// One difference remains: the caller waits for the handler to return. Over
// the wire a caller whose deadline passes gets DeadlineExceeded at once while
// the handler runs on; here it gets it when the handler returns (every
// handler's I/O follows its context, so that is soon). Streaming calls are
// not supported (no service has one; they answer Unimplemented). Each
// service's binary, the Kubernetes path, serves real gRPC; NewServer's tests
// and the fault suite cover that transport, and TestInProcessAnswersAsLoopbackGRPC
// holds the two to the same answers.
type InProcess struct {
	services    map[string]*inProcessService
	unary       grpc.UnaryServerInterceptor
	clientStats stats.Handler
	serverStats stats.Handler
}

type inProcessService struct {
	impl    any
	methods map[string]grpc.MethodHandler
}

var (
	_ grpc.ClientConnInterface = (*InProcess)(nil)
	_ grpc.ServiceRegistrar    = (*InProcess)(nil)
)

// NewInProcess returns a connection with no service; Register adds them.
func NewInProcess(log *slog.Logger) *InProcess {
	return &InProcess{
		services:    map[string]*inProcessService{},
		unary:       chainUnary(unaryInterceptors(log)),
		clientStats: tracing.ClientStatsHandler(),
		serverStats: tracing.ServerStatsHandler(),
	}
}

// Register adds svc's APIs and its health service (following svc's checks,
// as NewServiceServer's does) to c. Register every service before the
// first call: registration is not safe beside calls.
func (c *InProcess) Register(svc Service) {
	svc.Register(c)
	healthpb.RegisterHealthServer(c, &healthServer{checks: svc.Checks()})
}

// RegisterService implements grpc.ServiceRegistrar, for Register.
func (c *InProcess) RegisterService(desc *grpc.ServiceDesc, impl any) {
	s := &inProcessService{impl: impl, methods: map[string]grpc.MethodHandler{}}
	for _, m := range desc.Methods {
		s.methods[m.MethodName] = m.Handler
	}
	c.services[desc.ServiceName] = s
}

// inProcessPeer is the peer a handler sees (peer.FromContext).
var inProcessPeer = &peer.Peer{Addr: inProcessAddr{}}

type inProcessAddr struct{}

func (inProcessAddr) Network() string { return "inprocess" }
func (inProcessAddr) String() string  { return "inprocess" }

// Invoke runs a unary call: method is "/package.Service/Method".
func (c *InProcess) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) (err error) {
	service, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	s := c.services[service]
	if s == nil || s.methods[name] == nil {
		return status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	in, ok := args.(proto.Message)
	out, ok2 := reply.(proto.Message)
	if !ok || !ok2 {
		return status.Errorf(codes.Internal, "in-process call %s: messages must be protobuf messages", method)
	}
	if c.clientStats != nil {
		ctx = c.clientStats.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method})
		begin := time.Now()
		c.clientStats.HandleRPC(ctx, &stats.Begin{Client: true, BeginTime: begin})
		defer func() {
			c.clientStats.HandleRPC(ctx, &stats.End{Client: true, BeginTime: begin, EndTime: time.Now(), Error: err})
		}()
	}

	// The server's context: the caller's deadline and cancellation, none of
	// its values, its outgoing metadata as incoming.
	sctx := context.Context(valueless{ctx})
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		sctx = metadata.NewIncomingContext(sctx, md)
	}
	sctx = peer.NewContext(sctx, inProcessPeer)
	stream := &inProcessStream{method: method}
	sctx = grpc.NewContextWithServerTransportStream(sctx, stream)
	if c.serverStats != nil {
		sctx = c.serverStats.TagRPC(sctx, &stats.RPCTagInfo{FullMethodName: method})
		begin := time.Now()
		c.serverStats.HandleRPC(sctx, &stats.Begin{BeginTime: begin})
		defer func() { c.serverStats.HandleRPC(sctx, &stats.End{BeginTime: begin, EndTime: time.Now(), Error: err}) }()
	}

	// The handler may keep or change its request, and the caller its
	// reply: each side gets a copy, as decoding would give it.
	dec := func(m any) error {
		pm, ok := m.(proto.Message)
		if !ok {
			return status.Errorf(codes.Internal, "in-process call %s: %T is not a protobuf message", method, m)
		}
		proto.Merge(pm, in)
		return nil
	}
	resp, err := s.methods[name](s.impl, sctx, dec, c.unary)
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = stream.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = stream.trailer
		}
	}
	if cerr := ctx.Err(); cerr != nil {
		// The caller gave up or ran out of time, which is what it hears,
		// whatever the handler made of it, as over the wire.
		return status.FromContextError(cerr).Err()
	}
	if err != nil {
		return err
	}
	pm, ok := resp.(proto.Message)
	if !ok || pm == nil {
		return status.Errorf(codes.Internal, "in-process call %s: handler answered %T", method, resp)
	}
	proto.Reset(out)
	proto.Merge(out, pm)
	return nil
}

// NewStream answers Unimplemented: no service has a streaming method.
func (c *InProcess) NewStream(_ context.Context, _ *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Errorf(codes.Unimplemented, "in-process streaming call %s is not supported", method)
}

// valueless is a context with its parent's deadline and cancellation but
// none of its values: a server does not see what the caller put in its
// context, only the metadata.
type valueless struct{ context.Context }

func (valueless) Value(any) any { return nil }

// inProcessStream collects the headers and trailers a handler sets
// (grpc.SetHeader, grpc.SendHeader, grpc.SetTrailer).
type inProcessStream struct {
	method          string
	header, trailer metadata.MD
}

func (s *inProcessStream) Method() string { return s.method }

func (s *inProcessStream) SetHeader(md metadata.MD) error {
	s.header = metadata.Join(s.header, md)
	return nil
}

func (s *inProcessStream) SendHeader(md metadata.MD) error { return s.SetHeader(md) }

func (s *inProcessStream) SetTrailer(md metadata.MD) error {
	s.trailer = metadata.Join(s.trailer, md)
	return nil
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
