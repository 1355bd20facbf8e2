package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serverMetrics are the gRPC server series of every server in the process:
// grpc_server_handled_total by service, method and code, and the handling
// time histogram. There is one set per process, on the default registry
// beside the Go runtime and process collectors and the services' own
// series, so that several servers in one process (deploy/local, tests)
// share it; the grpc_service label tells them apart.
var serverMetrics = func() *grpcprom.ServerMetrics {
	m := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
		grpcprom.WithHistogramBuckets([]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}),
	))
	prometheus.MustRegister(m)
	return m
}()

// MetricsHandler serves the process's metrics in the Prometheus text format.
func MetricsHandler() http.Handler { return promhttp.Handler() }

// ServeMetrics serves MetricsHandler at /metrics on addr until ctx ends.
// Mount it on an internal port only: the series name services and methods.
func ServeMetrics(ctx context.Context, log *slog.Logger, addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Info("metrics listening", "addr", lis.Addr().String())
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	return nil
}
