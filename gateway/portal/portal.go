// Package portal is the account holders' web front, served by the gateway
// under /portal/: server-rendered HTML (html/template), every asset embedded,
// no JavaScript. It is a client of the same services as everyone: the
// route table's web row sends it every /portal/ request with the session
// cookie already resolved by the edge to a principal (auth.SessionFrom),
// and every page calls metering's principal-based services with that
// principal (identity, credentials, OAuth clients, usage and billing), the
// services GET /v1/usage and POST /v1/portal/billing/limits call. This
// package only renders pages, sets the session cookie and checks CSRF
// tokens. docs/portal.md.
package portal

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/gateway/auth"
	"github.com/ledgerlane/platform/pkg/clock"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// Cookie names. The session cookie holds metering's session token; the
// pre-session cookie is the double-submit CSRF token of the sign-in and
// sign-up forms (no session exists yet to hold one).
const (
	SessionCookie = "portal_session"
	PreCookie     = "portal_csrf"
	// maxForm bounds a form body.
	maxForm = 16 << 10
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"date":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"has":   func(list []string, s string) bool { return slices.Contains(list, s) },
	"ts":    timestampText,
	"list":  func(s ...string) []string { return s },
	"upper": strings.ToUpper,
}).ParseFS(templateFS, "templates/*.html"))

// Options configure the portal.
type Options struct {
	// SecureCookies marks cookies Secure even on plain HTTP requests: set it
	// behind a proxy that terminates TLS. Requests that arrive over TLS get
	// Secure cookies regardless.
	SecureCookies bool
	Log           *slog.Logger
	// LimitsChanged, when set, is told an account's billing limits changed,
	// so the edge re-reads them at once instead of within its cache TTL.
	LimitsChanged func(accountID string)

	// PublicURL is the gateway's public root, e.g. "https://api.example.com"
	// (required): every link the portal mails (password reset, invitation,
	// address verification) starts with it, never with the request's Host,
	// which an attacker chooses; portal requests for another host are
	// refused or, for a page, redirected to it (hostGuard).
	PublicURL string
	// RequestLog answers the Requests page (the gateway's in-process
	// RequestLogService); nil: no such page.
	RequestLog RequestLog
	// Now is the gateway's clock (default time.Now): a session cookie's
	// Max-Age is counted from it.
	Now func() time.Time
	// Jobs is the jobs service (its WebhookService answers the Webhooks
	// page); nil: no such page.
	Jobs grpc.ClientConnInterface
	// Finance is the finance service, whose SandboxService the Finance
	// sandbox page calls (sandbox.go); nil: no such page.
	Finance grpc.ClientConnInterface
}

// Portal is the /portal/ handler.
type Portal struct {
	api  clients
	opts Options
	mux  *http.ServeMux
	h    http.Handler
	// host is PublicURL's host with its default port made explicit
	// (canonicalHost), what a request's Host must equal.
	host string
}

// clients are the metering services the pages call: the same
// principal-based services the /v1 routes reach, none of them the portal's
// own.
type clients struct {
	identity meteringv1.IdentityServiceClient
	creds    meteringv1.CredentialServiceClient
	oauth    meteringv1.OAuthServiceClient
	billing  meteringv1.BillingServiceClient
	usage    meteringv1.UsageServiceClient
	// webhooks is the jobs service's, behind /v1/webhooks; nil without
	// Options.Jobs.
	webhooks jobsv1.WebhookServiceClient
	sandbox  financev1.SandboxServiceClient // nil without Options.Finance
}

// New returns the portal calling metering's services over conn. It refuses
// an Options.PublicURL that is not an absolute http(s) root.
func New(metering grpc.ClientConnInterface, opts Options) (*Portal, error) {
	root, err := parsePublicURL(opts.PublicURL)
	if err != nil {
		return nil, err
	}
	opts.PublicURL = root.String()
	opts.Log, opts.Now = logging.OrDiscard(opts.Log), clock.Or(opts.Now)
	if opts.LimitsChanged == nil {
		opts.LimitsChanged = func(string) {}
	}
	api := clients{identity: meteringv1.NewIdentityServiceClient(metering), creds: meteringv1.NewCredentialServiceClient(metering),
		oauth: meteringv1.NewOAuthServiceClient(metering), billing: meteringv1.NewBillingServiceClient(metering),
		usage: meteringv1.NewUsageServiceClient(metering)}
	if opts.Jobs != nil {
		api.webhooks = jobsv1.NewWebhookServiceClient(opts.Jobs)
	}
	if opts.Finance != nil {
		api.sandbox = financev1.NewSandboxServiceClient(opts.Finance)
	}
	p := &Portal{api: api, opts: opts, mux: http.NewServeMux(), host: canonicalHost(root.Scheme, root.Host)}
	static, _ := fs.Sub(assetFS, "assets")
	p.mux.Handle("GET /portal/assets/", http.StripPrefix("/portal/assets/", noListing(http.FileServerFS(static))))
	p.mux.HandleFunc("GET /portal/{$}", p.home)
	p.mux.HandleFunc("GET /portal/signin", p.signinForm)
	p.mux.HandleFunc("POST /portal/signin", p.signin)
	p.mux.HandleFunc("GET /portal/signup", p.signupForm)
	p.mux.HandleFunc("POST /portal/signup", p.signup)
	p.mux.HandleFunc("POST /portal/signout", p.session(p.signout))
	p.mux.HandleFunc("GET /portal/keys", p.session(p.keys))
	p.mux.HandleFunc("POST /portal/keys", p.session(p.createKey))
	p.mux.HandleFunc("POST /portal/keys/{id}/revoke", p.session(p.revokeKey))
	p.mux.HandleFunc("GET /portal/usage", p.session(p.usage))
	p.mux.HandleFunc("GET /portal/requests", p.session(p.requests))
	p.mux.HandleFunc("POST /portal/usage/limits", p.session(p.setLimits))
	p.mux.HandleFunc("POST /portal/plan", p.session(p.changePlan))
	p.mux.HandleFunc("GET /portal/payments", p.session(p.payments))
	p.mux.HandleFunc("POST /portal/payments", p.session(p.addPaymentMethod))
	p.mux.HandleFunc("POST /portal/payments/{id}/default", p.session(p.paymentAction(p.setDefaultMethod, "default")))
	p.mux.HandleFunc("POST /portal/payments/{id}/remove", p.session(p.paymentAction(p.removeMethod, "removed")))
	p.mux.HandleFunc("POST /portal/payments/{id}/retry", p.session(p.paymentAction(p.retry, "retried")))
	p.mux.HandleFunc("GET /portal/finance", p.session(p.finance))
	p.mux.HandleFunc("POST /portal/finance", p.session(p.createFinanceCredential))
	p.mux.HandleFunc("POST /portal/finance/{id}/revoke", p.session(p.revoke(p.revokeCredential, "credential", "/portal/finance")))
	if api.sandbox != nil {
		p.sandboxRoutes()
	}
	p.mux.HandleFunc("GET /portal/oauth", p.session(p.oauthClients))
	p.mux.HandleFunc("POST /portal/oauth", p.session(p.createOAuthClient))
	p.mux.HandleFunc("POST /portal/oauth/{id}/revoke", p.session(p.revoke(p.revokeOAuthClient, "OAuth client", "/portal/oauth")))
	p.mux.HandleFunc("GET /portal/webhooks", p.session(p.webhooks))
	p.mux.HandleFunc("POST /portal/webhooks", p.session(p.createWebhook))
	p.mux.HandleFunc("GET /portal/webhooks/{id}", p.session(p.webhook))
	p.mux.HandleFunc("POST /portal/webhooks/{id}", p.session(p.updateWebhook))
	p.mux.HandleFunc("POST /portal/webhooks/{id}/test", p.session(p.endpointAction("test", p.sendTest)))
	p.mux.HandleFunc("POST /portal/webhooks/{id}/enable", p.session(p.endpointAction("enabled", p.enableWebhook)))
	p.mux.HandleFunc("POST /portal/webhooks/{id}/rotate", p.session(p.rotateWebhook))
	p.mux.HandleFunc("POST /portal/webhooks/{id}/delete", p.session(p.deleteWebhook))
	p.mux.HandleFunc("POST /portal/webhooks/{id}/deliveries/{delivery}/resend", p.session(p.endpointAction("resent", p.resend)))
	p.mux.HandleFunc("GET /portal/people", p.session(p.people))
	p.mux.HandleFunc("POST /portal/people", p.session(p.invite))
	// The invitation token travels in the query and the form, never in the
	// path, which the access log records.
	p.mux.HandleFunc("GET /portal/invite", p.invitationForm)
	p.mux.HandleFunc("POST /portal/invite", p.acceptInvitation)
	// Password reset: the token travels like an invitation's.
	p.mux.HandleFunc("GET /portal/forgot", p.forgotForm)
	p.mux.HandleFunc("POST /portal/forgot", p.forgot)
	p.mux.HandleFunc("GET /portal/reset", p.resetForm)
	p.mux.HandleFunc("POST /portal/reset", p.reset)
	// E-mail verification: the link's page confirms with a form (a mail
	// scanner fetching the link does not use the token up).
	p.mux.HandleFunc("GET /portal/verify", p.verifyForm)
	p.mux.HandleFunc("POST /portal/verify", p.verify)
	p.mux.HandleFunc("POST /portal/verify/send", p.session(p.sendVerification))
	p.mux.HandleFunc("/portal/", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Error: "There is no such page."})
	})
	// Browsers say where a request comes from (Sec-Fetch-Site, Origin):
	// cross-origin form posts are refused before any token is looked at.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusForbidden, "message", view{Title: "Refused", Error: "This form was sent from another site and was refused."})
	}))
	p.h = p.hostGuard(cop.Handler(p.mux))
	return p, nil
}

// ServeHTTP serves every /portal/ path.
func (p *Portal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// One script, a file of ours (the copy buttons): nothing inline, no eval.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if p.secure(r) {
		// Behind TLS (or a proxy that terminates it, SecureCookies): the
		// browser keeps to https for this host from now on.
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if !strings.HasPrefix(r.URL.Path, "/portal/assets/") {
		h.Set("Cache-Control", "no-store")
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		// Every form field travels to metering as a protobuf string, which
		// must be UTF-8: refuse what is not (or holds a NUL) here, as the
		// /v1 edge does, instead of failing the backend call.
		if err := r.ParseForm(); err != nil || !cleanForm(r.PostForm) {
			p.render(w, r, http.StatusBadRequest, "message", view{Title: "Check the form",
				Error: "The form could not be read: use text without control characters."})
			return
		}
	}
	p.h.ServeHTTP(w, r)
}

// cleanForm reports whether every name and value is valid UTF-8 without NUL.
func cleanForm(f url.Values) bool {
	for k, vs := range f {
		if !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 {
			return false
		}
		for _, v := range vs {
			if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
				return false
			}
		}
	}
	return true
}

// link is a hyperlink a page offers beside a message.
type link struct{ Href, Text string }

// view is what every template gets.
type view struct {
	Title   string
	Session *session
	CSRF    string
	Error   string
	// ErrorLink, when set, follows Error: the page where the user can fix it.
	ErrorLink *link
	Notice    string
	// Form values to show again after a refusal (never a password).
	Email, Name, AccountName string
	// The keys page.
	Keys          []keyView
	DefaultScopes []string
	OptInScopes   []string
	NewSecret     string
	NewKey        *keyView
	// The usage page.
	Usage *usageView
	// The plan change confirmation.
	Confirm *confirmView
	// The people page, and the invitation page (Email, AccountName).
	People     []*meteringv1.Person
	Invitation string
	// The payment methods page.
	Payments *paymentsView
	// The finance credentials page.
	Finance *financeView
	// The Finance sandbox page.
	Sandbox *sandboxView
	// The test OAuth clients page.
	OAuth *oauthView
	// The request log page.
	Requests *requestsView
	// The webhooks pages.
	Webhooks *webhooksView
	// The password reset form: the token from the mailed link.
	ResetToken string
	// APIRoot is the gateway's public root, for the examples a page shows.
	APIRoot string
}

type keyView struct {
	ID, Name, Prefix, Mode string
	Scopes                 []string
	Created                time.Time
	Revoked, LastUsed      *time.Time
}

func (p *Portal) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, page, v); err != nil {
		p.opts.Log.Error("portal template", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (p *Portal) secure(r *http.Request) bool { return p.opts.SecureCookies || r.TLS != nil }

// setSession sets the session cookie. Max-Age (which browsers prefer to
// Expires) counts from our clock, so a browser whose clock is off keeps the
// session as long as the server does; Expires stays for old clients.
func (p *Portal) setSession(w http.ResponseWriter, r *http.Request, token string, expires time.Time) {
	maxAge := max(int(expires.Sub(p.opts.Now()).Seconds()), 1)
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/portal/", Expires: expires, MaxAge: maxAge,
		HttpOnly: true, Secure: p.secure(r), SameSite: http.SameSiteLaxMode})
}

func (p *Portal) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/portal/", MaxAge: -1,
		HttpOnly: true, Secure: p.secure(r), SameSite: http.SameSiteLaxMode})
}

// preToken returns the pre-session CSRF token, setting the cookie when the
// browser has none.
func (p *Portal) preToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(PreCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: PreCookie, Value: tok, Path: "/portal/", HttpOnly: true,
		Secure: p.secure(r), SameSite: http.SameSiteStrictMode})
	return tok
}

// checkPre checks a pre-session form's token against its cookie.
func checkPre(r *http.Request) bool {
	c, err := r.Cookie(PreCookie)
	return err == nil && c.Value != "" && equal(c.Value, r.PostFormValue("csrf"))
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (p *Portal) csrfRefused(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusForbidden, "message", view{Title: "Refused",
		Error: "This form has expired or was not sent from this site. Go back, reload the page and try again."})
}

// session is the signed-in person of a request, as the edge resolved the
// cookie.
type session struct {
	*meteringv1.Session
	// ctx carries the session's principal to metering: every call after
	// sign-in is made with it and acts on its account only.
	ctx context.Context
	// token is the cookie's value, what signing out ends.
	token string
	// principal is the session's, and base the request's context without
	// it: pages calling another service in another mode start from these
	// (jobsCtx).
	principal principal.Principal
	base      context.Context
}

// lookup returns the request's session as the edge resolved its cookie, or
// nil; an error when metering could not be asked.
func lookup(r *http.Request) (*session, error) {
	res, err := auth.SessionFrom(r.Context())
	if err != nil || res == nil {
		return nil, err
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil, nil
	}
	pr := res.Principal
	if p, ok := principal.From(r.Context()); ok {
		pr = p // the edge's copy carries the request id
	}
	return &session{Session: res.Session, ctx: principal.Outgoing(r.Context(), pr), token: c.Value, principal: pr, base: r.Context()}, nil
}

// signedIn is a handler for a signed-in person.
type signedIn func(w http.ResponseWriter, r *http.Request, s *session)

// session runs next with the request's session: without one, GETs go to the
// sign-in page and anything else is refused; every POST must carry the
// session's CSRF token.
func (p *Portal) session(next signedIn) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := lookup(r)
		if err != nil {
			p.failed(w, r, err)
			return
		}
		if s == nil {
			p.clearSession(w, r)
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/portal/signin", http.StatusSeeOther)
				return
			}
			p.render(w, r, http.StatusUnauthorized, "message", view{Title: "Signed out",
				Error: "Your session has ended. Sign in again.", CSRF: p.preToken(w, r)})
			return
		}
		if r.Method == http.MethodPost && !equal(s.GetCsrfToken(), r.PostFormValue("csrf")) {
			p.csrfRefused(w, r)
			return
		}
		next(w, r, s)
	}
}

// failed answers an error of metering that is not the person's doing.
func (p *Portal) failed(w http.ResponseWriter, r *http.Request, err error) {
	pr := rpc.Problem(err)
	p.opts.Log.Warn("portal backend call failed", "type", string(pr.Type), "err", err)
	status := http.StatusInternalServerError
	switch pr.Type {
	case problem.Unavailable:
		status = http.StatusServiceUnavailable
	case problem.RateLimited:
		// A throttle of a form that does not handle it itself: still a 429
		// with its wait, never a 500.
		if pr.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(pr.RetryAfter))
		}
		p.render(w, r, http.StatusTooManyRequests, "message", view{Title: "Too many attempts", Error: pr.Detail})
		return
	}
	p.render(w, r, status, "message", view{Title: "Something went wrong", Error: "Something went wrong on our side. Try again in a moment."})
}

func (p *Portal) home(w http.ResponseWriter, r *http.Request) {
	if s, err := lookup(r); err == nil && s != nil {
		http.Redirect(w, r, "/portal/keys", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/portal/signin", http.StatusSeeOther)
}

func (p *Portal) signinForm(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "signin", view{Title: "Sign in", CSRF: p.preToken(w, r)})
}

func (p *Portal) signupForm(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "signup", view{Title: "Create an account", CSRF: p.preToken(w, r)})
}

// endOld ends the session the browser came with, if any: a new sign-in
// never keeps an old token (session fixation).
func (p *Portal) endOld(r *http.Request) {
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		_, _ = p.api.identity.SignOut(context.WithoutCancel(r.Context()), &meteringv1.SignOutRequest{Token: c.Value})
	}
}

// refusedForm shows a pre-session form again with the refusal's text when it
// is one of the types the form expects, or a throttle (429 with its
// Retry-After); anything else is failed. The status is the problem type's.
func (p *Portal) refusedForm(w http.ResponseWriter, r *http.Request, err error, page string, v view, expect problem.Type) {
	pr := rpc.Problem(err)
	if pr.Type != expect && pr.Type != problem.RateLimited {
		p.failed(w, r, err)
		return
	}
	if pr.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(pr.RetryAfter))
	}
	v.Error = pr.Detail
	p.render(w, r, pr.Type.Status(), page, v)
}

// signedIn starts the browser's new session (ending the one it came with)
// and goes to the keys page.
func (p *Portal) signedIn(w http.ResponseWriter, r *http.Request, token string, s *meteringv1.Session) {
	p.endOld(r)
	p.setSession(w, r, token, s.GetExpiresAt().AsTime())
	http.Redirect(w, r, "/portal/keys", http.StatusSeeOther)
}

func (p *Portal) signin(w http.ResponseWriter, r *http.Request) {
	if !checkPre(r) {
		p.csrfRefused(w, r)
		return
	}
	email := r.PostFormValue("email")
	res, err := p.api.identity.SignIn(r.Context(), &meteringv1.SignInRequest{Email: email, Password: r.PostFormValue("password")})
	if err != nil {
		p.refusedForm(w, r, err, "signin", view{Title: "Sign in", CSRF: p.preToken(w, r), Email: email}, problem.Unauthorized)
		return
	}
	p.signedIn(w, r, res.GetToken(), res.GetSession())
}

func (p *Portal) signup(w http.ResponseWriter, r *http.Request) {
	if !checkPre(r) {
		p.csrfRefused(w, r)
		return
	}
	v := view{Title: "Create an account", CSRF: p.preToken(w, r), Email: r.PostFormValue("email"),
		Name: r.PostFormValue("name"), AccountName: r.PostFormValue("account_name")}
	res, err := p.api.identity.SignUp(r.Context(), &meteringv1.SignUpRequest{Email: v.Email, Password: r.PostFormValue("password"),
		AccountName: v.AccountName, Name: v.Name, VerifyLinkBase: p.verifyLinkBase()})
	if err != nil {
		// A throttle here is too many sign-ups with this address.
		p.refusedForm(w, r, err, "signup", v, problem.InvalidInput)
		return
	}
	p.signedIn(w, r, res.GetToken(), res.GetSession())
}

func (p *Portal) signout(w http.ResponseWriter, r *http.Request, s *session) {
	everywhere := r.PostFormValue("everywhere") == "1"
	if _, err := p.api.identity.SignOut(r.Context(), &meteringv1.SignOutRequest{Token: s.token, Everywhere: everywhere}); err != nil {
		p.failed(w, r, err)
		return
	}

	p.clearSession(w, r)
	notice := "You are signed out."
	if everywhere {
		notice = "You are signed out on every device."
	}
	p.render(w, r, http.StatusOK, "signin", view{Title: "Sign in", CSRF: p.preToken(w, r), Notice: notice})
}

func (p *Portal) keysView(s *session) (view, error) {
	res, err := p.api.creds.ListKeys(s.ctx, &meteringv1.ListKeysRequest{})
	if err != nil {
		return view{}, err
	}
	v := view{Title: "API keys", Session: s, CSRF: s.GetCsrfToken(), DefaultScopes: res.GetDefaultScopes(), OptInScopes: res.GetOptInScopes()}
	// Newest first: the key just made is on top.
	for i := len(res.GetKeys()) - 1; i >= 0; i-- {
		v.Keys = append(v.Keys, toKeyView(res.GetKeys()[i]))
	}
	return v, nil
}

func toKeyView(k *meteringv1.Key) keyView {
	kv := keyView{ID: k.GetId(), Name: k.GetName(), Prefix: k.GetPrefix(), Mode: k.GetMode(), Scopes: k.GetScopes(), Created: k.GetCreatedAt().AsTime()}
	if k.RevokedAt != nil {
		t := k.GetRevokedAt().AsTime()
		kv.Revoked = &t
	}
	if k.LastUsedAt != nil {
		t := k.GetLastUsedAt().AsTime()
		kv.LastUsed = &t
	}
	return kv
}

func (p *Portal) keys(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := p.keysView(s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	if r.URL.Query().Get("revoked") == "1" {
		v.Notice = "The key is revoked. Requests with it are refused within seconds."
	}
	p.render(w, r, http.StatusOK, "keys", v)
}

func (p *Portal) createKey(w http.ResponseWriter, r *http.Request, s *session) {
	_ = r.ParseForm()
	scopes := r.PostForm["scope"]
	res, err := p.api.creds.CreateKey(s.ctx, &meteringv1.CreateKeyRequest{Name: r.PostFormValue("name"),
		Mode: r.PostFormValue("mode"), Scopes: scopes})
	v, lerr := p.keysView(s)
	if lerr != nil {
		p.failed(w, r, lerr)
		return
	}
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type != problem.InvalidInput {
			p.failed(w, r, err)
			return
		}
		v.Error = pr.Detail
		p.render(w, r, http.StatusBadRequest, "keys", v)
		return
	}
	// The secret is in this one answer (no-store) and nowhere else.
	kv := toKeyView(res.GetKey())
	v.NewKey, v.NewSecret, v.APIRoot = &kv, res.GetSecret(), strings.TrimSuffix(p.opts.PublicURL, "/")
	p.render(w, r, http.StatusOK, "keys", v)
}

func (p *Portal) revokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	// A live key stops production traffic: its revocation needs the
	// confirmation box ticked, not one click (the box is required in the
	// form; this catches a post without it).
	if r.PostFormValue("confirm") != "1" {
		v, err := p.keysView(s)
		if err != nil {
			p.failed(w, r, err)
			return
		}
		for _, k := range v.Keys {
			if k.ID == r.PathValue("id") && k.Mode == "live" && k.Revoked == nil {
				v.Error = "Tick “requests with this live key will be refused” to revoke " + k.Name + "."
				p.render(w, r, http.StatusBadRequest, "keys", v)
				return
			}
		}
	}
	p.revoke(p.revokeCredential, "key", "/portal/keys")(w, r, s)
}

// noListing serves files only: a folder (a path ending in "/", or the root)
// is 404, not a listing of what the portal ships.
func noListing(files http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}
