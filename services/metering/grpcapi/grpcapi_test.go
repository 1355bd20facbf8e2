package grpcapi_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/testing/protocmp"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/grpcapi"
	"github.com/ledgerlane/platform/services/metering/memory"
)

// brokenStore fails every lookup, as a database outage would.
type brokenStore struct{ *memory.Store }

func (brokenStore) CredentialByHash(context.Context, string) (metering.Credential, error) {
	return metering.Credential{}, errors.New("connection refused")
}

// dial serves svc over an in-memory listener with the production server
// plumbing and returns a client connection to it.
func dial(t *testing.T, svc *metering.Service) *grpc.ClientConn {
	t.Helper()
	return dialServices(t, grpcapi.Services{Metering: svc})
}

// dialServices is dial with the other services too.
func dialServices(t *testing.T, svcs grpcapi.Services) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := rpc.NewServer(logging.NewTo(t.Output(), "metering", "error"), nil)
	grpcapi.Register(srv, svcs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rpc.Serve(ctx, srv, lis, time.Second) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return conn
}

func TestResolveCredential(t *testing.T) {
	ctx := t.Context()
	svc := metering.NewService(metering.Config{Store: memory.New(),
		FinanceDirectory: metering.FinanceDirectoryFunc(func(context.Context, string, string, string, string) error { return nil })})
	acct, err := svc.CreateAccount(ctx, "Acme", metering.PlanStarter, metering.USD)
	if err != nil {
		t.Fatal(err)
	}
	convSecret, conv, err := svc.IssueCredential(ctx, metering.IssueParams{
		AccountID: acct.ID, Name: "ci", Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion,
		Mode: metering.ModeTest, Scopes: []string{"convert", "webhooks:manage"},
	})
	if err != nil {
		t.Fatal(err)
	}
	finSecret, fin, err := svc.IssueCredential(ctx, metering.IssueParams{
		AccountID: acct.ID, Name: "app", Kind: metering.KindAccessToken, Surface: metering.SurfaceFinance,
		Mode: metering.ModeLive, FinanceUserID: "user-9", GrantID: "grant-3",
	})
	if err != nil {
		t.Fatal(err)
	}
	revokedSecret, revoked, err := svc.IssueCredential(ctx, metering.IssueParams{
		AccountID: acct.ID, Name: "old", Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: metering.ModeLive,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Revoke(ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	client := meteringv1.NewCredentialServiceClient(dial(t, svc))

	tests := []struct {
		name     string
		secret   string
		want     *meteringv1.Principal
		wantType problem.Type
	}{
		{
			name:   "conversion key",
			secret: convSecret,
			want: &meteringv1.Principal{AccountId: acct.ID, CredentialId: conv.ID, Kind: "ak",
				Surface: "conversion", Mode: "test", Scopes: []string{"convert", "webhooks:manage"}},
		},
		{
			name:   "finance token",
			secret: finSecret,
			want: &meteringv1.Principal{AccountId: acct.ID, CredentialId: fin.ID, Kind: "at",
				Surface: "finance", Mode: "live", Scopes: metering.FinanceReadScopes(),
				FinanceUserId: "user-9", GrantId: "grant-3"},
		},
		{name: "revoked", secret: revokedSecret, wantType: problem.Unauthorized},
		{name: "unknown", secret: "ak_live_" + convSecret[8:], wantType: problem.Unauthorized},
		{name: "malformed", secret: "Bearer nonsense", wantType: problem.Unauthorized},
		{name: "empty", secret: "", wantType: problem.Unauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := client.ResolveCredential(ctx, &meteringv1.ResolveCredentialRequest{Secret: tc.secret})
			if tc.wantType != "" {
				if status.Code(err) != codes.Unauthenticated {
					t.Fatalf("code = %v, want Unauthenticated (err %v)", status.Code(err), err)
				}
				p := rpc.Problem(err)
				if p.Type != tc.wantType || p.Detail != "invalid credential" {
					t.Errorf("problem = %+v, want %s / invalid credential", p, tc.wantType)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveCredential: %v", err)
			}
			if d := cmp.Diff(tc.want, resp.GetPrincipal(), protocmp.Transform()); d != "" {
				t.Errorf("principal (-want +got):\n%s", d)
			}
		})
	}
}

func TestResolveCredentialStoreDown(t *testing.T) {
	store := brokenStore{memory.New()}
	svc := metering.NewService(metering.Config{Store: store})
	client := meteringv1.NewCredentialServiceClient(dial(t, svc))
	_, err := client.ResolveCredential(t.Context(), &meteringv1.ResolveCredentialRequest{
		Secret: "ak_live_" + "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst",
	})
	if p := rpc.Problem(err); p.Type != problem.Unavailable {
		t.Fatalf("problem = %+v, want unavailable", p)
	}
}

func TestUsageAndBillingLimits(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rdb := redisconn.ForTest(t)
	m := admission.New(rdb, clock)
	svc := metering.NewService(metering.Config{Store: memory.New(), Counters: m, Clock: clock})
	conn := dial(t, svc)
	ctx := t.Context()
	acct, err := svc.CreateAccount(ctx, "Acme", metering.PlanStarter, metering.EUR)
	if err != nil {
		t.Fatal(err)
	}
	caller := principal.Outgoing(ctx, principal.Principal{AccountID: acct.ID, Surface: "conversion"})
	limits, err := svc.Limits(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := m.Admit(ctx, admission.Request{AccountID: acct.ID, Metered: true, Limits: limits}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Admit(ctx, admission.Request{AccountID: acct.ID, Metered: true, Test: true, Limits: limits}); err != nil {
		t.Fatal(err)
	}

	usage := meteringv1.NewUsageServiceClient(conn)
	u, err := usage.GetUsage(caller, &meteringv1.GetUsageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if u.GetPlan() != "starter" || u.GetUsed() != 3 || u.GetRemaining() != 24_997 || u.GetCurrency() != "eur" ||
		u.GetTestUsed() != 1 || u.GetTestRemaining() != 249 || u.GetTestQuota() != 250 || !u.GetOverageAllowed() ||
		u.GetOverageBlocked() || !u.GetResetsAt().AsTime().Equal(u.GetPeriodEnd().AsTime()) {
		t.Fatalf("usage: %v", u)
	}
	if _, isNull := u.GetOverageCapCents().GetKind().(*structpb.Value_NullValue); !isNull {
		t.Fatalf("overage_cap_cents must be null without a cap: %v", u.GetOverageCapCents())
	}

	billing := meteringv1.NewBillingServiceClient(conn)
	capCents := int32(2_500)
	res, err := billing.SetBillingLimits(caller, &meteringv1.SetBillingLimitsRequest{OverageCapCents: &capCents})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetLimits().GetOverageCapCents().GetNumberValue() != 2500 || res.GetUsage().GetOverageCapCents().GetNumberValue() != 2500 {
		t.Fatalf("cap not applied: %v", res)
	}
	if l, _ := svc.Limits(ctx, acct.ID); l.OverageCapCents == nil || *l.OverageCapCents != 2500 {
		t.Fatalf("limits do not carry the cap: %+v", l)
	}
	yes := true
	res, err = billing.SetBillingLimits(caller, &meteringv1.SetBillingLimitsRequest{HardStop: &yes, ClearOverageCap: true})
	if err != nil || !res.GetLimits().GetHardStop() || res.GetUsage().GetOverageAllowed() {
		t.Fatalf("hard stop: %v %v", res, err)
	}
	bad := []struct {
		name  string
		req   *meteringv1.SetBillingLimitsRequest
		field string
	}{
		{"zero cap", &meteringv1.SetBillingLimitsRequest{OverageCapCents: new(int32)}, "overage_cap_cents"},
		{"cap and clear", &meteringv1.SetBillingLimitsRequest{OverageCapCents: &capCents, ClearOverageCap: true}, "clear_overage_cap"},
	}
	for _, tc := range bad {
		_, err := billing.SetBillingLimits(caller, tc.req)
		if p := rpc.Problem(err); p.Type != problem.InvalidInput || p.Field != tc.field {
			t.Errorf("%s: %+v", tc.name, p)
		}
	}
	if _, err := usage.GetUsage(ctx, &meteringv1.GetUsageRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no caller: %v", err)
	}
}
