package rpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
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

func TestGRPCRoundTrip(t *testing.T) {
	for _, typ := range problem.Types() {
		t.Run(string(typ), func(t *testing.T) {
			p := Problem(Status(problem.New(typ, "some detail").WithField("f").WithRetryAfter(3)))
			if p.Type != typ || p.Status != typ.Status() || p.Field != "f" || p.RetryAfter != 3 {
				t.Fatalf("round trip lost data: %+v", p)
			}
			if typ == problem.Internal && p.Detail != "" {
				t.Fatal("internal detail must not reach clients")
			}
		})
	}
}

func TestProblemOfPlainErrors(t *testing.T) {
	tests := []struct {
		err  error
		want problem.Type
	}{
		{errors.New("boom"), problem.Internal},
		{status.Error(codes.Unimplemented, "x"), problem.NotImplemented},
		{status.Error(codes.NotFound, "x"), problem.NotFound},
		{status.Error(codes.Unavailable, "x"), problem.Unavailable},
		{status.Error(codes.Internal, "db password leaked"), problem.Internal},
	}
	for _, tt := range tests {
		p := Problem(tt.err)
		if p.Type != tt.want {
			t.Errorf("Problem(%v) = %s, want %s", tt.err, p.Type, tt.want)
		}
		if strings.Contains(p.Detail, "password") {
			t.Errorf("internal message leaked: %q", p.Detail)
		}
	}
	if Problem(nil) != nil || Status(nil) != nil {
		t.Error("nil must stay nil")
	}
}

func TestStatus(t *testing.T) {
	p := problem.New(problem.RateLimited, "slow down").WithField("f").WithRetryAfter(3)
	err := Status(p)
	if status.Code(err) != codes.ResourceExhausted || status.Convert(err).Message() != "slow down" {
		t.Fatalf("got %v", err)
	}
	if got := Problem(err); *got != *p {
		t.Fatalf("round trip: %+v, want %+v", got, p)
	}
	// A problem found in the chain is a copy: the caller may change it.
	wrapped := fmt.Errorf("wrapped: %w", p)
	if got := Problem(wrapped); *got != *p || got == p {
		t.Fatalf("got %+v", got)
	}
}

// callWith runs the unary error interceptor around a handler returning err.
func callWith(ctx context.Context, log *slog.Logger, err error) error {
	_, out := problemUnary(log)(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/x.v1.X/Do"},
		func(context.Context, any) (any, error) { return nil, err })
	return out
}

func TestInterceptor(t *testing.T) {
	discard := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	if callWith(ctx, discard, nil) != nil {
		t.Fatal("success must stay success")
	}

	// A problem, wrapped or not, becomes exactly the status Status builds.
	p := problem.New(problem.InvalidInput, "bad").WithField("to")
	got := callWith(ctx, discard, fmt.Errorf("convert: %w", p))
	if status.Code(got) != codes.InvalidArgument || *Problem(got) != *p {
		t.Fatalf("problem: %v (%+v)", got, Problem(got))
	}

	// A status error passes through untouched.
	st := status.Error(codes.Internal, "converter crashed")
	if got := callWith(ctx, discard, st); got != st {
		t.Fatalf("status: %v", got)
	}

	// Any other error is internal: logged with the request id, never sent.
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	md, _ := metadata.FromOutgoingContext(principal.Outgoing(ctx, principal.Principal{RequestID: "req_42"}))
	in := metadata.NewIncomingContext(ctx, md)
	got = callWith(in, log, errors.New("pq: password authentication failed for user secret"))
	if status.Code(got) != codes.Internal || strings.Contains(status.Convert(got).Message(), "secret") {
		t.Fatalf("plain error: %v", got)
	}
	if p := Problem(got); p.Type != problem.Internal || p.Detail != "" {
		t.Fatalf("plain error: %+v", p)
	}
	if !strings.Contains(logs.String(), "req_42") || !strings.Contains(logs.String(), "password authentication failed") {
		t.Fatalf("log: %s", logs.String())
	}

	// The caller leaving is not a bug of the service.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got := callWith(cctx, discard, fmt.Errorf("query: %w", cctx.Err())); status.Code(got) != codes.Canceled {
		t.Fatalf("canceled: %v", got)
	}
	// An unrelated deadline of the service's own is internal.
	if got := callWith(ctx, discard, context.DeadlineExceeded); status.Code(got) != codes.Internal {
		t.Fatalf("own deadline: %v", got)
	}
}

func TestStreamInterceptor(t *testing.T) {
	p := problem.New(problem.NotFound, "no such job")
	err := problemStream(slog.New(slog.DiscardHandler))(nil, fakeStream{}, &grpc.StreamServerInfo{FullMethod: "/x.v1.X/Watch"},
		func(any, grpc.ServerStream) error { return p })
	if status.Code(err) != codes.NotFound || *Problem(err) != *p {
		t.Fatalf("got %v", err)
	}
}

type fakeStream struct{ grpc.ServerStream }

func (fakeStream) Context() context.Context { return context.Background() }

// TestServerAnswersProblems: NewServer installs the interceptor, so a handler
// returns its *problem.Problem as is and the client reads it back.
func TestServerAnswersProblems(t *testing.T) {
	s := NewServer(slog.New(slog.DiscardHandler), nil)
	want := problem.New(problem.VersionConflict, "expected version 3, found 4").WithField("expected_version")
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "test.v1.Fail",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Fail", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := new(healthpb.HealthCheckRequest)
			if err := dec(in); err != nil {
				return nil, err
			}
			h := func(context.Context, any) (any, error) { return nil, fmt.Errorf("update: %w", want) }
			return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/test.v1.Fail/Fail"}, h)
		}}},
	}, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, s, lis, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	conn, err := Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Invoke(context.Background(), "/test.v1.Fail/Fail", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	if status.Code(err) != codes.Aborted {
		t.Fatalf("code %v", status.Code(err))
	}
	if got := Problem(err); *got != *want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
