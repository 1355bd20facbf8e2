package gateway

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// oauthTokenLimit bounds the token route's form body (four short fields);
// the route table states the same limit for the OpenAPI document.
const oauthTokenLimit = 16 << 10

// oauthToken serves POST /v1/oauth/token, the client-credentials grant of
// RFC 6749 §4.4 (docs/portal.md). It answers in RFC 6749's JSON shapes, not
// problem documents, because OAuth client libraries parse exactly those
// (docs/errors.md); only what is not an OAuth answer (a body over the limit,
// throttling, a backend that cannot be reached) is a problem document.
func (g *Gateway) oauthToken(client meteringv1.OAuthServiceClient) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reqID := requestID(r.Context())
		refuse := func(code, desc string) {
			g.log.Info("oauth token refused", "request_id", reqID, "error", code)
			writeOAuthError(w, code, desc)
		}
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != "application/x-www-form-urlencoded" {
			refuse("invalid_request", "the body must be application/x-www-form-urlencoded")
			return
		}
		body, reject := readBody(w, r, oauthTokenLimit)
		if reject != nil {
			if reject.Type == problem.MessageTooLarge {
				writeProblem(w, reject, reqID)
				return
			}
			refuse("invalid_request", "the body could not be read")
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			refuse("invalid_request", "the body is not a valid form")
			return
		}
		// RFC 6749 §3.2: no parameter more than once. Every value travels as a
		// protobuf string, which must be UTF-8.
		for k, vs := range form {
			if len(vs) > 1 {
				refuse("invalid_request", k+" is sent more than once")
				return
			}
			if !utf8.ValidString(k) || !utf8.ValidString(vs[0]) || strings.ContainsRune(vs[0], 0) {
				refuse("invalid_request", "the form holds text that is not UTF-8")
				return
			}
		}
		id, secret := form.Get("client_id"), form.Get("client_secret")
		if h := r.Header.Get("Authorization"); h != "" {
			user, pass, ok := r.BasicAuth()
			if !ok {
				refuse("invalid_client", "only HTTP Basic client authentication is accepted in Authorization")
				return
			}
			if secret != "" {
				refuse("invalid_request", "authenticate with HTTP Basic or with client_secret in the body, not both")
				return
			}
			// RFC 6749 §2.3.1: both are form-encoded before Basic encoding.
			u, err1 := url.QueryUnescape(user)
			p, err2 := url.QueryUnescape(pass)
			if err1 != nil || err2 != nil || !utf8.ValidString(u) || !utf8.ValidString(p) || (id != "" && id != u) {
				refuse("invalid_client", "the HTTP Basic credentials cannot be read")
				return
			}
			id, secret = u, p
		}
		res, err := client.Token(r.Context(), &meteringv1.TokenRequest{GrantType: form.Get("grant_type"),
			ClientId: id, ClientSecret: secret, Scope: form.Get("scope")})
		if err != nil {
			p := rpc.Problem(err)
			if p.Type == problem.RateLimited {
				g.log.Info("oauth token throttled", "request_id", reqID)
			}
			writeProblem(w, p, reqID)
			return
		}
		if res.GetError() != "" {
			refuse(res.GetError(), res.GetErrorDescription())
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		_ = json.NewEncoder(w).Encode(struct {
			AccessToken string `json:"access_token"`
			TokenType   string `json:"token_type"`
			ExpiresIn   int64  `json:"expires_in"`
			Scope       string `json:"scope"`
		}{res.GetAccessToken(), res.GetTokenType(), res.GetExpiresIn(), res.GetScope()})
	}
}

// writeOAuthError writes an RFC 6749 §5.2 error: 401 with a Basic challenge
// for invalid_client, else 400.
func writeOAuthError(w http.ResponseWriter, code, desc string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	status := http.StatusBadRequest
	if code == "invalid_client" {
		h.Set("WWW-Authenticate", `Basic realm="ledgerlane"`)
		status = http.StatusUnauthorized
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{code, desc})
}
