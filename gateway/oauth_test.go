package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// fakeOAuth grants id "oc"/secret "s p&c" (a secret needing form-encoding
// in HTTP Basic) and remembers what it was asked.
type fakeOAuth struct {
	meteringv1.OAuthServiceClient // only Token is called
	got                           *meteringv1.TokenRequest
	err                           error
}

func (f *fakeOAuth) Token(_ context.Context, req *meteringv1.TokenRequest, _ ...grpc.CallOption) (*meteringv1.TokenResponse, error) {
	f.got = req
	if f.err != nil {
		return nil, f.err
	}
	if req.GetClientId() != "oc" || req.GetClientSecret() != "s p&c" {
		return &meteringv1.TokenResponse{Error: "invalid_client", ErrorDescription: "client authentication failed"}, nil
	}
	if req.GetGrantType() != "client_credentials" {
		return &meteringv1.TokenResponse{Error: "unsupported_grant_type"}, nil
	}
	return &meteringv1.TokenResponse{AccessToken: "at_test_x", TokenType: "Bearer", ExpiresIn: 3600, Scope: "convert"}, nil
}

func tokenRequest(body, contentType, auth string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/oauth/token", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestOAuthTokenHandler(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	for _, tc := range []struct {
		name, body, ctype, auth string
		status                  int
		code                    string // RFC 6749 error, or "" on success
	}{
		{"basic, form-encoded secret", "grant_type=client_credentials", form, basicAuth("oc", "s+p%26c"), 200, ""},
		{"form fields", "grant_type=client_credentials&client_id=oc&client_secret=s+p%26c", form + "; charset=utf-8", "", 200, ""},
		{"basic and matching client_id", "grant_type=client_credentials&client_id=oc", form, basicAuth("oc", "s+p%26c"), 200, ""},
		{"basic and another client_id", "grant_type=client_credentials&client_id=other", form, basicAuth("oc", "s+p%26c"), 401, "invalid_client"},
		{"both secrets", "grant_type=client_credentials&client_secret=x", form, basicAuth("oc", "s+p%26c"), 400, "invalid_request"},
		{"bearer", "grant_type=client_credentials", form, "Bearer at_test_x", 401, "invalid_client"},
		{"basic not form-encoded", "grant_type=client_credentials", form, basicAuth("oc", "%zz"), 401, "invalid_client"},
		{"json body", `{"grant_type":"client_credentials"}`, "application/json", basicAuth("oc", "s+p%26c"), 400, "invalid_request"},
		{"no content type", "grant_type=client_credentials", "", basicAuth("oc", "s+p%26c"), 400, "invalid_request"},
		{"repeated parameter", "grant_type=a&grant_type=b", form, basicAuth("oc", "s+p%26c"), 400, "invalid_request"},
		{"broken form", "grant_type=%zz", form, basicAuth("oc", "s+p%26c"), 400, "invalid_request"},
		{"not UTF-8", "grant_type=%ff", form, basicAuth("oc", "s+p%26c"), 400, "invalid_request"},
		{"a refusal of metering's", "grant_type=password", form, basicAuth("oc", "s+p%26c"), 400, "unsupported_grant_type"},
		{"wrong secret", "grant_type=client_credentials", form, basicAuth("oc", "nope"), 401, "invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &Gateway{log: slog.New(slog.DiscardHandler)}
			w := httptest.NewRecorder()
			g.oauthToken(&fakeOAuth{})(w, tokenRequest(tc.body, tc.ctype, tc.auth))
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("headers %v", w.Header())
			}
			var body map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if tc.code == "" {
				if body["access_token"] != "at_test_x" || body["expires_in"] != float64(3600) || body["token_type"] != "Bearer" {
					t.Fatalf("body %v", body)
				}
				return
			}
			if body["error"] != tc.code {
				t.Fatalf("error %v, want %s", body["error"], tc.code)
			}
			if (tc.status == 401) != (w.Header().Get("WWW-Authenticate") == `Basic realm="ledgerlane"`) {
				t.Fatalf("WWW-Authenticate %q on %d", w.Header().Get("WWW-Authenticate"), w.Code)
			}
		})
	}
}

func TestOAuthTokenProblems(t *testing.T) {
	g := &Gateway{log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name   string
		err    error
		body   string
		status int
	}{
		{"throttled", rpc.Status(problem.New(problem.RateLimited, "slow down").WithRetryAfter(60)), "grant_type=client_credentials", 429},
		{"unavailable", rpc.Status(problem.New(problem.Unavailable, "down")), "grant_type=client_credentials", 503},
		{"too large", nil, "grant_type=" + strings.Repeat("a", oauthTokenLimit), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			g.oauthToken(&fakeOAuth{err: tc.err})(w, tokenRequest(tc.body, "application/x-www-form-urlencoded", basicAuth("oc", "s")))
			if w.Code != tc.status || w.Header().Get("Content-Type") != problem.ContentType {
				t.Fatalf("%d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			if tc.status == 429 && w.Header().Get("Retry-After") != "60" {
				t.Fatalf("Retry-After %q", w.Header().Get("Retry-After"))
			}
		})
	}
}

// FuzzOAuthToken: whatever the body, media type and Authorization header,
// the token route answers a documented status with a JSON body, never 5xx.
func FuzzOAuthToken(f *testing.F) {
	f.Add("grant_type=client_credentials", "application/x-www-form-urlencoded", basicAuth("oc", "s+p%26c"))
	f.Add("grant_type=client_credentials&client_id=oc&client_secret=s+p%26c", "application/x-www-form-urlencoded", "")
	f.Add("grant_type=%zz&scope=a+b", "application/x-www-form-urlencoded; charset=x", "Basic !!!")
	f.Add("", "", "Bearer x")
	g := &Gateway{log: slog.New(slog.DiscardHandler)}
	f.Fuzz(func(t *testing.T, body, ctype, auth string) {
		w := httptest.NewRecorder()
		r := tokenRequest(body, "", "")
		r.Header["Content-Type"] = []string{ctype}
		r.Header["Authorization"] = []string{auth}
		g.oauthToken(&fakeOAuth{})(w, r)
		switch w.Code {
		case 200, 400, 401, 413:
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("not JSON: %q", w.Body)
		}
	})
}
