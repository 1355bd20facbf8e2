// Package xero is the accounting.Platform for Xero: OAuth 2.0 with PKCE at
// Xero's identity server, the organisation from GET /connections, and bank
// transactions through the Accounting API (PUT BankTransactions with an
// Idempotency-Key). The local sandbox platform speaks the same API, so the
// sandbox is this adapter on the sandbox's endpoints (NewSandbox).
package xero

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/accounting/oauth"
)

// Xero's public endpoints (developer.xero.com, "OAuth 2.0" and
// "Accounting API").
const (
	DefaultAuthURL        = "https://login.xero.com/identity/connect/authorize"
	DefaultTokenURL       = "https://identity.xero.com/connect/token"
	DefaultRevokeURL      = "https://identity.xero.com/connect/revocation"
	DefaultConnectionsURL = "https://api.xero.com/connections"
	DefaultAPIURL         = "https://api.xero.com/api.xro/2.0"
)

// DefaultScopes: a refresh token (offline_access) and bank transactions.
var DefaultScopes = []string{"offline_access", "accounting.transactions"}

// Config is a Xero app. Empty URLs take Xero's.
type Config struct {
	ClientID, ClientSecret, RedirectURL string
	AuthURL, TokenURL, RevokeURL        string
	ConnectionsURL, APIURL              string
	Scopes                              []string
	HTTP                                *http.Client
}

// Platform is Xero (or the sandbox).
type Platform struct {
	// Client is the OAuth 2.0 client: AuthCodeURL, Refresh and Revoke
	// (which revokes the refresh token: it ends the grant, and its access tokens, at Xero) are its own.
	*oauth.Client
	connections string
	api         string
	// Sandbox defaults for the accounts a push names.
	required           bool
	defBank, defContra string
}

var _ accounting.Platform = (*Platform)(nil)

// New returns the Xero adapter.
func New(cfg Config) *Platform {
	scopes := cfg.Scopes
	if len(scopes) == 0 {
		scopes = DefaultScopes
	}
	return &Platform{
		Client: oauth.New(oauth.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			AuthURL: cmp.Or(cfg.AuthURL, DefaultAuthURL), TokenURL: cmp.Or(cfg.TokenURL, DefaultTokenURL),
			RevokeURL: cmp.Or(cfg.RevokeURL, DefaultRevokeURL), Scopes: scopes, PKCE: true, HTTP: cfg.HTTP,
		}),
		connections: cmp.Or(cfg.ConnectionsURL, DefaultConnectionsURL),
		api:         strings.TrimSuffix(cmp.Or(cfg.APIURL, DefaultAPIURL), "/"),
		required:    true,
	}
}

// NewSandbox returns the adapter for the local sandbox platform at base
// (sandboxplatform serves Xero's paths under it); pushes need no accounts.
func NewSandbox(base, clientID, clientSecret, redirectURL string, hc *http.Client) *Platform {
	base = strings.TrimSuffix(base, "/")
	p := New(Config{
		ClientID: clientID, ClientSecret: clientSecret, RedirectURL: redirectURL,
		AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", RevokeURL: base + "/oauth/revoke",
		ConnectionsURL: base + "/connections", APIURL: base + "/api.xro/2.0", HTTP: hc,
	})
	p.required, p.defBank, p.defContra = false, "1000", "4000"
	return p
}

func (p *Platform) Accounts() (bool, string, string) { return p.required, p.defBank, p.defContra }

// Exchange trades the code, then asks GET /connections which organisation
// the user authorised: the first ORGANISATION tenant.
func (p *Platform) Exchange(ctx context.Context, cb accounting.Callback) (accounting.Grant, error) {
	tok, err := p.Client.Exchange(ctx, cb.Code, cb.Verifier)
	if err != nil {
		return accounting.Grant{}, err
	}
	var conns []struct {
		TenantID   string `json:"tenantId"`
		TenantType string `json:"tenantType"`
	}
	if err := p.call(ctx, http.MethodGet, p.connections, tok.AccessToken, "", "", nil, &conns); err != nil {
		return accounting.Grant{}, err
	}
	for _, c := range conns {
		if c.TenantType == "ORGANISATION" && c.TenantID != "" {
			return accounting.Grant{Token: tok, TenantID: c.TenantID}, nil
		}
	}
	return accounting.Grant{}, &accounting.PlatformError{Kind: accounting.KindRejected, Status: http.StatusOK,
		Message: "the authorization names no organisation"}
}

// BankTransaction is Xero's bank transaction, as PUT and answered.
type BankTransaction struct {
	BankTransactionID string     `json:"BankTransactionID,omitempty"`
	Type              string     `json:"Type"` // RECEIVE or SPEND
	Contact           *Contact   `json:"Contact,omitempty"`
	LineItems         []LineItem `json:"LineItems"`
	BankAccount       Account    `json:"BankAccount"`
	Date              string     `json:"Date"`
	Reference         string     `json:"Reference,omitempty"`
	CurrencyCode      string     `json:"CurrencyCode,omitempty"`
	LineAmountTypes   string     `json:"LineAmountTypes"`
	Status            string     `json:"Status,omitempty"`
	// Total is what Xero answers; json.Number keeps the decimal exact.
	Total json.Number `json:"Total,omitempty"`
}

type Contact struct {
	Name string `json:"Name"`
}

type LineItem struct {
	Description string      `json:"Description"`
	Quantity    json.Number `json:"Quantity"`
	UnitAmount  json.Number `json:"UnitAmount"`
	AccountCode string      `json:"AccountCode"`
}

type Account struct {
	Code string `json:"Code"`
}

// Envelope is the Accounting API's body for bank transactions.
type Envelope struct {
	BankTransactions []BankTransaction `json:"BankTransactions"`
}

// Push PUTs one bank transaction: RECEIVE for a credit, SPEND for a debit,
// one line on the contra account, no tax (a bank statement carries none).
func (p *Platform) Push(ctx context.Context, accessToken, tenantID string, tx accounting.BankTransaction) (string, error) {
	bt := BankTransaction{
		Type: "SPEND", BankAccount: Account{Code: tx.BankAccount}, Date: tx.Date, Reference: tx.Reference,
		CurrencyCode: tx.Currency, LineAmountTypes: "NoTax",
		LineItems: []LineItem{{Description: cmp.Or(tx.Description, "Bank statement entry"), Quantity: "1",
			UnitAmount: json.Number(tx.Amount), AccountCode: tx.ContraAccount}},
	}
	if tx.Credit {
		bt.Type = "RECEIVE"
	}
	if tx.Counterparty != "" {
		bt.Contact = &Contact{Name: tx.Counterparty}
	} else {
		bt.Contact = &Contact{Name: "Bank statement"}
	}
	var out Envelope
	if err := p.call(ctx, http.MethodPut, p.api+"/BankTransactions", accessToken, tenantID, tx.Key, Envelope{[]BankTransaction{bt}}, &out); err != nil {
		return "", err
	}
	if len(out.BankTransactions) != 1 || out.BankTransactions[0].BankTransactionID == "" {
		return "", &accounting.PlatformError{Kind: accounting.KindRejected, Status: http.StatusOK, Message: "the answer names no BankTransactionID"}
	}
	return out.BankTransactions[0].BankTransactionID, nil
}

// apiError is the Accounting API's error body.
type apiError struct {
	Type     string `json:"Type"`
	Message  string `json:"Message"`
	Detail   string `json:"Detail"`
	Title    string `json:"Title"`
	Elements []struct {
		ValidationErrors []struct {
			Message string `json:"Message"`
		} `json:"ValidationErrors"`
	} `json:"Elements"`
}

func (e apiError) text() string {
	var parts []string
	for _, el := range e.Elements {
		for _, v := range el.ValidationErrors {
			parts = append(parts, v.Message)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	return cmp.Or(e.Message, cmp.Or(e.Detail, e.Title))
}

func (p *Platform) call(ctx context.Context, method, url, accessToken, tenantID, idemKey string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tenantID != "" {
		req.Header.Set("xero-tenant-id", tenantID)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := p.Client.HTTP().Do(req)
	if err != nil {
		return oauth.Unreachable()
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return oauth.Unreachable()
	}
	if resp.StatusCode/100 != 2 {
		var e apiError
		_ = json.Unmarshal(raw, &e)
		return oauth.StatusError(resp.StatusCode, e.text())
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return &accounting.PlatformError{Kind: accounting.KindRejected, Status: resp.StatusCode, Message: fmt.Sprintf("unreadable answer: %v", err)}
		}
	}
	return nil
}
