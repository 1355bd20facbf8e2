// Package gateway is the platform's only public HTTP listener. It matches each
// request against the route table, authenticates it through the metering
// service, checks the route's scope and body limit, and hands it to
// grpc-gateway's runtime mux for the credential's surface (or to the
// hand-written /v1/convert handler). Every error leaves as an RFC 9457
// problem document.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ledgerlane/platform/gateway/apidocs"
	"github.com/ledgerlane/platform/gateway/auth"
	"github.com/ledgerlane/platform/gateway/openapi"
	"github.com/ledgerlane/platform/gateway/portal"
	"github.com/ledgerlane/platform/gateway/reqlog"
	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	edgev1 "github.com/ledgerlane/platform/proto/edge/v1"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering/admission"
)

// Backends are the client connections to the four services.
type Backends struct {
	Finance   grpc.ClientConnInterface
	Converter grpc.ClientConnInterface
	Jobs      grpc.ClientConnInterface
	Metering  grpc.ClientConnInterface
}

// Check probes a dependency the gateway itself uses (Redis, NATS), for /v1/ready.
type Check struct {
	Name  string
	Probe func(context.Context) error
}

// Config is everything New needs. Zero values take the documented defaults.
type Config struct {
	Backends Backends
	Checks   []Check
	// Build identity, answered by /v1/version.
	Version   string
	Commit    string
	BuildTime time.Time
	// CredentialTTL bounds how long a resolved key is trusted without asking
	// metering again, which is the revocation lag (default 5s).
	CredentialTTL time.Duration
	// DocsURL is the public documentation root, used in links such as
	// X-Service-Warnings-Link.
	DocsURL string
	Log     *slog.Logger
	Now     func() time.Time
	// Redis holds rate buckets, usage counters and idempotency records. Nil
	// turns limiting, quota and idempotency off; every real deployment sets it.
	Redis redis.UniversalClient
	// PortalSecureCookies marks the portal's cookies Secure on plain HTTP
	// requests too (behind a TLS-terminating proxy); see docs/portal.md.
	PortalSecureCookies bool
	// PortalPublicURL is the gateway's public root, e.g.
	// https://api.example.com: every link the portal mails starts with it,
	// and portal requests must carry its host. Empty: no portal (404).
	PortalPublicURL string
	// Sealer seals the answers kept for Idempotency-Key replays in Redis
	// (the jobs service's key ring, JOB_ENCRYPTION_KEY): a converted
	// statement or a webhook's one-time secret is never at rest in the
	// clear. Nil keeps them in the clear (tests only: cmd/gateway refuses
	// to start without a key).
	Sealer admission.Sealer
}

// Gateway is the edge's HTTP handler.
type Gateway struct {
	cfg       Config
	log       *slog.Logger
	now       func() time.Time
	resolver  *auth.Resolver
	converter conversionv1.ConversionServiceClient
	public    *runtime.ServeMux
	surfaces  map[route.Surface]*runtime.ServeMux
	adm       *gate
	metrics   *metrics
	// From the route table: the hand-written handlers it names, what runs
	// after success, and success statuses by gRPC method.
	handlers map[route.Handler]http.Handler
	after    map[route.After]func(principal.Principal)
	status   map[string]int
	// portalOn: the portal is served (its row's handler is not a 404).
	portalOn bool
	// reqlog is the accounts' request log, requestLog its service (GET
	// /v1/requests and the portal's Requests page).
	reqlog     *reqlog.Log
	requestLog *requestLogServer
	// docs is the API reference under /docs (gateway/apidocs).
	docs *apidocs.Site
}

// New wires the muxes. It dials nothing itself: the caller owns the connections.
func New(cfg Config) (*Gateway, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:       cfg,
		log:       cfg.Log,
		now:       cfg.Now,
		resolver:  auth.NewResolver(meteringv1.NewCredentialServiceClient(cfg.Backends.Metering), cfg.CredentialTTL, cfg.Now),
		converter: conversionv1.NewConversionServiceClient(cfg.Backends.Converter),
		surfaces:  map[route.Surface]*runtime.ServeMux{},
	}
	g.wireAdmission()
	g.wireRequestLog()
	if err := g.registerServices(); err != nil {
		return nil, err
	}
	g.wireHandlers()
	if err := g.wirePortal(); err != nil {
		return nil, err
	}
	docs, err := referencePages()
	if err != nil {
		return nil, err
	}
	g.docs = docs
	if err := g.readRouteTable(); err != nil {
		return nil, err
	}
	return g, nil
}

// withDefaults checks that cfg names all four backends and fills in what
// it leaves out; each backend is wrapped in backendConn.
func withDefaults(cfg Config) (Config, error) {
	if cfg.Backends.Finance == nil || cfg.Backends.Converter == nil || cfg.Backends.Jobs == nil || cfg.Backends.Metering == nil {
		return cfg, errors.New("gateway: all four backends are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CredentialTTL <= 0 {
		cfg.CredentialTTL = 5 * time.Second
	}
	if cfg.DocsURL == "" {
		cfg.DocsURL = "/docs" // the reference this gateway serves (gateway/apidocs)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	cfg.Backends = Backends{
		Finance: backendConn{cfg.Backends.Finance}, Converter: backendConn{cfg.Backends.Converter},
		Jobs: backendConn{cfg.Backends.Jobs}, Metering: backendConn{cfg.Backends.Metering},
	}
	return cfg, nil
}

// wireAdmission builds the admission gate when there is Redis, and the
// metrics, which report the gate's journal size.
func (g *Gateway) wireAdmission() {
	if g.cfg.Redis != nil {
		ctl := admission.New(g.cfg.Redis, g.cfg.Now)
		ctl.Sealer = g.cfg.Sealer
		g.adm = &gate{ctl: ctl, journal: admission.NewJournal()}
	}
	g.metrics = newMetrics(func() float64 {
		if g.adm == nil {
			return 0
		}
		return float64(g.adm.journal.Size())
	})
	if g.adm != nil {
		g.adm.metrics = g.metrics
	}
}

// wireRequestLog keeps the request log in Redis, shared by the replicas,
// or without Redis in this process.
func (g *Gateway) wireRequestLog() {
	var store reqlog.Store = reqlog.NewMemory()
	if g.cfg.Redis != nil {
		store = reqlog.NewRedis(g.cfg.Redis)
	}
	g.reqlog = reqlog.New(store, g.log.With("component", "reqlog"))
	g.requestLog = &requestLogServer{log: g.reqlog, now: g.now}
}

// registerServices registers the edge service and every backend service's
// generated handlers on the mux of their surface: public, conversion or
// finance.
func (g *Gateway) registerServices() error {
	ctx := context.Background()
	g.public = g.newMux()
	if err := edgev1.RegisterEdgeServiceHandlerServer(ctx, g.public, &edgeServer{g: g}); err != nil {
		return fmt.Errorf("gateway: edge: %w", err)
	}

	conv := g.newMux()
	fin := g.newMux()
	b := g.cfg.Backends
	regs := []struct {
		mux  *runtime.ServeMux
		conn grpc.ClientConnInterface
		reg  func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error
	}{
		{conv, b.Converter, wrap(conversionv1.RegisterConversionServiceHandlerClient, conversionv1.NewConversionServiceClient)},
		{conv, b.Jobs, wrap(conversionv1.RegisterAccountingConnectionServiceHandlerClient, conversionv1.NewAccountingConnectionServiceClient)},
		// The OAuth callback is public: on the public mux, reached only by the
		// route table's public row.
		{g.public, b.Jobs, wrap(conversionv1.RegisterAccountingCallbackServiceHandlerClient, conversionv1.NewAccountingCallbackServiceClient)},
		{conv, b.Jobs, wrap(jobsv1.RegisterJobServiceHandlerClient, jobsv1.NewJobServiceClient)},
		{conv, b.Jobs, wrap(jobsv1.RegisterWebhookServiceHandlerClient, jobsv1.NewWebhookServiceClient)},
		{conv, b.Metering, wrap(meteringv1.RegisterUsageServiceHandlerClient, meteringv1.NewUsageServiceClient)},
		{conv, b.Metering, wrap(meteringv1.RegisterBillingServiceHandlerClient, meteringv1.NewBillingServiceClient)},
		// The finance sandbox is served to conversion test keys: its users,
		// institutions and links by finance, its credentials by metering.
		{conv, b.Finance, wrap(financev1.RegisterSandboxServiceHandlerClient, financev1.NewSandboxServiceClient)},
		{conv, b.Finance, wrap(financev1.RegisterGrantServiceHandlerClient, financev1.NewGrantServiceClient)},
		{conv, b.Metering, wrap(meteringv1.RegisterSandboxServiceHandlerClient, meteringv1.NewSandboxServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterTransactionServiceHandlerClient, financev1.NewTransactionServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterCategoryServiceHandlerClient, financev1.NewCategoryServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterAccountServiceHandlerClient, financev1.NewAccountServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterBudgetServiceHandlerClient, financev1.NewBudgetServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterGoalServiceHandlerClient, financev1.NewGoalServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterHoldingServiceHandlerClient, financev1.NewHoldingServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterDebtServiceHandlerClient, financev1.NewDebtServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterInsightServiceHandlerClient, financev1.NewInsightServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterNetWorthServiceHandlerClient, financev1.NewNetWorthServiceClient)},
		{fin, b.Finance, wrap(financev1.RegisterImportServiceHandlerClient, financev1.NewImportServiceClient)},
	}
	for _, r := range regs {
		if err := r.reg(ctx, r.mux, r.conn); err != nil {
			return fmt.Errorf("gateway: register: %w", err)
		}
	}
	// The request log is the edge's own: served in process, like the
	// public routes, but for a key with usage:read.
	if err := edgev1.RegisterRequestLogServiceHandlerServer(ctx, conv, g.requestLog); err != nil {
		return fmt.Errorf("gateway: request log: %w", err)
	}
	g.surfaces[route.Conversion] = conv
	g.surfaces[route.Finance] = fin

	return nil
}

// wireHandlers names the hand-written handlers and after-success steps the
// route table refers to.
func (g *Gateway) wireHandlers() {
	g.handlers = map[route.Handler]http.Handler{
		route.HandlerConvert: http.HandlerFunc(g.convert),
		route.HandlerOpenAPI: openapi.Handler(),
		// The OAuth token route (gateway/oauth.go).
		route.HandlerOAuthToken: g.oauthToken(meteringv1.NewOAuthServiceClient(g.cfg.Backends.Metering)),
	}
	g.after = map[route.After]func(principal.Principal){
		route.AfterForgetLimits: func(p principal.Principal) { g.resolver.ForgetAccount(p.AccountID) },
	}
}

// wirePortal builds the portal. Without a public URL there is no portal
// (its mails need links that cannot follow a request's Host): /portal/
// answers 404 and the log says why. cmd/gateway refuses to start without
// one.
func (g *Gateway) wirePortal() error {
	cfg := g.cfg
	g.handlers[route.HandlerPortal] = http.NotFoundHandler()
	if cfg.PortalPublicURL == "" {
		cfg.Log.Warn("the portal is off: PortalPublicURL (PORTAL_PUBLIC_URL) is not set")
		return nil
	}
	p, err := portal.New(cfg.Backends.Metering,
		portal.Options{SecureCookies: cfg.PortalSecureCookies, Log: cfg.Log.With("component", "portal"),
			LimitsChanged: g.resolver.ForgetAccount, PublicURL: cfg.PortalPublicURL, Now: cfg.Now, RequestLog: g.requestLog,
			Jobs: cfg.Backends.Jobs, Finance: cfg.Backends.Finance})
	if err != nil {
		return err
	}
	g.handlers[route.HandlerPortal], g.portalOn = p, true
	return nil
}

// readRouteTable checks that every route names a known handler and
// after-success step, and collects the success statuses by gRPC method.
func (g *Gateway) readRouteTable() error {
	g.status = map[string]int{}
	for _, rt := range append(route.All(), route.WebRows()...) {
		if _, ok := g.handlers[rt.Handler]; !ok && rt.Handler != route.HandlerGenerated {
			return fmt.Errorf("gateway: route %s %s names unknown handler %q", rt.Method, rt.Pattern, rt.Handler)
		}
		if _, ok := g.after[rt.After]; !ok && rt.After != route.AfterNothing {
			return fmt.Errorf("gateway: route %s %s names unknown after-success step %q", rt.Method, rt.Pattern, rt.After)
		}
		if rt.Status != 0 {
			g.status[rt.GRPCMethod()] = rt.Status
		}
	}
	return nil
}

// wrap adapts a generated Register…HandlerClient to take a connection.
func wrap[C any](reg func(context.Context, *runtime.ServeMux, C) error, newClient func(grpc.ClientConnInterface) C) func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error {
	return func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
		return reg(ctx, mux, newClient(conn))
	}
}

// marshaler writes proto field names (the spec's snake_case) and always emits
// envelope members such as filtered=false and has_more=false; resource fields
// that may be absent are proto3 optional and so stay absent when unset.
var marshaler = &runtime.JSONPb{
	MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true},
	UnmarshalOptions: protojson.UnmarshalOptions{},
}

func (g *Gateway) newMux() *runtime.ServeMux {
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler),
		runtime.WithErrorHandler(g.grpcError),
		runtime.WithRoutingErrorHandler(g.routingError),
		// Nothing a client sends becomes gRPC metadata: the principal is the
		// only identity a backend sees, and secrets never leave the edge.
		runtime.WithIncomingHeaderMatcher(func(string) (string, bool) { return "", false }),
		// Backends' metadata stays inside, but for one mark: work an earlier
		// attempt with the same Idempotency-Key committed (settle reads it).
		runtime.WithOutgoingHeaderMatcher(func(k string) (string, bool) {
			if k == rpc.ReplayedHeader {
				return "Idempotency-Replayed", true
			}
			return "", false
		}),
		// A route's success status other than 200 (a batch's 202) comes
		// from the route table.
		runtime.WithForwardResponseOption(func(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
			if m, ok := runtime.RPCMethod(ctx); ok {
				if code, ok := g.status[m]; ok {
					w.WriteHeader(code)
				}
			}
			return nil
		}),
		runtime.WithMetadata(func(ctx context.Context, _ *http.Request) metadata.MD {
			p, _ := principal.From(ctx)
			return metadata.Pairs(p.Pairs()...)
		}),
	)
}

// Handler is the full edge: middleware, routing and dispatch.
func (g *Gateway) Handler() http.Handler {
	return g.withRequestID(g.withRecover(g.withAccessLog(g.serve)))
}

// serve routes, authenticates, checks and admits one request, runs its
// handler and settles it. It returns what the access log and the request
// metrics need to know.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) (info logInfo) {
	info.route = "unmatched"
	reqID := requestID(r.Context())
	if name, ok := g.serveOffTable(w, r); ok {
		info.route = name
		return
	}
	m, r, ok := lookupRoute(w, r, reqID)
	if !ok {
		return
	}
	info.route = m.Routes[0].Pattern
	if web, ok := m.For(route.Web); ok {
		info.accountID, info.web = g.serveWeb(w, r, web, reqID), true
		return
	}
	if pub, ok := m.For(route.Public); ok {
		g.servePublic(w, r, pub, reqID)
		return
	}
	res, ok := g.authenticate(w, r, reqID)
	if !ok {
		return
	}
	p := res.Principal
	p.RequestID = reqID
	info.accountID, info.credentialID, info.mode = p.AccountID, p.CredentialID, p.Mode

	rt, reject := routeForPrincipal(r, m, p)
	var body []byte
	if reject == nil {
		body, reject = checkRequest(w, r, rt)
	}
	if reject != nil {
		g.log.Info("request refused at the edge", "request_id", reqID, "type", string(reject.Type), "field", reject.Field)
	}
	// A route that honours Idempotency-Key passes a valid one on: the jobs
	// service stores it with a batch in the submission's transaction, so a
	// retry whose first answer was lost finds the committed job (docs/jobs.md).
	if key := r.Header.Get("Idempotency-Key"); reject == nil && rt.Idempotency != route.IdempotencyNone && validKey(key) {
		p.IdempotencyKey = key
	}
	ctx := principal.With(r.Context(), p)
	if len(body) > 0 && jsonBody(r, rt) {
		ctx = withBody(ctx, body)
	}
	r = r.WithContext(ctx)
	t := g.admit(w, r, p, res.Limits, rt, body, reject)
	if t == nil {
		return info // refused or replayed: admit answered
	}
	g.runAdmitted(w, r, p, rt, t)
	return info
}

// serveOffTable serves the paths outside the route table, reporting
// which: the API reference and the index.
func (g *Gateway) serveOffTable(w http.ResponseWriter, r *http.Request) (string, bool) {
	switch p := r.URL.Path; {
	case p == "/docs" || strings.HasPrefix(p, "/docs/"):
		g.serveDocs(w, r)
		return "/docs", true
	case p == "/" || p == "/v1" || p == "/v1/":
		g.index(w, r)
		return "/", true
	}
	return "", false
}

// lookupRoute finds the routes of r's method and path, answering 404, 405
// or an OPTIONS request itself when there is none. HEAD is GET without a
// body (RFC 9110): the server drops what the handler writes, so the
// headers, Content-Length included, match; the request it returns is then
// a GET.
func lookupRoute(w http.ResponseWriter, r *http.Request, reqID string) (route.Match, *http.Request, bool) {
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	m := route.Lookup(method, r.URL.Path)
	if len(m.Routes) == 0 {
		if len(m.Allowed) > 0 {
			w.Header().Set("Allow", allow(m.Allowed))
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return m, r, false
			}
			writeProblem(w, problem.New(problem.MethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path), reqID)
			return m, r, false
		}
		writeProblem(w, problem.New(problem.NotFound, "no route "+r.URL.Path), reqID)
		return m, r, false
	}
	if method != r.Method {
		r = r.Clone(r.Context())
		r.Method = method
	}
	return m, r, true
}

// servePublic serves a route that needs no credential: its hand-written
// handler, or the public mux once its input is checked (public routes take
// input too, the OAuth callback's query: what no backend could read is a
// 400 here, as on every other route).
func (g *Gateway) servePublic(w http.ResponseWriter, r *http.Request, pub route.Route, reqID string) {
	if h, ok := g.handlers[pub.Handler]; ok && pub.Handler != route.HandlerGenerated {
		h.ServeHTTP(w, r)
		return
	}
	if reject := checkInput(r, pub); reject != nil {
		writeProblem(w, reject, reqID)
		return
	}
	g.public.ServeHTTP(w, r)
}

// authenticate resolves the request's credential to a principal and its
// limits, answering 400 for two different credentials, 503 when they
// cannot be checked and 401 when they are not known.
func (g *Gateway) authenticate(w http.ResponseWriter, r *http.Request, reqID string) (auth.Resolved, bool) {
	if auth.Ambiguous(r) {
		writeProblem(w, problem.New(problem.InvalidInput, "Authorization and X-API-Key carry different credentials; send one").WithField("X-API-Key"), reqID)
		return auth.Resolved{}, false
	}
	res, err := g.resolver.ResolveWithLimits(r.Context(), auth.FromRequest(r))
	switch {
	case errors.Is(err, auth.ErrUnavailable):
		g.log.Warn("credential lookup failed", "request_id", reqID)
		writeProblem(w, problem.New(problem.Unavailable, "credentials cannot be checked right now; retry shortly"), reqID)
		return res, false
	case err != nil:
		writeUnauthorized(w, reqID)
		return res, false
	}
	return res, true
}

// routeForPrincipal picks the route of p's surface and checks p's scope.
// When the route exists only on the other surface, the credential can
// never carry its scope: the first route is returned with the refusal.
func routeForPrincipal(r *http.Request, m route.Match, p principal.Principal) (route.Route, *problem.Problem) {
	rt, ok := m.For(route.Surface(p.Surface))
	switch {
	case !ok:
		rt = m.Routes[0]
		return rt, problem.New(problem.ForbiddenScope,
			fmt.Sprintf("%s %s needs scope %s, which %s credentials cannot carry", r.Method, rt.Pattern, rt.Scope, p.Surface))
	case !p.HasScope(rt.Scope):
		return rt, problem.New(problem.ForbiddenScope, fmt.Sprintf("%s %s needs scope %s", r.Method, rt.Pattern, rt.Scope))
	}
	return rt, nil
}

// checkRequest reads the body within the route's limit and checks the
// input: query and path, then, for a JSON body, its declared type (on a
// generated route) and its syntax.
func checkRequest(w http.ResponseWriter, r *http.Request, rt route.Route) ([]byte, *problem.Problem) {
	body, reject := readBody(w, r, rt.Limit)
	if reject == nil {
		reject = checkInput(r, rt)
	}
	if reject == nil && jsonBody(r, rt) && rt.Handler == route.HandlerGenerated {
		reject = checkContentType(r, body)
	}
	if reject == nil && jsonBody(r, rt) {
		reject = checkJSON(body)
	}
	return body, reject
}

// runAdmitted runs an admitted request's handler, then its route's
// after-success step, and settles its ticket. It buffers what must be
// settled before the client sees it: an answer to keep for replays (or,
// failing open, one whose key may have found committed work: settle reads
// its headers), or one an after-success step follows.
func (g *Gateway) runAdmitted(w http.ResponseWriter, r *http.Request, p principal.Principal, rt route.Route, t *ticket) {
	var next http.Handler = g.surfaces[rt.Surface]
	if rt.Handler != route.HandlerGenerated {
		next = g.handlers[rt.Handler]
	}
	buffered := t.req.IdempotencyKey != "" || t.keyed || rt.After != route.AfterNothing
	a := dispatch(w, r, next, buffered)
	if rt.After != route.AfterNothing && a.status >= 200 && a.status < 300 {
		g.after[rt.After](p)
	}
	g.settle(r.Context(), t, a)
	if buffered {
		a.send(w)
	}
}

// allow is the Allow header for a path answering methods: HEAD wherever GET
// is, and OPTIONS everywhere.
func allow(methods []string) string {
	out := append([]string(nil), methods...)
	if slices.Contains(out, http.MethodGet) {
		out = append(out, http.MethodHead)
	}
	out = append(out, http.MethodOptions)
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// outgoing is the context for a hand-written backend call: it carries the
// principal the way grpc-gateway's WithMetadata does for generated handlers.
func outgoing(r *http.Request) context.Context {
	p, _ := principal.From(r.Context())
	return principal.Outgoing(r.Context(), p)
}

// referencePages renders the /docs pages once per process: the document is
// embedded and never changes, and a process may build several gateways.
var referencePages = sync.OnceValues(func() (*apidocs.Site, error) { return apidocs.New(openapi.Document()) })
