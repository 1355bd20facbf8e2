package rpc

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/tracing"
)

// Grace bounds the drain on SIGTERM; it stays under Kubernetes' default 30 s
// termination grace period so in-flight calls finish before SIGKILL.
const Grace = 20 * time.Second

// Setup builds a service from its environment: it reads the service's
// variables into its server.Config and calls its server.New.
type Setup func(ctx context.Context, log *slog.Logger) (Service, error)

// Main is the whole main function of a service binary: a JSON logger at
// LOG_LEVEL, a context ended by SIGINT or SIGTERM, setup, a listener on
// GRPC_ADDR (defaultAddr when unset) serving the service (NewServiceServer),
// its background work (Service.Run), Prometheus metrics at /metrics on
// METRICS_ADDR when set, a graceful drain, then Service.Close. It exits 1 on
// error.
func Main(name, defaultAddr string, setup Setup) {
	log := logging.New(name, config.String("LOG_LEVEL", "info"))
	if err := run(log, name, defaultAddr, setup); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, name, defaultAddr string, setup Setup) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Traces only when OTEL_* asks for them (pkg/tracing); before setup, so
	// the clients setup dials carry them too.
	stopTracing, err := tracing.Setup(ctx, name)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}()
	svc, err := setup(ctx, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := svc.Close(); err != nil {
			log.Error("close", "err", err)
		}
	}()
	// Off unless set: several binaries run side by side on a developer's
	// machine; the Kubernetes manifests set it to :9090.
	if maddr := config.String("METRICS_ADDR", ""); maddr != "" {
		if err := ServeMetrics(ctx, log, maddr); err != nil {
			return err
		}
	}
	addr := config.String("GRPC_ADDR", defaultAddr)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	log.Info("listening", "addr", lis.Addr().String())
	// The background work outlives the drain: it stops once the server has.
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		if err := svc.Run(runCtx); err != nil {
			log.Error("background work stopped", "err", err)
		}
	}()
	err = Serve(ctx, NewServiceServer(log, svc), lis, Grace)
	stopRun()
	<-ran
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
