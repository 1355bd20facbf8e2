// Package rpc is the gRPC plumbing shared by every service: a server with panic
// recovery, request logging, the one error interceptor (a *problem.Problem a
// handler returns becomes a status error, and Problem turns it back) and the
// standard health service, and client dials.
// Traffic between the gateway and the services stays inside the cluster; TLS
// between pods is the mesh's job (deploy/k8s/README.md).
package rpc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/tracing"
)

// Check is one dependency probe of a service (its database, say). The gRPC
// health service answers NOT_SERVING while any check fails, which the gateway's
// /v1/ready reports by name.
type Check struct {
	Name  string
	Probe func(context.Context) error
}

// NewServer returns a gRPC server that recovers panics as internal problems,
// logs each call, turns the errors handlers return into their wire form (a
// *problem.Problem becomes the status error Status builds; see errors.go),
// and serves grpc.health.v1 backed by checks.
func NewServer(log *slog.Logger, checks []Check, opts ...grpc.ServerOption) *grpc.Server {
	opts = append(opts,
		grpc.ChainUnaryInterceptor(unaryInterceptors(log)...),
		grpc.ChainStreamInterceptor(streamInterceptors(log)...),
		grpc.MaxRecvMsgSize(32<<20), // batch requests are up to 16 MiB of JSON
		grpc.MaxSendMsgSize(64<<20),
		// Clients reconnect at least every few minutes and so re-resolve the
		// service's pods: new replicas get traffic without a mesh.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionAge: 2 * time.Minute, MaxConnectionAgeGrace: 30 * time.Second}),
	)
	// A server span per call when tracing is on (pkg/tracing); none when off.
	opts = append(opts, tracing.ServerOptions()...)
	s := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(s, &healthServer{checks: checks})
	return s
}

// unaryInterceptors are every server's, outermost first: metrics first, so
// that a recovered panic counts as the Internal it is answered with; the
// error interceptor last (innermost), so that metrics and the call log see
// the code the client gets. NewServer and NewInProcess share the list.
func unaryInterceptors(log *slog.Logger) []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{serverMetrics.UnaryServerInterceptor(), recoverUnary(log), logUnary(log), problemUnary(log)}
}

func streamInterceptors(log *slog.Logger) []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{serverMetrics.StreamServerInterceptor(), problemStream(log)}
}

type healthServer struct {
	healthpb.UnimplementedHealthServer
	checks []Check
}

// LivenessService is the health service name that answers SERVING whenever the
// process serves gRPC, without probing dependencies: a liveness probe must not
// restart a pod because its database is down.
const LivenessService = "liveness"

// Check runs every probe with a short deadline; the first failure makes the
// answer NOT_SERVING and its name travels in the status message.
func (h *healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if req.GetService() == LivenessService {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, c := range h.checks {
		if err := c.Probe(ctx); err != nil {
			return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING},
				status.Error(codes.Unavailable, c.Name+" unreachable")
		}
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func recoverUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in handler", "method", info.FullMethod, "panic", r, "stack", string(debug.Stack()))
				err = Status(problem.New(problem.Internal, ""))
			}
		}()
		return h(ctx, req)
	}
}

func logUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		lvl := slog.LevelDebug
		if err != nil {
			lvl = slog.LevelInfo
			if st, _ := status.FromError(err); st != nil && st.Code().String() == "Internal" {
				lvl = slog.LevelError
			}
		}
		// A successful call logs at debug, which deployments leave off:
		// reading the principal back from the metadata and boxing the
		// attributes then cost about twenty allocations per call for nothing.
		if !log.Enabled(ctx, lvl) {
			return resp, err
		}
		p, _ := principal.FromIncoming(ctx)
		log.Log(ctx, lvl, "rpc", "method", info.FullMethod, "request_id", p.RequestID,
			"account_id", p.AccountID, "code", status.Code(err).String(), "duration", time.Since(start))
		return resp, err
	}
}

// Serve runs s on lis until ctx ends, then stops gracefully: in-flight calls
// finish, bounded by grace.
func Serve(ctx context.Context, s *grpc.Server, lis net.Listener, grace time.Duration) error {
	// Every method of the registered services is listed from the start,
	// at zero, so that rates and alerts need not wait for a first call.
	serverMetrics.InitializeMetrics(s)
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(lis) }()
	select {
	case err := <-errc:
		if errors.Is(err, grpc.ErrServerStopped) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	done := make(chan struct{})
	go func() { s.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		s.Stop()
	}
	return nil
}

// Dial opens a client connection to an in-cluster service address. A bare
// host:port resolves through DNS and balances round robin over every address,
// which spreads calls over all pods behind a headless Kubernetes Service. A
// comma-separated list of host:port balances round robin over those fixed
// addresses: replicas on one machine listen on different ports, which one DNS
// name cannot express (the fault suite, deploy/local/faults, runs two jobs and
// two converter processes so).
func Dial(addr string) (*grpc.ClientConn, error) {
	var opts []grpc.DialOption
	if strings.Contains(addr, ",") {
		var state resolver.State
		for _, a := range strings.Split(addr, ",") {
			if a = strings.TrimSpace(a); a != "" {
				state.Addresses = append(state.Addresses, resolver.Address{Addr: a})
			}
		}
		r := manual.NewBuilderWithScheme("list")
		r.InitialState(state)
		addr, opts = r.Scheme()+":///"+strings.ReplaceAll(addr, ",", "_"), append(opts, grpc.WithResolvers(r))
	} else if !strings.Contains(addr, "://") && !strings.HasPrefix(addr, "dns:") && !strings.HasPrefix(addr, "unix:") {
		addr = "dns:///" + addr
	}
	// A client span per call, its trace sent in the metadata, when tracing
	// is on (pkg/tracing); nothing when off.
	opts = append(opts, tracing.DialOptions()...)
	return grpc.NewClient(addr, append(opts,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(32<<20)),
	)...)
}

// ReplayedHeader is the one response metadata key the gateway passes to the
// client (as Idempotency-Replayed: true): the backend answered with work an
// earlier attempt with the same Idempotency-Key had already committed, so the
// gateway must not bill it a second time (gateway/gate.go settle).
const ReplayedHeader = "x-ll-idempotency-replayed"

// MarkReplayed sets ReplayedHeader on the answer of the call in ctx.
func MarkReplayed(ctx context.Context) error {
	return grpc.SetHeader(ctx, metadata.Pairs(ReplayedHeader, "true"))
}
