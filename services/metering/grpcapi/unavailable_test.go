package grpcapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/memory"
)

// downAccounts fails account reads as PostgreSQL does while shutting down.
type downAccounts struct{ *memory.Store }

func (downAccounts) GetAccount(context.Context, string) (metering.Account, error) {
	return metering.Account{}, fmt.Errorf("get account: %w", &pgconn.PgError{Code: "57P01"})
}

// TestDatabaseOutageAnswersUnavailable: usage and billing limits during a
// database outage answer 503 unavailable with Retry-After, not 500.
func TestDatabaseOutageAnswersUnavailable(t *testing.T) {
	svc := metering.NewService(metering.Config{Store: downAccounts{memory.New()}, Counters: admission.New(redisconn.ForTest(t), nil)})
	conn := dial(t, svc)
	caller := principal.Outgoing(t.Context(), principal.Principal{AccountID: "0e8a3c6e-2f4b-4f54-9f53-000000000001", Surface: "conversion"})
	_, errUsage := meteringv1.NewUsageServiceClient(conn).GetUsage(caller, &meteringv1.GetUsageRequest{})
	yes := true
	_, errBilling := meteringv1.NewBillingServiceClient(conn).SetBillingLimits(caller, &meteringv1.SetBillingLimitsRequest{HardStop: &yes})
	for name, err := range map[string]error{"GetUsage": errUsage, "SetBillingLimits": errBilling} {
		if p := rpc.Problem(err); p.Type != problem.Unavailable || p.Status != 503 || p.RetryAfter <= 0 {
			t.Errorf("%s: problem %+v, want unavailable with retry_after", name, p)
		}
	}
}
