// Package quickbooks is the accounting.Platform for QuickBooks Online:
// OAuth 2.0 at Intuit (a confidential client with its secret; no PKCE, which
// Intuit's documentation for server apps does not describe), the company
// from the callback's realmId, and bank transactions as a Deposit (money
// in) or a Purchase paid from the bank account (money out) through the
// Accounting API, each with a requestid so a retried call books once.
package quickbooks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/accounting/oauth"
)

// Intuit's public endpoints (developer.intuit.com, "OAuth 2.0" and the
// Accounting API reference).
const (
	DefaultAuthURL   = "https://appcenter.intuit.com/connect/oauth2"
	DefaultTokenURL  = "https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer"
	DefaultRevokeURL = "https://developer.api.intuit.com/v2/oauth2/tokens/revoke"
	DefaultAPIURL    = "https://quickbooks.api.intuit.com"
	// SandboxAPIURL is Intuit's development company API.
	SandboxAPIURL = "https://sandbox-quickbooks.api.intuit.com"
	// MinorVersion pins the API's minor version.
	MinorVersion = "75"
)

// Config is an Intuit app. Empty URLs take Intuit's.
type Config struct {
	ClientID, ClientSecret, RedirectURL string
	AuthURL, TokenURL, RevokeURL        string
	APIURL                              string
	HTTP                                *http.Client
}

// Platform is QuickBooks Online.
type Platform struct {
	// Client is the OAuth 2.0 client: AuthCodeURL, Refresh and Revoke
	// (which revokes the refresh token: it disconnects the app from the company) are its own.
	*oauth.Client
	api string
}

var _ accounting.Platform = (*Platform)(nil)

// New returns the QuickBooks adapter.
func New(cfg Config) *Platform {
	return &Platform{
		Client: oauth.New(oauth.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			AuthURL: cmp.Or(cfg.AuthURL, DefaultAuthURL), TokenURL: cmp.Or(cfg.TokenURL, DefaultTokenURL),
			RevokeURL: cmp.Or(cfg.RevokeURL, DefaultRevokeURL), Scopes: []string{"com.intuit.quickbooks.accounting"},
			RevokeJSON: true, HTTP: cfg.HTTP,
		}),
		api: strings.TrimSuffix(cmp.Or(cfg.APIURL, DefaultAPIURL), "/"),
	}
}

func (p *Platform) Accounts() (bool, string, string) { return true, "", "" }

// Exchange trades the code; the company is the callback's realmId.
func (p *Platform) Exchange(ctx context.Context, cb accounting.Callback) (accounting.Grant, error) {
	if cb.RealmID == "" {
		return accounting.Grant{}, problem.New(problem.AuthorizationFailed, "QuickBooks sent no realmId").WithField("realmId")
	}
	tok, err := p.Client.Exchange(ctx, cb.Code, "")
	if err != nil {
		return accounting.Grant{}, err
	}
	return accounting.Grant{Token: tok, TenantID: cb.RealmID}, nil
}

// Ref is a QuickBooks reference to another entity.
type Ref struct {
	Value string `json:"value"`
	Name  string `json:"name,omitempty"`
}

// Line is a Deposit or Purchase line.
type Line struct {
	Amount      json.Number `json:"Amount"`
	DetailType  string      `json:"DetailType"`
	Description string      `json:"Description,omitempty"`
	// DepositLineDetail for a Deposit, AccountBasedExpenseLineDetail for a
	// Purchase.
	DepositLineDetail             *LineDetail `json:"DepositLineDetail,omitempty"`
	AccountBasedExpenseLineDetail *LineDetail `json:"AccountBasedExpenseLineDetail,omitempty"`
}

type LineDetail struct {
	AccountRef Ref `json:"AccountRef"`
}

// Deposit is money into a bank account.
type Deposit struct {
	Id                  string `json:"Id,omitempty"`
	DepositToAccountRef Ref    `json:"DepositToAccountRef"`
	TxnDate             string `json:"TxnDate"`
	CurrencyRef         *Ref   `json:"CurrencyRef,omitempty"`
	PrivateNote         string `json:"PrivateNote,omitempty"`
	Line                []Line `json:"Line"`
}

// Purchase is money out of a bank account (PaymentType Cash: a bank
// payment that is no cheque and no card).
type Purchase struct {
	Id          string `json:"Id,omitempty"`
	PaymentType string `json:"PaymentType"`
	AccountRef  Ref    `json:"AccountRef"`
	TxnDate     string `json:"TxnDate"`
	CurrencyRef *Ref   `json:"CurrencyRef,omitempty"`
	PrivateNote string `json:"PrivateNote,omitempty"`
	DocNumber   string `json:"DocNumber,omitempty"`
	Line        []Line `json:"Line"`
}

// Push creates a Deposit (credit) or Purchase (debit) with requestid = the
// transaction's key: QuickBooks answers a repeated requestid with the first
// result instead of booking again.
func (p *Platform) Push(ctx context.Context, accessToken, realmID string, tx accounting.BankTransaction) (string, error) {
	note := strings.TrimSpace(strings.Join([]string{tx.Counterparty, tx.Reference}, " "))
	line := Line{Amount: json.Number(tx.Amount), Description: cmp.Or(tx.Description, "Bank statement entry")}
	var ccy *Ref
	if tx.Currency != "" {
		ccy = &Ref{Value: tx.Currency}
	}
	var entity string
	var in any
	if tx.Credit {
		entity = "deposit"
		line.DetailType = "DepositLineDetail"
		line.DepositLineDetail = &LineDetail{AccountRef: Ref{Value: tx.ContraAccount}}
		in = Deposit{DepositToAccountRef: Ref{Value: tx.BankAccount}, TxnDate: tx.Date, CurrencyRef: ccy,
			PrivateNote: clip(note, 4000), Line: []Line{line}}
	} else {
		entity = "purchase"
		line.DetailType = "AccountBasedExpenseLineDetail"
		line.AccountBasedExpenseLineDetail = &LineDetail{AccountRef: Ref{Value: tx.ContraAccount}}
		in = Purchase{PaymentType: "Cash", AccountRef: Ref{Value: tx.BankAccount}, TxnDate: tx.Date, CurrencyRef: ccy,
			PrivateNote: clip(note, 4000), DocNumber: clip(tx.Reference, 21), Line: []Line{line}}
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	u := fmt.Sprintf("%s/v3/company/%s/%s?%s", p.api, url.PathEscape(realmID), entity,
		url.Values{"requestid": {tx.Key}, "minorversion": {MinorVersion}}.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.Client.HTTP().Do(req)
	if err != nil {
		return "", oauth.Unreachable()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", oauth.Unreachable()
	}
	if resp.StatusCode/100 != 2 {
		return "", oauth.StatusError(resp.StatusCode, faultText(body))
	}
	var out struct {
		Deposit  *Deposit  `json:"Deposit"`
		Purchase *Purchase `json:"Purchase"`
		Fault    *fault    `json:"Fault"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return "", &accounting.PlatformError{Kind: accounting.KindRejected, Status: resp.StatusCode, Message: "unreadable answer"}
	}
	switch {
	case out.Fault != nil: // QuickBooks may answer a fault with 200
		return "", &accounting.PlatformError{Kind: accounting.KindRejected, Status: resp.StatusCode, Message: out.Fault.text()}
	case out.Deposit != nil && out.Deposit.Id != "":
		return out.Deposit.Id, nil
	case out.Purchase != nil && out.Purchase.Id != "":
		return out.Purchase.Id, nil
	}
	return "", &accounting.PlatformError{Kind: accounting.KindRejected, Status: resp.StatusCode, Message: "the answer names no Id"}
}

// fault is the API's error body.
type fault struct {
	Type  string `json:"type"`
	Error []struct {
		Message string `json:"Message"`
		Detail  string `json:"Detail"`
		Code    string `json:"code"`
	} `json:"Error"`
}

func (f fault) text() string {
	var parts []string
	for _, e := range f.Error {
		s := e.Message
		if e.Detail != "" && e.Detail != e.Message {
			s += ": " + e.Detail
		}
		if e.Code != "" {
			s += " (code " + e.Code + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func faultText(body []byte) string {
	var out struct {
		Fault fault `json:"Fault"`
	}
	if json.Unmarshal(body, &out) != nil {
		return ""
	}
	return out.Fault.text()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
