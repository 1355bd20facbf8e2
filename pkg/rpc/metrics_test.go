package rpc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestMetricsCountCalls: a served call shows in grpc_server_handled_total
// on /metrics, by service, method and code.
func TestMetricsCountCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewServer(slog.New(slog.DiscardHandler), nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, s, lis, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })

	mlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := mlis.Addr().String()
	mlis.Close()
	if err := ServeMetrics(ctx, slog.New(slog.DiscardHandler), addr); err != nil {
		t.Fatal(err)
	}

	conn, err := Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const series = `grpc_server_handled_total{grpc_code="OK",grpc_method="Check",grpc_service="grpc.health.v1.Health",grpc_type="unary"}`
	before := scrape(t, "http://"+addr+"/metrics", series)
	for i := 0; i < 3; i++ {
		if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if after := scrape(t, "http://"+addr+"/metrics", series); after != before+3 {
		t.Fatalf("%s went from %v to %v, want +3", series, before, after)
	}
}

// scrape returns the value of one series line, 0 when it is absent.
func scrape(t *testing.T, url, series string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("value %q: %v", v, err)
			}
			return f
		}
	}
	return 0
}
