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

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
)

// Grace bounds the drain on SIGTERM; it stays under Kubernetes' default 30 s
// termination grace period so in-flight calls finish before SIGKILL.
const Grace = 20 * time.Second

// Setup builds a service's gRPC server from its environment. cleanup, if not
// nil, runs after the server has drained (closing pools, say).
type Setup func(ctx context.Context, log *slog.Logger) (srv *grpc.Server, cleanup func(), err error)

// Main is the whole main function of a service binary: a JSON logger at
// LOG_LEVEL, a context ended by SIGINT or SIGTERM, setup, a listener on
// GRPC_ADDR (defaultAddr when unset), Prometheus metrics at /metrics on
// METRICS_ADDR when set, and a graceful drain. It exits 1 on error.
func Main(name, defaultAddr string, setup Setup) {
	log := logging.New(name, config.String("LOG_LEVEL", "info"))
	if err := run(log, defaultAddr, setup); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, defaultAddr string, setup Setup) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv, cleanup, err := setup(ctx, log)
	if err != nil {
		return err
	}
	if cleanup != nil {
		defer cleanup()
	}
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
	if err := Serve(ctx, srv, lis, Grace); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
