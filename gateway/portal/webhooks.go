package portal

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
)

// The Webhooks page: the account's webhook endpoints of one mode, through
// the jobs service's WebhookService, the service behind /v1/webhooks,
// called with the session's principal (which holds webhooks:manage) in the
// mode the page shows. A session acts for the account holder, who may make
// keys of either mode, so it may manage the endpoints of either.

// scopeWebhooks is what the page needs of the session's principal.
const scopeWebhooks = "webhooks:manage"

type webhooksView struct {
	Mode       string // "live" or "test"
	Endpoints  []*jobsv1.WebhookEndpoint
	EventTypes []*jobsv1.EventType
	// Form values shown again after a refusal.
	URL, Description string
	Chosen           []string
	// A secret just made (creation or rotation), shown once.
	NewSecret, NewSecretFor string
	// The endpoint page.
	Endpoint   *jobsv1.WebhookEndpoint
	Deliveries []*jobsv1.WebhookDelivery
	Status     string // the deliveries' filter
	NextCursor string
}

// jobsCtx is the session's principal for the jobs service, in mode.
func (s *session) jobsCtx(mode string) context.Context {
	pr := s.principal
	pr.Mode = mode
	return principal.Outgoing(s.base, pr)
}

// pageMode is the mode a request names ("live" unless "test").
func pageMode(r *http.Request) string {
	m := r.FormValue("mode")
	if m != "test" {
		m = "live"
	}
	return m
}

func (p *Portal) webhooksOn(w http.ResponseWriter, r *http.Request, s *session) bool {
	if p.api.webhooks == nil {
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Session: s, Error: "There are no webhooks here."})
		return false
	}
	if !s.principal.HasScope(scopeWebhooks) {
		p.render(w, r, http.StatusForbidden, "message", view{Title: "Refused", Session: s, Error: "This session may not manage webhooks."})
		return false
	}
	return true
}

// webhooksView lists the mode's endpoints and the event types.
func (p *Portal) webhooksView(s *session, mode string) (view, error) {
	ctx := s.jobsCtx(mode)
	es, err := p.api.webhooks.ListWebhooks(ctx, &jobsv1.ListWebhooksRequest{})
	if err != nil {
		return view{}, err
	}
	ts, err := p.api.webhooks.ListEventTypes(ctx, &jobsv1.ListEventTypesRequest{})
	if err != nil {
		return view{}, err
	}
	return view{Title: "Webhooks", Session: s, CSRF: s.GetCsrfToken(),
		Webhooks: &webhooksView{Mode: mode, Endpoints: es.GetEndpoints(), EventTypes: ts.GetEventTypes(), Chosen: []string{"*"}}}, nil
}

func (p *Portal) webhooks(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.webhooksOn(w, r, s) {
		return
	}
	v, err := p.webhooksView(s, pageMode(r))
	if err != nil {
		p.failed(w, r, err)
		return
	}
	switch r.URL.Query().Get("done") {
	case "deleted":
		v.Notice = "The endpoint is deleted. Its pending deliveries are abandoned."
	}
	p.render(w, r, http.StatusOK, "webhooks", v)
}

// chosenTypes reads the form's event types: "*" (every type) when that box
// or none is ticked.
func chosenTypes(r *http.Request) []string {
	ts := r.PostForm["event_type"]
	if len(ts) == 0 || slices.Contains(ts, "*") {
		return []string{"*"}
	}
	return ts
}

func (p *Portal) createWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.webhooksOn(w, r, s) {
		return
	}
	mode := pageMode(r)
	in := &jobsv1.CreateWebhookRequest{Url: r.PostFormValue("url"), Description: r.PostFormValue("description"), EventTypes: chosenTypes(r)}
	res, err := p.api.webhooks.CreateWebhook(s.jobsCtx(mode), in)
	v, lerr := p.webhooksView(s, mode)
	if lerr != nil {
		p.failed(w, r, lerr)
		return
	}
	if err != nil {
		p.refusedWebhook(w, r, err, v, func(wv *webhooksView) {
			wv.URL, wv.Description, wv.Chosen = in.Url, in.Description, in.EventTypes
		})
		return
	}
	// The secret is in this one answer (no-store) and nowhere else.
	v.Webhooks.NewSecret, v.Webhooks.NewSecretFor = res.GetSecret(), res.GetUrl()
	p.render(w, r, http.StatusOK, "webhooks", v)
}

// refusedWebhook shows a page again with a refusal the person can fix (bad
// input, a limit, a conflict); anything else is failed.
func (p *Portal) refusedWebhook(w http.ResponseWriter, r *http.Request, err error, v view, keep func(*webhooksView)) {
	pr := rpc.Problem(err)
	switch pr.Type {
	case problem.InvalidInput, problem.Conflict, problem.RateLimited, problem.NotFound:
	default:
		p.failed(w, r, err)
		return
	}
	v.Error = pr.Detail
	if keep != nil {
		keep(v.Webhooks)
	}
	p.render(w, r, pr.Type.Status(), v.pageOf(), v)
}

// pageOf is the template a webhooks view renders with.
func (v view) pageOf() string {
	if v.Webhooks != nil && v.Webhooks.Endpoint != nil {
		return "webhook"
	}
	return "webhooks"
}

// endpointView is the page of one endpoint: its settings and a page of
// its deliveries, with their attempts.
func (p *Portal) endpointView(r *http.Request, s *session, mode, id string) (view, error) {
	v, err := p.webhooksView(s, mode)
	if err != nil {
		return view{}, err
	}
	for _, e := range v.Webhooks.Endpoints {
		if e.GetId() == id {
			v.Webhooks.Endpoint = e
		}
	}
	if v.Webhooks.Endpoint == nil {
		return view{}, problem.New(problem.NotFound, "no such webhook endpoint")
	}
	v.Title = "Webhook endpoint"
	v.Webhooks.Chosen = v.Webhooks.Endpoint.GetEventTypes()
	v.Webhooks.Status = r.FormValue("status")
	size := int32(20)
	ds, err := p.api.webhooks.ListDeliveries(s.jobsCtx(mode), &jobsv1.ListDeliveriesRequest{Id: id, Status: v.Webhooks.Status,
		Cursor: r.FormValue("cursor"), PageSize: &size})
	if err != nil {
		return view{}, err
	}
	v.Webhooks.Deliveries, v.Webhooks.NextCursor = ds.GetDeliveries(), ds.GetNextCursor()
	return v, nil
}

func (p *Portal) webhook(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.webhooksOn(w, r, s) {
		return
	}
	v, err := p.endpointView(r, s, pageMode(r), r.PathValue("id"))
	if err != nil {
		p.notFoundOr(w, r, s, err)
		return
	}
	v.Notice = webhookNotices[r.URL.Query().Get("done")]
	p.render(w, r, http.StatusOK, "webhook", v)
}

// webhookNotices are what an action's redirect says.
var webhookNotices = map[string]string{
	"updated": "The endpoint is saved.",
	"test":    "A webhook.test event is on its way; it shows below within seconds (reload).",
	"resent":  "The event is being sent again, with the same event id; it shows below within seconds (reload).",
	"enabled": "The endpoint is active again, its failures reset. Deliveries abandoned meanwhile can be resent.",
}

// notFoundOr answers another mode's, another account's or a deleted
// endpoint (or delivery) as not found; anything else is failed.
func (p *Portal) notFoundOr(w http.ResponseWriter, r *http.Request, s *session, err error) {
	if pr := rpc.Problem(err); pr.Type == problem.NotFound || pr.Type == problem.InvalidInput {
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Session: s, Error: "There is no such webhook endpoint or delivery in this mode."})
		return
	}
	p.failed(w, r, err)
}

func (p *Portal) updateWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.webhooksOn(w, r, s) {
		return
	}
	mode, id := pageMode(r), r.PathValue("id")
	u, d := r.PostFormValue("url"), r.PostFormValue("description")
	types := chosenTypes(r)
	vals := make([]any, len(types))
	for i, t := range types {
		vals[i] = t
	}
	list, _ := structpb.NewList(vals)
	_, err := p.api.webhooks.UpdateWebhook(s.jobsCtx(mode), &jobsv1.UpdateWebhookRequest{Id: id, Url: &u, Description: &d, EventTypes: list})
	p.afterEndpointAction(w, r, s, mode, id, err, "updated", func(wv *webhooksView) { wv.URL, wv.Description, wv.Chosen = u, d, types })
}

// endpointAction runs one of an endpoint's buttons (test, enable, resend)
// and goes back to its page.
func (p *Portal) endpointAction(done string, do func(ctx context.Context, r *http.Request) error) signedIn {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		if !p.webhooksOn(w, r, s) {
			return
		}
		mode := pageMode(r)
		err := do(s.jobsCtx(mode), r)
		p.afterEndpointAction(w, r, s, mode, r.PathValue("id"), err, done, nil)
	}
}

// afterEndpointAction redirects to the endpoint's page with a notice, or
// shows it with the refusal.
func (p *Portal) afterEndpointAction(w http.ResponseWriter, r *http.Request, s *session, mode, id string, err error, done string, keep func(*webhooksView)) {
	if err == nil {
		http.Redirect(w, r, "/portal/webhooks/"+url.PathEscape(id)+"?"+url.Values{"mode": {mode}, "done": {done}}.Encode(), http.StatusSeeOther)
		return
	}
	if pr := rpc.Problem(err); pr.Type == problem.NotFound {
		p.notFoundOr(w, r, s, err)
		return
	}
	v, verr := p.endpointView(r, s, mode, id)
	if verr != nil {
		p.notFoundOr(w, r, s, verr)
		return
	}
	p.refusedWebhook(w, r, err, v, keep)
}

func (p *Portal) sendTest(ctx context.Context, r *http.Request) error {
	_, err := p.api.webhooks.SendTestEvent(ctx, &jobsv1.SendTestEventRequest{Id: r.PathValue("id")})
	return err
}

func (p *Portal) enableWebhook(ctx context.Context, r *http.Request) error {
	_, err := p.api.webhooks.EnableWebhook(ctx, &jobsv1.EnableWebhookRequest{Id: r.PathValue("id")})
	return err
}

func (p *Portal) resend(ctx context.Context, r *http.Request) error {
	_, err := p.api.webhooks.ResendDelivery(ctx, &jobsv1.ResendDeliveryRequest{Id: r.PathValue("id"), DeliveryId: r.PathValue("delivery")})
	return err
}

// rotateWebhook shows the new secret once, on the endpoint's page.
func (p *Portal) rotateWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.webhooksOn(w, r, s) {
		return
	}
	mode, id := pageMode(r), r.PathValue("id")
	res, err := p.api.webhooks.RotateWebhookSecret(s.jobsCtx(mode), &jobsv1.RotateWebhookSecretRequest{Id: id})
	if err != nil {
		p.afterEndpointAction(w, r, s, mode, id, err, "", nil)
		return
	}
	v, err := p.endpointView(r, s, mode, id)
	if err != nil {
		p.notFoundOr(w, r, s, err)
		return
	}
	v.Webhooks.NewSecret, v.Webhooks.NewSecretFor = res.GetSecret(), v.Webhooks.Endpoint.GetUrl()
	v.Notice = "Until " + res.GetPreviousSecretExpiresAt().AsTime().UTC().Format("2006-01-02 15:04 UTC") +
		" every delivery is signed with both the old and the new secret: switch your receiver to the new one before then."
	p.render(w, r, http.StatusOK, "webhook", v)
}

func (p *Portal) deleteWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.webhooksOn(w, r, s) {
		return
	}
	mode := pageMode(r)
	if r.PostFormValue("confirm") != "1" {
		// The box is required in the form; this catches a post without it.
		v, err := p.endpointView(r, s, mode, r.PathValue("id"))
		if err != nil {
			p.notFoundOr(w, r, s, err)
			return
		}
		v.Error = "Tick “Delete this endpoint” to delete it."
		p.render(w, r, http.StatusBadRequest, "webhook", v)
		return
	}
	if _, err := p.api.webhooks.DeleteWebhook(s.jobsCtx(mode), &jobsv1.DeleteWebhookRequest{Id: r.PathValue("id")}); err != nil {
		p.notFoundOr(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/portal/webhooks?"+url.Values{"mode": {mode}, "done": {"deleted"}}.Encode(), http.StatusSeeOther)
}

// timestampText formats a protobuf time to the second; "" when unset.
func timestampText(t *timestamppb.Timestamp) string {
	if t == nil {
		return ""
	}
	return t.AsTime().UTC().Format("2006-01-02 15:04:05 UTC")
}
