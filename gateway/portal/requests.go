package portal

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	edgev1 "github.com/ledgerlane/platform/proto/edge/v1"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"google.golang.org/protobuf/proto"
)

// RequestLog is the call behind GET /v1/requests (the edge's
// RequestLogService), which the gateway answers in process.
type RequestLog interface {
	ListRequests(ctx context.Context, req *edgev1.ListRequestsRequest) (*edgev1.ListRequestsResponse, error)
	GetRequestCounts(ctx context.Context, req *edgev1.GetRequestCountsRequest) (*edgev1.GetRequestCountsResponse, error)
}

// The Requests page: the account's recent API requests, as GET
// /v1/requests answers them, with each credential's name.
type requestsView struct {
	Rows      []requestRow
	RequestID string // the search
	Mode      string // "", "live" or "test"
	// The last chartDays days: the chart and the window's totals.
	Chart               *requestChart
	Routes, Credentials []totalRow
	// Series is the chart's choice: "" (every request), "k:<credential
	// id>" or "r:<route>"; SeriesName says it in words, Options lists the
	// choices (the keys and routes of the totals).
	Series, SeriesName string
	Options            []seriesOption
}

type seriesOption struct{ Value, Label string }

type totalRow struct {
	Name, Mode string
	Count      int64
}

type requestRow struct {
	Time                            time.Time
	Credential, Mode, Method, Route string
	Status                          int32
	DurationMS                      int64
	RequestID, Problem              string
}

func (p *Portal) requests(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	rv := &requestsView{RequestID: q.Get("request_id"), Mode: q.Get("mode")}
	v := view{Title: "Requests", Session: s, CSRF: s.GetCsrfToken(), Requests: rv}
	if p.opts.RequestLog == nil {
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Session: s, Error: "There is no request log here."})
		return
	}
	limit := int32(100)
	res, err := p.opts.RequestLog.ListRequests(s.ctx, &edgev1.ListRequestsRequest{RequestId: rv.RequestID, Mode: rv.Mode, Limit: &limit})
	if err != nil {
		if pr := rpc.Problem(err); pr.Type == problem.InvalidInput {
			v.Error = "Choose live, test or both."
			p.render(w, r, http.StatusBadRequest, "requests", v)
			return
		}
		p.failed(w, r, err)
		return
	}
	names, err := p.credentialNames(s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	cq := &edgev1.GetRequestCountsRequest{Days: proto.Int32(chartDays)}
	rv.Series = q.Get("series")
	if id, ok := strings.CutPrefix(rv.Series, "k:"); ok {
		cq.CredentialId, rv.SeriesName = id, names.name(id)
	} else if route, ok := strings.CutPrefix(rv.Series, "r:"); ok {
		cq.Route, rv.SeriesName = route, route
	} else {
		rv.Series = ""
	}
	counts, err := p.opts.RequestLog.GetRequestCounts(s.ctx, cq)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	rv.Chart = newRequestChart(counts.GetDays())
	seen := map[string]bool{}
	option := func(value, label string) {
		if !seen[value] {
			seen[value] = true
			rv.Options = append(rv.Options, seriesOption{Value: value, Label: label})
		}
	}
	for _, t := range counts.GetCredentials() {
		rv.Credentials = append(rv.Credentials, totalRow{Name: names.name(t.GetName()), Mode: t.GetMode(), Count: int64(t.GetCount())})
		option("k:"+t.GetName(), "Key "+names.name(t.GetName()))
	}
	for _, t := range counts.GetRoutes() {
		rv.Routes = append(rv.Routes, totalRow{Name: t.GetName(), Mode: t.GetMode(), Count: int64(t.GetCount())})
		option("r:"+t.GetName(), "Route "+t.GetName())
	}
	for _, e := range res.GetData() {
		rv.Rows = append(rv.Rows, requestRow{Time: e.GetTime().AsTime(), Credential: names.name(e.GetCredentialId()), Mode: e.GetMode(),
			Method: e.GetMethod(), Route: e.GetRoute(), Status: e.GetStatus(), DurationMS: int64(e.GetDurationMs()),
			RequestID: e.GetRequestId(), Problem: e.GetProblem()})
	}
	p.render(w, r, http.StatusOK, "requests", v)
}

// credNames maps a credential id to how the portal names it.
type credNames map[string]string

func (n credNames) name(id string) string {
	if s, ok := n[id]; ok {
		return s
	}
	return "another credential" // an OAuth token, or one since removed
}

// credentialNames names the account's keys and finance credentials: "name
// (prefix…)".
func (p *Portal) credentialNames(s *session) (credNames, error) {
	keys, err := p.api.creds.ListKeys(s.ctx, &meteringv1.ListKeysRequest{})
	if err != nil {
		return nil, err
	}
	fin, err := p.api.creds.ListFinanceCredentials(s.ctx, &meteringv1.ListFinanceCredentialsRequest{})
	if err != nil {
		return nil, err
	}
	n := credNames{}
	for _, k := range keys.GetKeys() {
		n[k.GetId()] = k.GetName() + " (" + k.GetPrefix() + "…)"
	}
	for _, c := range fin.GetCredentials() {
		n[c.GetId()] = c.GetName() + " (" + c.GetPrefix() + "…)"
	}
	return n, nil
}
