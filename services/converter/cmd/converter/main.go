// Command converter runs the converter service alone, as it runs on Kubernetes.
package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ledgerlane/platform/pkg/config"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/converter/grpcapi"
)

func main() {
	log := logging.New("converter", config.String("LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	addr := config.String("GRPC_ADDR", ":9002")
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := rpc.NewServer(log, nil)
	grpcapi.Register(srv)
	log.Info("listening", "addr", lis.Addr().String())
	return rpc.Serve(ctx, srv, lis, 20*time.Second)
}
