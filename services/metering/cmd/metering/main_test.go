package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/metering"
)

// directory answers CheckGrant for one user and grant of one account.
type directory struct {
	financev1.UnimplementedDirectoryServiceServer
	calls atomic.Int32
}

func (d *directory) CheckGrant(_ context.Context, req *financev1.CheckGrantRequest) (*financev1.CheckGrantResponse, error) {
	d.calls.Add(1)
	ok := req.GetAccountId() == "acct" && req.GetUserId() == "user"
	return &financev1.CheckGrantResponse{UserInAccount: ok, GrantOfUser: ok && req.GetGrantId() == "grant"}, nil
}

// TestConfigAsksFinance: the binary Kubernetes runs wires the finance
// directory from FINANCE_ADDR, so the portal and operators can issue finance
// credentials there as they can in the local stack (it used to leave it
// unset, and every finance credential was refused).
func TestConfigAsksFinance(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &directory{}
	srv := grpc.NewServer()
	financev1.RegisterDirectoryServiceServer(srv, d)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	t.Setenv("DATABASE_URL", "postgres://unused")
	t.Setenv("FINANCE_ADDR", lis.Addr().String())
	t.Setenv("SMTP_ADDR", "")
	t.Setenv("PAYMENT_PROCESSOR", "")
	cfg, err := configFromEnv(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.FinanceDirectory == nil {
		t.Fatal("no finance directory")
	}
	ctx := context.Background()
	if err := cfg.FinanceDirectory.CheckGrant(ctx, "acct", "user", "grant", "live"); err != nil {
		t.Fatalf("a user and grant of the account: %v", err)
	}
	if err := cfg.FinanceDirectory.CheckGrant(ctx, "acct", "user", "other", "live"); !errors.Is(err, metering.ErrGrantNotOfUser) {
		t.Fatalf("another user's grant: %v", err)
	}
	if n := d.calls.Load(); n != 2 {
		t.Fatalf("finance was asked %d times, want 2", n)
	}
}
