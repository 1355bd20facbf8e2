package sandboxplatform_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/accounting/sandboxplatform"
	"github.com/ledgerlane/platform/services/jobs/accounting/xero"
)

func kind(err error) accounting.ErrorKind {
	var pe *accounting.PlatformError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return -1
}

// authorize follows the sandbox's authorization endpoint and returns the
// code it redirects with.
func authorize(t *testing.T, authURL string) url.Values {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d %v", resp.StatusCode, err)
	}
	return loc.Query()
}

// The xero adapter against the sandbox: the whole OAuth and bank-transaction
// surface the sandbox promises.
func TestSandboxSpeaksTheXeroShape(t *testing.T) {
	ctx := context.Background()
	sb := sandboxplatform.New(sandboxplatform.Config{})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	const redirect = "http://127.0.0.1:1/v1/connections/callback"
	p := xero.NewSandbox(srv.URL, sandboxplatform.ClientID, sandboxplatform.ClientSecret, redirect, nil)

	q := authorize(t, p.AuthCodeURL("st-1", "the-verifier-0123456789012345678901234567890"))
	if q.Get("state") != "st-1" || q.Get("code") == "" {
		t.Fatalf("redirect query %v", q)
	}
	// A wrong verifier is refused, and the code is then used up.
	if _, err := p.Exchange(ctx, accounting.Callback{Code: q.Get("code"), Verifier: "another-verifier-0123456789012345678901234567"}); kind(err) != accounting.KindInvalidGrant {
		t.Fatalf("wrong verifier: %v", err)
	}
	q = authorize(t, p.AuthCodeURL("st-2", "the-verifier-0123456789012345678901234567890"))
	g, err := p.Exchange(ctx, accounting.Callback{Code: q.Get("code"), Verifier: "the-verifier-0123456789012345678901234567890"})
	if err != nil || g.TenantID == "" || g.Token.AccessToken == "" || g.Token.RefreshToken == "" {
		t.Fatalf("exchange: %+v %v", g, err)
	}
	if _, err := p.Exchange(ctx, accounting.Callback{Code: q.Get("code"), Verifier: "the-verifier-0123456789012345678901234567890"}); kind(err) != accounting.KindInvalidGrant {
		t.Fatalf("a code used twice: %v", err)
	}

	tx := accounting.BankTransaction{Key: "k1", Date: "2026-03-01", Amount: "12.50", Currency: "EUR", BankAccount: "1000", ContraAccount: "4000"}
	id1, err := p.Push(ctx, g.Token.AccessToken, g.TenantID, tx)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := p.Push(ctx, g.Token.AccessToken, g.TenantID, tx)
	if err != nil || id2 != id1 || len(sb.Transactions()) != 1 {
		t.Fatalf("same key twice: %s %s %v (%d stored)", id1, id2, err, len(sb.Transactions()))
	}
	tx.Key, tx.BankAccount = "k2", ""
	if _, err := p.Push(ctx, g.Token.AccessToken, g.TenantID, tx); kind(err) != accounting.KindRejected {
		t.Fatalf("no bank account: %v", err)
	}
	if _, err := p.Push(ctx, g.Token.AccessToken, "another-tenant", tx); kind(err) != accounting.KindRejected {
		t.Fatalf("another tenant: %v", err)
	}

	// Refresh rotates: the old refresh token is spent.
	tok, err := p.Refresh(ctx, g.Token.RefreshToken)
	if err != nil || tok.RefreshToken == g.Token.RefreshToken {
		t.Fatalf("refresh: %v", err)
	}
	if _, err := p.Refresh(ctx, g.Token.RefreshToken); kind(err) != accounting.KindInvalidGrant {
		t.Fatalf("a spent refresh token: %v", err)
	}
	sb.ExpireAccessTokens()
	if _, err := p.Push(ctx, tok.AccessToken, g.TenantID, tx); kind(err) != accounting.KindUnauthorized {
		t.Fatalf("an expired access token: %v", err)
	}
	// Revocation ends the grant.
	if err := p.Revoke(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if gs := sb.Grants(); len(gs) != 1 || !gs[0].Revoked {
		t.Fatalf("grants %+v", gs)
	}
	if _, err := p.Refresh(ctx, tok.RefreshToken); kind(err) != accounting.KindInvalidGrant {
		t.Fatalf("refresh after revocation: %v", err)
	}
}

func TestSandboxDeny(t *testing.T) {
	sb := sandboxplatform.New(sandboxplatform.Config{})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	p := xero.NewSandbox(srv.URL, sandboxplatform.ClientID, sandboxplatform.ClientSecret, "http://127.0.0.1:1/cb", nil)
	q := authorize(t, p.AuthCodeURL("st", "v")+"&deny=1")
	if q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != "st" {
		t.Fatalf("deny: %v", q)
	}
	bad := xero.NewSandbox(srv.URL, sandboxplatform.ClientID, "wrong", "http://127.0.0.1:1/cb", nil)
	q = authorize(t, bad.AuthCodeURL("st", "v"))
	if _, err := bad.Exchange(context.Background(), accounting.Callback{Code: q.Get("code"), Verifier: "v"}); kind(err) != accounting.KindInvalidGrant {
		t.Fatalf("wrong client secret: %v", err)
	}
}
