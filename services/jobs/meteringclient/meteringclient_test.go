package meteringclient_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/meteringclient"
)

type fakeClient struct {
	got *meteringv1.RefundUnitsRequest
	err error
}

func (f *fakeClient) RefundUnits(_ context.Context, in *meteringv1.RefundUnitsRequest, _ ...grpc.CallOption) (*meteringv1.RefundUnitsResponse, error) {
	f.got = in
	return &meteringv1.RefundUnitsResponse{Refunded: in.GetUnits()}, f.err
}

// TestRefund: a refund travels whole, and an error comes back as the problem
// metering answered.
func TestRefund(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 0, 0, 120_000_000, time.UTC)
	r := jobs.Refund{AccountID: "0e8a3c6e-2f4b-4f54-9f53-000000000001", Mode: "test", CountedAt: at, Units: 3, Reference: "job:x"}
	for _, tc := range []struct {
		name    string
		err     error
		wantErr problem.Type
	}{
		{name: "answered"},
		{name: "metering unavailable", err: rpc.Status(problem.New(problem.Unavailable, "usage counters are unreachable")), wantErr: problem.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeClient{err: tc.err}
			err := meteringclient.New(f).Refund(context.Background(), r)
			g := f.got
			if g.GetAccountId() != r.AccountID || g.GetMode() != r.Mode || !g.GetCountedAt().AsTime().Equal(at) ||
				g.GetUnits() != 3 || g.GetReference() != r.Reference {
				t.Fatalf("request %v, want %+v", g, r)
			}
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if p, ok := err.(*problem.Problem); tc.wantErr != "" && (!ok || p.Type != tc.wantErr) {
				t.Fatalf("error %v, want %s", err, tc.wantErr)
			}
		})
	}
}
