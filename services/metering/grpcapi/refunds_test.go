package grpcapi_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/memory"
)

// TestRefundUnits: units counted for a batch and refunded by reference leave
// GET /v1/usage as if they had never been counted, once per reference;
// invalid requests name their field, an unknown account is not-found.
func TestRefundUnits(t *testing.T) {
	counters := admission.New(redisconn.ForTest(t), nil)
	svc := metering.NewService(metering.Config{Store: memory.New(), Counters: counters})
	ctx := t.Context()
	a, err := svc.CreateAccount(ctx, "Acme", metering.PlanStarter, metering.USD)
	if err != nil {
		t.Fatal(err)
	}
	l, err := svc.Limits(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := counters.Admit(ctx, admission.Request{AccountID: a.ID, Metered: true, Limits: l, Units: 10}); err != nil {
		t.Fatal(err)
	}
	conn := dial(t, svc)
	refunds := meteringv1.NewUsageRefundServiceClient(conn)
	now := timestamppb.New(time.Now())
	valid := func() *meteringv1.RefundUnitsRequest {
		return &meteringv1.RefundUnitsRequest{AccountId: a.ID, Mode: "live", CountedAt: now, Units: 4, Reference: "job:1"}
	}
	for i, want := range []int64{4, 0} { // the second call repeats the reference
		resp, err := refunds.RefundUnits(ctx, valid())
		if err != nil || resp.GetRefunded() != want {
			t.Fatalf("refund %d: %v %v, want %d", i, resp, err, want)
		}
	}
	caller := principal.Outgoing(ctx, principal.Principal{AccountID: a.ID, Surface: "conversion"})
	u, err := meteringv1.NewUsageServiceClient(conn).GetUsage(caller, &meteringv1.GetUsageRequest{})
	if err != nil || u.GetUsed() != 6 {
		t.Fatalf("usage after the refund: %v %v, want used 6", u, err)
	}

	for _, tc := range []struct {
		name  string
		edit  func(r *meteringv1.RefundUnitsRequest)
		typ   problem.Type
		field string
	}{
		{"mode", func(r *meteringv1.RefundUnitsRequest) { r.Mode = "prod" }, problem.InvalidInput, "mode"},
		{"units", func(r *meteringv1.RefundUnitsRequest) { r.Units = 0 }, problem.InvalidInput, "units"},
		{"reference", func(r *meteringv1.RefundUnitsRequest) { r.Reference = "" }, problem.InvalidInput, "reference"},
		{"counted_at missing", func(r *meteringv1.RefundUnitsRequest) { r.CountedAt = nil }, problem.InvalidInput, "counted_at"},
		{"counted_at invalid", func(r *meteringv1.RefundUnitsRequest) { r.CountedAt = &timestamppb.Timestamp{Nanos: -1} }, problem.InvalidInput, "counted_at"},
		{"unknown account", func(r *meteringv1.RefundUnitsRequest) { r.AccountId = "0e8a3c6e-2f4b-4f54-9f53-000000000009" }, problem.NotFound, "account_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := valid()
			tc.edit(r)
			_, err := refunds.RefundUnits(ctx, r)
			if p := rpc.Problem(err); p.Type != tc.typ || p.Field != tc.field {
				t.Fatalf("problem %+v, want %s naming %s", p, tc.typ, tc.field)
			}
		})
	}
}
