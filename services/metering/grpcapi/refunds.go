package grpcapi

import (
	"context"
	"errors"

	"github.com/ledgerlane/platform/pkg/problem"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
)

// refundServer is internal (no HTTP route): the jobs service calls it for
// batch items it failed on its own account.
type refundServer struct {
	meteringv1.UnimplementedUsageRefundServiceServer
	svc *metering.Service
}

func (s *refundServer) RefundUnits(ctx context.Context, req *meteringv1.RefundUnitsRequest) (*meteringv1.RefundUnitsResponse, error) {
	r := metering.Refund{AccountID: req.GetAccountId(), Mode: req.GetMode(), Units: req.GetUnits(), Reference: req.GetReference(),
		CredentialID: req.GetCredentialId()}
	if req.GetCountedAt() != nil {
		if err := req.GetCountedAt().CheckValid(); err != nil {
			return nil, problem.New(problem.InvalidInput, "counted_at is not a valid timestamp").WithField("counted_at")
		}
		r.CountedAt = req.GetCountedAt().AsTime()
	}
	n, err := s.svc.RefundUnits(ctx, r)
	if errors.Is(err, metering.ErrNotFound) {
		return nil, problem.New(problem.NotFound, "no such account").WithField("account_id")
	}
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RefundUnitsResponse{Refunded: n}, nil
}
