package xero_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/accounting/internal/fixture"
	"github.com/ledgerlane/platform/services/jobs/accounting/xero"
)

const redirect = "https://api.ledgerlane.test/v1/connections/callback"

func adapter(base string) *xero.Platform {
	return xero.New(xero.Config{
		ClientID: "client-id", ClientSecret: "client-secret", RedirectURL: redirect,
		AuthURL: base + "/identity/connect/authorize", TokenURL: base + "/connect/token", RevokeURL: base + "/connect/revocation",
		ConnectionsURL: base + "/connections", APIURL: base + "/api.xro/2.0",
	})
}

func kind(t *testing.T, err error) accounting.ErrorKind {
	t.Helper()
	var pe *accounting.PlatformError
	if !errors.As(err, &pe) {
		t.Fatalf("want a PlatformError, got %v", err)
	}
	return pe.Kind
}

func TestAuthCodeURL(t *testing.T) {
	u, err := url.Parse(adapter("https://login.test").AuthCodeURL("state-1", "verifier-abc"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, want := range map[string]string{
		"response_type": "code", "client_id": "client-id", "redirect_uri": redirect, "state": "state-1",
		"scope": "offline_access accounting.transactions", "code_challenge_method": "S256",
		// base64url(SHA-256("verifier-abc")), computed independently.
		"code_challenge": "K5x6-41mFxTvpObzIPEdq05UvvzIql6sRCB8gV2ba04",
	} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
}

func TestLifecycleAgainstRecordedExchanges(t *testing.T) {
	ctx := context.Background()
	srv := fixture.Serve(t, "testdata/lifecycle.json")
	p := adapter(srv.URL)

	g, err := p.Exchange(ctx, accounting.Callback{Code: "xero-code-123", Verifier: "verifier-abc"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Token.AccessToken != "xero-access-1" || g.Token.RefreshToken != "xero-refresh-1" || g.TenantID != "70784a63-d24b-46a9-a4db-0e70a274b056" || g.Token.Expiry.IsZero() {
		t.Fatalf("grant %+v", g)
	}
	tx := accounting.BankTransaction{Key: "key-0001", Date: "2026-03-01", Amount: "12.50", Currency: "EUR",
		Description: "coffee beans", Counterparty: "Coffee Co", Reference: "INV-77", BankAccount: "090", ContraAccount: "429"}
	id, err := p.Push(ctx, "xero-access-1", g.TenantID, tx)
	if err != nil || id != "c5c4b2c8-5a8f-4b6a-9d0e-1f2a3b4c5d6e" {
		t.Fatalf("push: %q %v", id, err)
	}
	tx.Key, tx.Credit, tx.ContraAccount = "key-0002", true, "999"
	_, err = p.Push(ctx, "xero-access-1", g.TenantID, tx)
	if kind(t, err) != accounting.KindRejected || !strings.Contains(err.Error(), "Account code '999' is not a valid code") {
		t.Fatalf("validation: %v", err)
	}
	_, err = p.Push(ctx, "xero-access-1", g.TenantID, tx)
	if kind(t, err) != accounting.KindUnauthorized {
		t.Fatalf("expired token: %v", err)
	}
	tok, err := p.Refresh(ctx, "xero-refresh-1")
	if err != nil || tok.AccessToken != "xero-access-2" || tok.RefreshToken != "xero-refresh-2" {
		t.Fatalf("refresh: %+v %v", tok, err)
	}
	_, err = p.Refresh(ctx, "xero-refresh-1")
	if kind(t, err) != accounting.KindInvalidGrant {
		t.Fatalf("used refresh token: %v", err)
	}
	if err := p.Revoke(ctx, tok); err != nil {
		t.Fatal(err)
	}
}

func TestUnreachable(t *testing.T) {
	p := adapter("http://127.0.0.1:1")
	_, err := p.Push(context.Background(), "a", "t", accounting.BankTransaction{Amount: "1.00"})
	if kind(t, err) != accounting.KindUnavailable {
		t.Fatalf("push: %v", err)
	}
	_, err = p.Refresh(context.Background(), "r")
	if kind(t, err) != accounting.KindUnavailable {
		t.Fatalf("refresh: %v", err)
	}
}
