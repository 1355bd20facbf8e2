// Package sandboxplatform is a small accounting platform for the local stack
// and tests. It speaks the HTTP API shape the xero adapter expects (OAuth 2.0
// authorization code with PKCE, refresh and RFC 7009 revocation, GET
// /connections, PUT and GET /api.xro/2.0/BankTransactions with an
// Idempotency-Key), auto-approves every authorization, and shows what it
// holds at GET /sandbox/transactions and GET /sandbox/grants (no token
// values) so the whole flow can be tried with curl. Everything is in memory.
package sandboxplatform

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Client credentials of the local stack's sandbox app.
const (
	ClientID     = "ledgerlane-local"
	ClientSecret = "sandbox-secret"
)

// Config shapes a Platform.
type Config struct {
	// AccessTTL is an access token's lifetime (default 30 minutes).
	AccessTTL time.Duration
	Now       func() time.Time
}

// Grant is one authorization: its organisation and whether it was revoked.
type Grant struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenant_id"`
	Revoked   bool      `json:"revoked"`
	CreatedAt time.Time `json:"created_at"`
	Refreshes int       `json:"refreshes"`
}

// Transaction is a stored bank transaction, in the API's shape plus its
// organisation.
type Transaction struct {
	TenantID          string          `json:"TenantID"`
	BankTransactionID string          `json:"BankTransactionID"`
	IdempotencyKey    string          `json:"IdempotencyKey"`
	Body              json.RawMessage `json:"BankTransaction"`
}

type code struct {
	redirect  string
	challenge string
	expires   time.Time
}

type token struct {
	grant   string
	refresh bool
	expires time.Time
}

// Platform is the sandbox; it is an http.Handler.
type Platform struct {
	cfg    Config
	mu     sync.Mutex
	codes  map[string]code
	tokens map[string]token // by token value
	grants map[string]*Grant
	txs    []Transaction
	byKey  map[string]int // tenant|idempotency key → index in txs
	issued []string
	mux    *http.ServeMux
}

// New returns an empty sandbox.
func New(cfg Config) *Platform {
	if cfg.AccessTTL <= 0 {
		cfg.AccessTTL = 30 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Platform{cfg: cfg, codes: map[string]code{}, tokens: map[string]token{}, grants: map[string]*Grant{}, byKey: map[string]int{}}
	m := http.NewServeMux()
	m.HandleFunc("GET /oauth/authorize", p.authorize)
	m.HandleFunc("POST /oauth/token", p.token)
	m.HandleFunc("POST /oauth/revoke", p.revoke)
	m.HandleFunc("GET /connections", p.withGrant(p.connections))
	m.HandleFunc("PUT /api.xro/2.0/BankTransactions", p.withGrant(p.putTransactions))
	m.HandleFunc("GET /api.xro/2.0/BankTransactions", p.withGrant(p.getTransactions))
	m.HandleFunc("GET /sandbox/transactions", p.inspectTransactions)
	m.HandleFunc("GET /sandbox/grants", p.inspectGrants)
	p.mux = m
	return p
}

func (p *Platform) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.mux.ServeHTTP(w, r) }

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// authorize approves at once: it redirects to redirect_uri with a code (or
// an error the client asked for with ?deny=1, to try the declined path).
func (p *Platform) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme == "" || q.Get("client_id") != ClientID || q.Get("response_type") != "code" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "client_id, response_type=code and an absolute redirect_uri are required")
		return
	}
	if q.Get("code_challenge") != "" && q.Get("code_challenge_method") != "S256" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "only code_challenge_method S256 is supported")
		return
	}
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	if q.Get("deny") != "" {
		back.Set("error", "access_denied")
	} else {
		c := random()
		p.mu.Lock()
		p.codes[c] = code{redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), expires: p.cfg.Now().Add(5 * time.Minute)}
		p.mu.Unlock()
		back.Set("code", c)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (p *Platform) clientOK(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if u, err := url.QueryUnescape(id); err == nil {
		id = u
	}
	if u, err := url.QueryUnescape(secret); err == nil {
		secret = u
	}
	return subtle.ConstantTimeCompare([]byte(id), []byte(ClientID)) == 1 &&
		subtle.ConstantTimeCompare([]byte(secret), []byte(ClientSecret)) == 1
}

func (p *Platform) issue(g *Grant) map[string]any {
	access, refresh := random(), random()
	now := p.cfg.Now()
	p.tokens[access] = token{grant: g.ID, expires: now.Add(p.cfg.AccessTTL)}
	p.tokens[refresh] = token{grant: g.ID, refresh: true, expires: now.Add(60 * 24 * time.Hour)}
	p.issued = append(p.issued, access, refresh)
	return map[string]any{"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
		"expires_in": int(p.cfg.AccessTTL / time.Second)}
}

// token serves authorization_code (checking the PKCE verifier and the
// redirect URI) and refresh_token (rotating the refresh token).
func (p *Platform) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "form body expected")
		return
	}
	if !p.clientOK(r) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		c, ok := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code")) // single use
		if !ok || now.After(c.expires) || c.redirect != r.PostForm.Get("redirect_uri") {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or expired code, or another redirect_uri")
			return
		}
		if c.challenge != "" {
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
				oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
				return
			}
		}
		g := &Grant{ID: random(), TenantID: newID(), CreatedAt: now}
		p.grants[g.ID] = g
		writeJSON(w, http.StatusOK, p.issue(g))
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		t, ok := p.tokens[rt]
		if !ok || !t.refresh || now.After(t.expires) || p.grants[t.grant].Revoked {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or revoked refresh token")
			return
		}
		delete(p.tokens, rt) // rotated, as Xero does
		g := p.grants[t.grant]
		g.Refreshes++
		writeJSON(w, http.StatusOK, p.issue(g))
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "authorization_code or refresh_token")
	}
}

// revoke ends the grant a token belongs to (RFC 7009: 200 whatever the
// token).
func (p *Platform) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || !p.clientOK(r) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	p.mu.Lock()
	if t, ok := p.tokens[r.PostForm.Get("token")]; ok {
		p.grants[t.grant].Revoked = true
	}
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// bearer returns the live grant of the request's access token.
func (p *Platform) bearer(w http.ResponseWriter, r *http.Request) (*Grant, bool) {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t, found := p.tokens[v]
	if !ok || !found || t.refresh || p.cfg.Now().After(t.expires) || p.grants[t.grant].Revoked {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"Title": "Unauthorized", "Detail": "TokenExpired or revoked"})
		return nil, false
	}
	return p.grants[t.grant], true
}

// withGrant serves h under the platform's lock with the live grant of the
// request's access token, answering 401 when there is none.
func (p *Platform) withGrant(h func(http.ResponseWriter, *http.Request, *Grant)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if g, ok := p.bearer(w, r); ok {
			h(w, r, g)
		}
	}
}

func (p *Platform) connections(w http.ResponseWriter, r *http.Request, g *Grant) {
	writeJSON(w, http.StatusOK, []map[string]string{{"id": g.ID, "tenantId": g.TenantID, "tenantType": "ORGANISATION", "tenantName": "Sandbox Company"}})
}

type validation struct {
	ErrorNumber int    `json:"ErrorNumber"`
	Type        string `json:"Type"`
	Message     string `json:"Message"`
	Elements    []struct {
		ValidationErrors []struct {
			Message string `json:"Message"`
		} `json:"ValidationErrors"`
	} `json:"Elements"`
}

func invalid(w http.ResponseWriter, msg string) {
	v := validation{ErrorNumber: 10, Type: "ValidationException", Message: "A validation exception occurred"}
	v.Elements = make([]struct {
		ValidationErrors []struct {
			Message string `json:"Message"`
		} `json:"ValidationErrors"`
	}, 1)
	v.Elements[0].ValidationErrors = append(v.Elements[0].ValidationErrors, struct {
		Message string `json:"Message"`
	}{msg})
	writeJSON(w, http.StatusBadRequest, v)
}

type bankTx struct {
	BankTransactionID string `json:"BankTransactionID,omitempty"`
	Type              string `json:"Type"`
	Date              string `json:"Date"`
	BankAccount       struct {
		Code string `json:"Code"`
	} `json:"BankAccount"`
	LineItems []struct {
		UnitAmount  json.Number `json:"UnitAmount"`
		AccountCode string      `json:"AccountCode"`
	} `json:"LineItems"`
}

// putTransactions creates bank transactions; a repeated Idempotency-Key of
// the same organisation answers the first result and creates nothing.
func (p *Platform) putTransactions(w http.ResponseWriter, r *http.Request, g *Grant) {
	if r.Header.Get("xero-tenant-id") != g.TenantID {
		writeJSON(w, http.StatusForbidden, map[string]string{"Title": "Forbidden", "Detail": "AuthenticationUnsuccessful: wrong xero-tenant-id"})
		return
	}
	var env struct {
		BankTransactions []json.RawMessage `json:"BankTransactions"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&env); err != nil || len(env.BankTransactions) == 0 {
		invalid(w, "a BankTransactions array is required")
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if i, ok := p.byKey[g.TenantID+"|"+key]; ok && key != "" {
		writeJSON(w, http.StatusOK, map[string]any{"BankTransactions": []json.RawMessage{p.txs[i].Body}})
		return
	}
	var out []json.RawMessage
	for _, raw := range env.BankTransactions {
		var bt bankTx
		if err := json.Unmarshal(raw, &bt); err != nil {
			invalid(w, "unreadable bank transaction")
			return
		}
		switch {
		case bt.Type != "RECEIVE" && bt.Type != "SPEND":
			invalid(w, "Type must be RECEIVE or SPEND")
			return
		case bt.BankAccount.Code == "":
			invalid(w, "A bank account must be specified")
			return
		case len(bt.LineItems) == 0 || bt.LineItems[0].AccountCode == "":
			invalid(w, "A line item with an AccountCode is required")
			return
		case len(bt.Date) != 10:
			invalid(w, "Date must be YYYY-MM-DD")
			return
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		m["BankTransactionID"] = newID()
		m["Status"] = "AUTHORISED"
		m["Total"] = bt.LineItems[0].UnitAmount
		body, _ := json.Marshal(m)
		p.txs = append(p.txs, Transaction{TenantID: g.TenantID, BankTransactionID: m["BankTransactionID"].(string), IdempotencyKey: key, Body: body})
		if key != "" {
			p.byKey[g.TenantID+"|"+key] = len(p.txs) - 1
		}
		out = append(out, body)
	}
	writeJSON(w, http.StatusOK, map[string]any{"BankTransactions": out})
}

func (p *Platform) getTransactions(w http.ResponseWriter, r *http.Request, g *Grant) {
	out := []json.RawMessage{}
	for _, t := range p.txs {
		if t.TenantID == g.TenantID {
			out = append(out, t.Body)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"BankTransactions": out})
}

// Transactions returns every stored transaction (tests and
// GET /sandbox/transactions).
func (p *Platform) Transactions() []Transaction {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Transaction(nil), p.txs...)
}

// Grants returns every grant, oldest first.
func (p *Platform) Grants() []Grant {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Grant, 0, len(p.grants))
	for _, g := range p.grants {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// ExpireAccessTokens makes every access token expired, as if time had
// passed: the next call must refresh (tests).
func (p *Platform) ExpireAccessTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, t := range p.tokens {
		if !t.refresh {
			t.expires = time.Time{}
			p.tokens[k] = t
		}
	}
}

func (p *Platform) inspectTransactions(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"transactions": p.Transactions()})
}

func (p *Platform) inspectGrants(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"grants": p.Grants()})
}

func newID() string { return uuid.NewString() }

// Server is the sandbox on a listener.
type Server struct {
	*Platform
	// URL is the base address, e.g. http://127.0.0.1:41234.
	URL string
	srv *http.Server
}

// Start serves a new sandbox on addr ("127.0.0.1:0" picks a free port).
func Start(addr string, cfg Config) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Platform: New(cfg), URL: "http://" + lis.Addr().String()}
	s.srv = &http.Server{Handler: s.Platform, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// IssuedTokens returns every access and refresh token ever issued, so tests
// can check that none of them leaks into a response or a log line.
func (p *Platform) IssuedTokens() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.issued...)
}

// RevokeAll revokes every grant, as a user disconnecting the app at the
// platform would: the next refresh is refused (tests).
func (p *Platform) RevokeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.grants {
		g.Revoked = true
	}
}
