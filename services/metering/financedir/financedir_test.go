package financedir_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/financedir"
)

// fakeFinance answers CheckGrant from a fixed table.
type fakeFinance struct {
	financev1.UnimplementedDirectoryServiceServer
	// members is account → user → grant.
	members map[string]map[string]string
}

func (f *fakeFinance) CheckGrant(_ context.Context, req *financev1.CheckGrantRequest) (*financev1.CheckGrantResponse, error) {
	if req.GetAccountId() == "down" {
		return nil, status.Error(codes.Unavailable, "finance store unreachable")
	}
	grant, ok := f.members[req.GetAccountId()][req.GetUserId()]
	return &financev1.CheckGrantResponse{UserInAccount: ok, GrantOfUser: ok && grant == req.GetGrantId(),
		UserOfOtherMode: ok && req.GetMode() == "test"}, nil // the fake's users are live
}

func dial(t *testing.T, srv financev1.DirectoryServiceServer) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 16)
	s := grpc.NewServer()
	financev1.RegisterDirectoryServiceServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); s.Stop() })
	return conn
}

func TestCheckGrant(t *testing.T) {
	d := financedir.New(dial(t, &fakeFinance{members: map[string]map[string]string{"acct": {"user": "grant"}}}))
	tests := []struct {
		name                       string
		account, user, grant, mode string
		want                       error // nil, a sentinel, or errAny
	}{
		{"belong together", "acct", "user", "grant", "live", nil},
		{"user of another account", "other", "user", "grant", "live", metering.ErrFinanceUserNotInAccount},
		{"grant of another user", "acct", "user", "other", "live", metering.ErrGrantNotOfUser},
		{"a test credential for a live user", "acct", "user", "grant", "test", metering.ErrFinanceUserOtherMode},
		{"finance fails", "down", "user", "grant", "live", errAny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := d.CheckGrant(t.Context(), tc.account, tc.user, tc.grant, tc.mode)
			switch tc.want {
			case nil:
				if err != nil {
					t.Fatalf("CheckGrant: %v", err)
				}
			case errAny:
				if err == nil || errors.Is(err, metering.ErrFinanceUserNotInAccount) || errors.Is(err, metering.ErrGrantNotOfUser) {
					t.Fatalf("CheckGrant = %v, want a failure that is no answer", err)
				}
				if _, isStatus := status.FromError(err); isStatus {
					t.Errorf("CheckGrant = %v: a gRPC status would read as a problem of the credential", err)
				}
			default:
				if !errors.Is(err, tc.want) {
					t.Fatalf("CheckGrant = %v, want %v", err, tc.want)
				}
			}
		})
	}
}

var errAny = errors.New("any error")
