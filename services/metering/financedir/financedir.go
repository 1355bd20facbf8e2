// Package financedir is metering's FinanceDirectory over the network: it asks
// the finance service's internal finance.v1.DirectoryService whether a
// finance user and grant belong to an account. meteringctl and the local
// stack (through server.Config.FinanceDirectory) use it; the metering root
// stays free of gRPC clients.
package financedir

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/metering"
)

// Directory implements metering.FinanceDirectory on a finance connection.
type Directory struct {
	client financev1.DirectoryServiceClient
}

var _ metering.FinanceDirectory = (*Directory)(nil)

// New returns a Directory calling the finance service on conn.
func New(conn grpc.ClientConnInterface) *Directory {
	return &Directory{client: financev1.NewDirectoryServiceClient(conn)}
}

// CheckGrant implements metering.FinanceDirectory.
func (d *Directory) CheckGrant(ctx context.Context, accountID, userID, grantID, mode string) error {
	resp, err := d.client.CheckGrant(ctx, &financev1.CheckGrantRequest{
		AccountId: accountID, UserId: userID, GrantId: grantID, Mode: mode,
	})
	if err != nil {
		// Kept as text, not as a status: the failure is finance's
		// transport, not a problem of the credential being issued.
		st := status.Convert(err)
		return fmt.Errorf("ask the finance service: %s: %s", st.Code(), st.Message())
	}
	switch {
	case !resp.GetUserInAccount():
		return metering.ErrFinanceUserNotInAccount
	case !resp.GetGrantOfUser():
		return metering.ErrGrantNotOfUser
	case resp.GetUserOfOtherMode():
		return metering.ErrFinanceUserOtherMode
	}
	return nil
}
