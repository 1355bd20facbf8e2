package quickbooks_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/accounting/internal/fixture"
	"github.com/ledgerlane/platform/services/jobs/accounting/quickbooks"
)

const redirect = "https://api.ledgerlane.test/v1/connections/callback"

func adapter(base string) *quickbooks.Platform {
	return quickbooks.New(quickbooks.Config{
		ClientID: "client-id", ClientSecret: "client-secret", RedirectURL: redirect,
		AuthURL: base + "/connect/oauth2", TokenURL: base + "/oauth2/v1/tokens/bearer", RevokeURL: base + "/v2/oauth2/tokens/revoke",
		APIURL: base,
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
	u, err := url.Parse(adapter("https://appcenter.test").AuthCodeURL("state-1", "verifier-abc"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, want := range map[string]string{
		"response_type": "code", "client_id": "client-id", "redirect_uri": redirect, "state": "state-1",
		"scope": "com.intuit.quickbooks.accounting", "code_challenge": "",
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

	// The company comes from the callback's realmId.
	_, err := p.Exchange(ctx, accounting.Callback{Code: "AB11773478800qbocode"})
	var prob *problem.Problem
	if !errors.As(err, &prob) || prob.Field != "realmId" {
		t.Fatalf("no realmId: %v", err)
	}
	g, err := p.Exchange(ctx, accounting.Callback{Code: "AB11773478800qbocode", RealmID: "9341453050423127", Verifier: "ignored"})
	if err != nil || g.TenantID != "9341453050423127" || g.Token.AccessToken != "eyJlbmMiOi.qbo-access-1" || g.Token.RefreshToken != "AB11qbo-refresh-1" {
		t.Fatalf("grant %+v %v", g, err)
	}
	out := accounting.BankTransaction{Key: "key-0001", Date: "2026-03-01", Amount: "12.50", Currency: "USD",
		Description: "coffee beans", Counterparty: "Coffee Co", Reference: "INV-77", BankAccount: "35", ContraAccount: "13"}
	if id, err := p.Push(ctx, g.Token.AccessToken, g.TenantID, out); err != nil || id != "252" {
		t.Fatalf("purchase: %q %v", id, err)
	}
	in := accounting.BankTransaction{Key: "key-0002", Date: "2026-03-02", Amount: "1000.00", Credit: true, Currency: "USD",
		Description: "salary", Counterparty: "Employer", Reference: "NONREF", BankAccount: "35", ContraAccount: "79"}
	if id, err := p.Push(ctx, g.Token.AccessToken, g.TenantID, in); err != nil || id != "148" {
		t.Fatalf("deposit: %q %v", id, err)
	}
	_, err = p.Push(ctx, g.Token.AccessToken, g.TenantID, in)
	if kind(t, err) != accounting.KindRejected || !strings.Contains(err.Error(), "Accounts element id 999 not found") {
		t.Fatalf("validation fault: %v", err)
	}
	if _, err = p.Push(ctx, g.Token.AccessToken, g.TenantID, in); kind(t, err) != accounting.KindUnauthorized {
		t.Fatalf("expired token: %v", err)
	}
	if _, err = p.Push(ctx, g.Token.AccessToken, g.TenantID, in); kind(t, err) != accounting.KindUnavailable {
		t.Fatalf("throttled: %v", err)
	}
	tok, err := p.Refresh(ctx, "AB11qbo-refresh-1")
	if err != nil || tok.AccessToken != "eyJlbmMiOi.qbo-access-2" || tok.RefreshToken != "AB11qbo-refresh-2" {
		t.Fatalf("refresh: %+v %v", tok, err)
	}
	if _, err = p.Refresh(ctx, "AB11qbo-refresh-1"); kind(t, err) != accounting.KindInvalidGrant {
		t.Fatalf("used refresh token: %v", err)
	}
	if err := p.Revoke(ctx, tok); err != nil {
		t.Fatal(err)
	}
}
