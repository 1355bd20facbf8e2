// Package meteringclient is the jobs.Refunder over the metering service's
// internal metering.v1.UsageRefundService: the units of batch items the jobs
// service failed on its own account go back to the account's counter.
package meteringclient

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/jobs"
)

// Client is the part of meteringv1.UsageRefundServiceClient used; tests
// substitute a fake.
type Client interface {
	RefundUnits(ctx context.Context, in *meteringv1.RefundUnitsRequest, opts ...grpc.CallOption) (*meteringv1.RefundUnitsResponse, error)
}

// Refunder implements jobs.Refunder on a Client.
type Refunder struct{ c Client }

var _ jobs.Refunder = (*Refunder)(nil)

// New returns a Refunder calling c.
func New(c Client) *Refunder { return &Refunder{c: c} }

// Refund asks metering to give r back. A reference metering applied before
// is a success; any error (metering or its Redis unreachable) is returned as
// the problem it carries, and the caller retries.
func (r *Refunder) Refund(ctx context.Context, f jobs.Refund) error {
	_, err := r.c.RefundUnits(ctx, &meteringv1.RefundUnitsRequest{
		AccountId: f.AccountID, Mode: f.Mode, CountedAt: timestamppb.New(f.CountedAt), Units: f.Units, Reference: f.Reference,
		CredentialId: f.CredentialID,
	})
	if err != nil {
		return rpc.Problem(err)
	}
	return nil
}
