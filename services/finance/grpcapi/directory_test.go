package grpcapi_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/seed"
)

// TestDirectoryCheckGrant: the internal DirectoryService answers, without a
// principal, whether a user and grant belong to an account.
func TestDirectoryCheckGrant(t *testing.T) {
	store := memory.New()
	d, err := seed.Demo(context.Background(), store, demoAccount, now)
	if err != nil {
		t.Fatal(err)
	}
	client := financev1.NewDirectoryServiceClient(serve(t, store))
	tests := []struct {
		name                 string
		account, user, grant string
		want                 *financev1.CheckGrantResponse
	}{
		{"belong together", demoAccount, d.UserID, d.GrantWriteID,
			&financev1.CheckGrantResponse{UserInAccount: true, GrantOfUser: true}},
		{"another account", uuid.NewString(), d.UserID, d.GrantWriteID,
			&financev1.CheckGrantResponse{GrantOfUser: true}},
		{"unknown grant", demoAccount, d.UserID, uuid.NewString(),
			&financev1.CheckGrantResponse{UserInAccount: true}},
		{"malformed ids", "a", "u", "g", &financev1.CheckGrantResponse{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := client.CheckGrant(context.Background(),
				&financev1.CheckGrantRequest{AccountId: tc.account, UserId: tc.user, GrantId: tc.grant})
			if err != nil {
				t.Fatalf("CheckGrant: %v", err)
			}
			if got.GetUserInAccount() != tc.want.GetUserInAccount() || got.GetGrantOfUser() != tc.want.GetGrantOfUser() {
				t.Errorf("CheckGrant = %v, want %v", got, tc.want)
			}
		})
	}
}
