package gateway

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	edgev1 "github.com/ledgerlane/platform/proto/edge/v1"
)

// edgeServer answers the three routes the gateway serves itself.
type edgeServer struct {
	edgev1.UnimplementedEdgeServiceServer
	g *Gateway
}

func (e *edgeServer) Health(context.Context, *edgev1.HealthRequest) (*edgev1.HealthResponse, error) {
	return &edgev1.HealthResponse{Status: "ok"}, nil
}

func (e *edgeServer) Version(context.Context, *edgev1.VersionRequest) (*edgev1.VersionResponse, error) {
	resp := &edgev1.VersionResponse{Version: e.g.cfg.Version, Commit: e.g.cfg.Commit, ApiVersion: "v1"}
	if !e.g.cfg.BuildTime.IsZero() {
		resp.BuildTime = timestamppb.New(e.g.cfg.BuildTime)
	}
	return resp, nil
}

// Ready probes every backend's gRPC health service (each service reports its
// own database there) and the gateway's own dependencies, in parallel. Any
// failure answers 503 unavailable naming what failed.
func (e *edgeServer) Ready(ctx context.Context, _ *edgev1.ReadyRequest) (*edgev1.ReadyResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	b := e.g.cfg.Backends
	probes := []Check{
		backendCheck("finance", b.Finance),
		backendCheck("converter", b.Converter),
		backendCheck("jobs", b.Jobs),
		backendCheck("metering", b.Metering),
	}
	probes = append(probes, e.g.cfg.Checks...)
	checks := make([]*edgev1.Check, len(probes))
	var wg sync.WaitGroup
	for i, c := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &edgev1.Check{Name: c.Name, Status: "ok"}
			if err := c.Probe(ctx); err != nil {
				msg := readyReason(err)
				out.Status, out.Error = "unavailable", &msg
			}
			checks[i] = out
		}()
	}
	wg.Wait()
	var failed []string
	for _, c := range checks {
		if c.Status != "ok" {
			failed = append(failed, c.Name+" ("+c.GetError()+")")
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		e.g.log.Warn("not ready", "failed", failed)
		return nil, rpc.Status(problem.New(problem.Unavailable, "not ready: "+strings.Join(failed, ", ")))
	}
	return &edgev1.ReadyResponse{Status: "ok", Checks: checks}, nil
}

func backendCheck(name string, conn grpc.ClientConnInterface) Check {
	client := healthpb.NewHealthClient(conn)
	return Check{Name: name, Probe: func(ctx context.Context) error {
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return status.Error(codes.Unavailable, "not serving")
		}
		return nil
	}}
}

// A service's health server names the dependency it lost ("postgresql
// unreachable"); that is all /v1/ready repeats. Other errors (dial failures,
// driver messages) can carry internal addresses, so the public route only says
// "unreachable" and the detail stays in the logs.
var healthReason = regexp.MustCompile(`^[a-z0-9_-]{1,32} unreachable$`)

func readyReason(err error) string {
	if st, ok := status.FromError(err); ok && healthReason.MatchString(st.Message()) {
		return st.Message()
	}
	return "unreachable"
}
