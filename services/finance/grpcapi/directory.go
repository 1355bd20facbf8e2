package grpcapi

import (
	"context"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
)

// directoryServer is the internal DirectoryService the metering service asks
// before it issues a finance credential. It takes no principal: it has no
// HTTP route, so only in-cluster callers reach it.
type directoryServer struct {
	financev1.UnimplementedDirectoryServiceServer
	svc *finance.Service
}

func (s *directoryServer) CheckGrant(ctx context.Context, req *financev1.CheckGrantRequest) (*financev1.CheckGrantResponse, error) {
	check, err := s.svc.CheckGrant(ctx, req.GetAccountId(), req.GetUserId(), req.GetGrantId(), req.GetMode())
	if err != nil {
		return nil, err
	}
	return &financev1.CheckGrantResponse{UserInAccount: check.UserInAccount, GrantOfUser: check.GrantOfUser,
		UserOfOtherMode: check.UserInAccount && !check.UserOfMode}, nil
}
