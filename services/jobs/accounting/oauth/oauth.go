// Package oauth is the OAuth 2.0 authorization-code client the platform
// adapters share (golang.org/x/oauth2 underneath): the authorization URL
// with an S256 PKCE challenge where the platform supports it, the code
// exchange, the refresh, RFC 7009 revocation (or QuickBooks' JSON variant),
// and the classification of platform answers into accounting.PlatformError.
package oauth

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/ledgerlane/platform/services/jobs/accounting"
)

// Config is one platform's OAuth client.
type Config struct {
	ClientID, ClientSecret string
	// RedirectURL is our callback (GET /v1/connections/callback on the
	// public edge), registered with the platform.
	RedirectURL                  string
	AuthURL, TokenURL, RevokeURL string
	Scopes                       []string
	// PKCE sends an S256 code challenge and the verifier (RFC 7636).
	PKCE bool
	// RevokeJSON posts {"token": …} as JSON (QuickBooks) instead of the
	// RFC 7009 form.
	RevokeJSON bool
	// HTTP is the client for every call (default: 30 s timeout).
	HTTP *http.Client
}

// Client speaks one platform's OAuth endpoints.
type Client struct {
	cfg Config
	oc  oauth2.Config
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{cfg: cfg, oc: oauth2.Config{
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL, Scopes: cfg.Scopes,
		// Basic authentication, stated: autodetection would send the
		// secret twice, once in the clear body, on a first failure.
		Endpoint: oauth2.Endpoint{AuthURL: cfg.AuthURL, TokenURL: cfg.TokenURL, AuthStyle: oauth2.AuthStyleInHeader},
	}}
}

// HTTP is the client adapters use for API calls.
func (c *Client) HTTP() *http.Client { return c.cfg.HTTP }

// AuthCodeURL is the authorization endpoint with our parameters.
func (c *Client) AuthCodeURL(state, verifier string) string {
	var opts []oauth2.AuthCodeOption
	if c.cfg.PKCE && verifier != "" {
		opts = append(opts, oauth2.S256ChallengeOption(verifier))
	}
	return c.oc.AuthCodeURL(state, opts...)
}

func (c *Client) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, c.cfg.HTTP)
}

// Exchange trades a code (with the verifier, under PKCE) for tokens.
func (c *Client) Exchange(ctx context.Context, code, verifier string) (accounting.Token, error) {
	var opts []oauth2.AuthCodeOption
	if c.cfg.PKCE && verifier != "" {
		opts = append(opts, oauth2.VerifierOption(verifier))
	}
	t, err := c.oc.Exchange(c.ctx(ctx), code, opts...)
	if err != nil {
		return accounting.Token{}, tokenErr(err)
	}
	return token(t), nil
}

// Refresh trades a refresh token for new tokens.
func (c *Client) Refresh(ctx context.Context, refresh string) (accounting.Token, error) {
	if refresh == "" {
		return accounting.Token{}, &accounting.PlatformError{Kind: accounting.KindInvalidGrant, Message: "no refresh token was issued"}
	}
	t, err := c.oc.TokenSource(c.ctx(ctx), &oauth2.Token{RefreshToken: refresh, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		return accounting.Token{}, tokenErr(err)
	}
	return token(t), nil
}

func token(t *oauth2.Token) accounting.Token {
	return accounting.Token{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

// tokenErr classifies a token endpoint failure: a 4xx answer (invalid_grant,
// invalid_client…) means the grant is gone; anything else is transient.
func tokenErr(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		st := re.Response.StatusCode
		msg := re.ErrorCode
		if re.ErrorDescription != "" {
			msg += ": " + re.ErrorDescription
		}
		if st >= 400 && st < 500 && st != http.StatusTooManyRequests {
			return &accounting.PlatformError{Kind: accounting.KindInvalidGrant, Status: st, Message: strings.TrimPrefix(msg, ": ")}
		}
		return &accounting.PlatformError{Kind: accounting.KindUnavailable, Status: st}
	}
	return &accounting.PlatformError{Kind: accounting.KindUnavailable, Message: ""}
}

// Revoke revokes the grant of t: its refresh token, which revokes the
// whole grant at QuickBooks, Xero and the sandbox, else its access token.
func (c *Client) Revoke(ctx context.Context, t accounting.Token) error {
	if c.cfg.RevokeURL == "" {
		return nil
	}
	tok := cmp.Or(t.RefreshToken, t.AccessToken)
	var body io.Reader
	ctype := "application/x-www-form-urlencoded"
	if c.cfg.RevokeJSON {
		b, _ := json.Marshal(map[string]string{"token": tok})
		body, ctype = bytes.NewReader(b), "application/json"
	} else {
		body = strings.NewReader(url.Values{"token": {tok}, "token_type_hint": {"refresh_token"}}.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.RevokeURL, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(c.cfg.ClientID), url.QueryEscape(c.cfg.ClientSecret))
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return &accounting.PlatformError{Kind: accounting.KindUnavailable}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return StatusError(resp.StatusCode, oauthMessage(raw))
}

func oauthMessage(raw []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	return strings.TrimPrefix(e.Error+": "+e.Description, ": ")
}

// StatusError classifies an API answer with a non-2xx status: 401 is an
// access token the platform no longer takes, 429 and 5xx are transient, any
// other 4xx is the platform refusing the request.
func StatusError(status int, msg string) *accounting.PlatformError {
	switch {
	case status == http.StatusUnauthorized:
		return &accounting.PlatformError{Kind: accounting.KindUnauthorized, Status: status, Message: msg}
	case status == http.StatusTooManyRequests || status >= 500:
		return &accounting.PlatformError{Kind: accounting.KindUnavailable, Status: status, Message: msg}
	default:
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d", status)
		}
		return &accounting.PlatformError{Kind: accounting.KindRejected, Status: status, Message: msg}
	}
}

// Unreachable is the error for a call that got no answer.
func Unreachable() *accounting.PlatformError {
	return &accounting.PlatformError{Kind: accounting.KindUnavailable}
}
