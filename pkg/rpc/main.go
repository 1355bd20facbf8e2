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

// Grace bounds the whole shutdown after SIGTERM: the drain of in-flight
// calls, the stop of the background work and Close. With the pods' 5 s
// preStop it stays under Kubernetes' default 30 s termination grace period,
// so the process exits on its own, never by SIGKILL.
const Grace = 20 * time.Second

// closeShare is the part of a grace kept for stopping the background work
// and Close after the drain.
const closeShare = 5 * time.Second

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
	stopTracing, err := tracing.Start(ctx, name, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	svc, err := setup(ctx, log)
	if err != nil {
		return err
	}
	// Off unless set: several binaries run side by side on a developer's
	// machine; the Kubernetes manifests set it to :9090.
	if maddr := config.String("METRICS_ADDR", ""); maddr != "" {
		if err := ServeMetrics(ctx, log, maddr); err != nil {
			_ = svc.Close()
			return err
		}
	}
	addr := config.String("GRPC_ADDR", defaultAddr)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		_ = svc.Close()
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	log.Info("listening", "addr", lis.Addr().String())
	err = ServeService(ctx, log, svc, lis, Grace)
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// ServeService serves svc on lis and runs its background work until ctx
// ends, then shuts down within grace: in-flight calls drain (for at most
// grace less a share kept for the rest), the background work is told to
// stop, and svc.Close runs once it has. A step still running at the
// deadline is logged and left to the process's exit: a stuck worker or a
// pool waiting for a connection never holds the process until SIGKILL.
// Close is skipped when the background work did not stop (it would release
// what that work still uses).
func ServeService(ctx context.Context, log *slog.Logger, svc Service, lis net.Listener, grace time.Duration) error {
	// The background work outlives the drain: it stops once the server has.
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		if err := svc.Run(runCtx); err != nil {
			log.Error("background work stopped", "err", err)
		}
	}()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, NewServiceServer(log, svc), lis, max(grace-closeShare, grace/2)) }()
	err := <-served
	// Serve returns at the latest grace-closeShare after ctx ended (or at
	// once with a listener error); the rest of the grace counts from here.
	deadline := time.Now().Add(min(closeShare, grace/2))
	stopRun()
	if !waitUntil(ran, deadline) {
		log.Error("shutdown: background work did not stop in time; exiting without Close")
		return err
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		if cerr := svc.Close(); cerr != nil {
			log.Error("close", "err", cerr)
		}
	}()
	if !waitUntil(closed, deadline) {
		log.Error("shutdown: Close did not finish in time; exiting")
	}
	return err
}

// waitUntil waits for done until deadline and reports whether it closed.
func waitUntil(done <-chan struct{}, deadline time.Time) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
