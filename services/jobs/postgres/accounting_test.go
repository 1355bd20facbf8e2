package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/postgres"
)

// secretPlatform grants tokens with recognisable values.
type secretPlatform struct{}

func (secretPlatform) AuthCodeURL(state, verifier string) string {
	return "https://platform.test/authorize?" + url.Values{"state": {state}, "v": {verifier}}.Encode()
}

func (secretPlatform) Exchange(context.Context, accounting.Callback) (accounting.Grant, error) {
	return accounting.Grant{TenantID: "org-1", Token: accounting.Token{AccessToken: "ACCESS-SECRET-4711",
		RefreshToken: "REFRESH-SECRET-0815", Expiry: time.Now().Add(time.Hour)}}, nil
}

func (secretPlatform) Refresh(context.Context, string) (accounting.Token, error) {
	return accounting.Token{}, nil
}
func (secretPlatform) Revoke(context.Context, accounting.Token) error { return nil }
func (secretPlatform) Push(context.Context, string, string, accounting.BankTransaction) (string, error) {
	return "", nil
}
func (secretPlatform) Accounts() (bool, string, string) { return false, "1", "2" }

// TestTokensAtRestAreCiphertext connects through the service on PostgreSQL
// and reads the raw row: neither the tokens, nor the PKCE verifier, nor the
// OAuth state appear in any column.
func TestTokensAtRestAreCiphertext(t *testing.T) {
	pool := pgtest.Pool(t, "jobs", postgres.Migrations)
	store := postgres.NewAccounting(pool)
	svc := accounting.NewService(accounting.Config{Store: store, Keys: jobs.NewRandomKeyring(),
		Platforms: map[string]accounting.Platform{accounting.Sandbox: secretPlatform{}}})
	ctx := context.Background()
	caller := accounting.Caller{AccountID: "acct-1", Mode: "live"}
	cr, err := svc.Create(ctx, caller, accounting.CreateRequest{Platform: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(cr.AuthorizationURL)
	state, verifier := u.Query().Get("state"), u.Query().Get("v")
	row := func() string {
		var s string
		if err := pool.QueryRow(ctx, `SELECT row_to_json(c)::text FROM accounting_connections c WHERE id = $1`, cr.Connection.ID).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	pending := row()
	if strings.Contains(pending, state) || strings.Contains(pending, verifier) {
		t.Fatal("the OAuth state or the PKCE verifier is stored in the clear")
	}
	if _, err := svc.Complete(ctx, accounting.CallbackRequest{Code: "c", State: state}); err != nil {
		t.Fatal(err)
	}
	active := row()
	for _, secret := range []string{"ACCESS-SECRET-4711", "REFRESH-SECRET-0815", verifier} {
		if strings.Contains(active, secret) {
			t.Fatalf("%s is stored in the clear", secret)
		}
	}
	_, tokens, err := store.RawConnection(ctx, cr.Connection.ID)
	if err != nil || len(tokens) < 40 || strings.Contains(string(tokens), "SECRET") {
		t.Fatalf("tokens column: %d bytes, %v", len(tokens), err)
	}
	// And the sealed blob is bound to its row: it opens only with its own id.
	if _, err := jobs.NewRandomKeyring().Open(tokens, "accounting/v1|"+cr.Connection.ID+"|tokens"); err == nil {
		t.Fatal("the blob opened under another key")
	}
}
