package gateway

import (
	"cmp"
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/gateway/apidocs"
	"github.com/ledgerlane/platform/gateway/reqlog"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	edgev1 "github.com/ledgerlane/platform/proto/edge/v1"
)

// requestLogServer is RequestLogService: GET /v1/requests, and the
// portal's Requests page, which calls it in process with its session's
// principal.
type requestLogServer struct {
	edgev1.UnimplementedRequestLogServiceServer
	log *reqlog.Log
	now func() time.Time
}

// ListRequests answers the caller's account's requests, newest first.
func (s *requestLogServer) ListRequests(ctx context.Context, req *edgev1.ListRequestsRequest) (*edgev1.ListRequestsResponse, error) {
	p, err := logReader(ctx)
	if err != nil {
		return nil, err
	}
	q := reqlog.Query{RequestID: req.GetRequestId(), Mode: req.GetMode(), Limit: 50}
	if req.Limit != nil {
		q.Limit = int(req.GetLimit())
		if q.Limit < 1 || q.Limit > reqlog.Keep {
			return nil, problem.New(problem.InvalidInput, "limit must be 1 to 1000").WithField("limit")
		}
	}
	if q.Mode != "" && q.Mode != "live" && q.Mode != "test" {
		return nil, problem.New(problem.InvalidInput, `mode must be "live" or "test"`).WithField("mode")
	}
	es, err := s.log.Recent(ctx, p.AccountID, q)
	if err != nil {
		return nil, problem.New(problem.Unavailable, "the request log cannot be read right now; retry shortly").WithRetryAfter(1)
	}
	out := &edgev1.ListRequestsResponse{Data: make([]*edgev1.RequestLogEntry, 0, len(es))}
	for _, e := range es {
		le := &edgev1.RequestLogEntry{Time: timestamppb.New(e.Time), CredentialId: e.CredentialID, Mode: e.Mode,
			Method: e.Method, Route: e.Route, Status: int32(e.Status), DurationMs: clamp32(e.DurationMS), RequestId: e.RequestID}
		if e.Problem != "" {
			le.Problem = &e.Problem
		}
		out.Data = append(out.Data, le)
	}
	return out, nil
}

// GetRequestCounts answers the caller's account's requests per UTC day of
// the window ending today, and its totals by route and credential.
func (s *requestLogServer) GetRequestCounts(ctx context.Context, req *edgev1.GetRequestCountsRequest) (*edgev1.GetRequestCountsResponse, error) {
	p, err := logReader(ctx)
	if err != nil {
		return nil, err
	}
	n := 30
	if req.Days != nil {
		n = int(req.GetDays())
		if n < 1 || n > reqlog.DailyKeep {
			return nil, problem.New(problem.InvalidInput, "days must be 1 to 90").WithField("days")
		}
	}
	switch {
	case req.GetCredentialId() != "" && req.GetRoute() != "":
		return nil, problem.New(problem.InvalidInput, "credential_id and route cannot be combined: counts are kept by credential and by route, not by both").WithField("route")
	case len(req.GetCredentialId()) > 128:
		return nil, problem.New(problem.InvalidInput, "credential_id is at most 128 characters").WithField("credential_id")
	case len(req.GetRoute()) > 256:
		return nil, problem.New(problem.InvalidInput, "route is at most 256 characters").WithField("route")
	}
	days, err := s.log.Daily(ctx, p.AccountID, s.now(), n)
	if err != nil {
		return nil, problem.New(problem.Unavailable, "the request counts cannot be read right now; retry shortly").WithRetryAfter(1)
	}
	out := &edgev1.GetRequestCountsResponse{}
	routes, creds := map[string]int64{}, map[string]int64{}
	for _, d := range days {
		c := d.Counts
		switch {
		case req.GetCredentialId() != "":
			c = d.ByCredential[req.GetCredentialId()]
		case req.GetRoute() != "":
			c = d.ByRoute[req.GetRoute()]
		}
		out.Days = append(out.Days, &edgev1.DayRequestCount{Date: d.Date.Format(time.DateOnly),
			LiveOk: clamp32(c["live/ok"]), LiveClientError: clamp32(c["live/client_error"]), LiveServerError: clamp32(c["live/server_error"]),
			TestOk: clamp32(c["test/ok"]), TestClientError: clamp32(c["test/client_error"]), TestServerError: clamp32(c["test/server_error"])})
		for k, v := range d.Routes {
			routes[k] += v
		}
		for k, v := range d.Credentials {
			creds[k] += v
		}
	}
	out.Routes, out.Credentials = totals(routes), totals(creds)
	return out, nil
}

// clamp32 is n as a JSON number's int32, saturated: protojson writes a
// 64-bit integer as a string, and no count or duration comes near 2^31.
func clamp32(n int64) int32 { return int32(min(n, math.MaxInt32)) }

// totals turns "name mode" counts into totals, largest first.
func totals(m map[string]int64) []*edgev1.RequestTotal {
	out := make([]*edgev1.RequestTotal, 0, len(m))
	for k, v := range m {
		name, mode, _ := strings.Cut(k, " ")
		out = append(out, &edgev1.RequestTotal{Name: name, Mode: mode, Count: clamp32(v)})
	}
	slices.SortFunc(out, func(a, b *edgev1.RequestTotal) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Mode, b.Mode))
	})
	return out
}

// logReader is the caller of the request log's calls: any principal with
// usage:read (an operator key, or a portal session in process).
func logReader(ctx context.Context) (principal.Principal, error) {
	p, ok := principal.From(ctx)
	if !ok {
		if p, ok = principal.FromIncoming(ctx); !ok {
			return p, problem.New(problem.Unauthorized, "no caller")
		}
	}
	if !p.HasScope("usage:read") {
		return p, problem.New(problem.ForbiddenScope, "the request log needs scope usage:read")
	}
	return p, nil
}

// recordRequest keeps an authenticated /v1 request in its account's request
// log: the route's pattern, never the path, and the problem type of a
// refusal, read from the Link header writeProblem sets beside it.
func (g *Gateway) recordRequest(r *http.Request, li logInfo, status int, h http.Header, took time.Duration) {
	if li.accountID == "" || li.web || !strings.HasPrefix(li.route, "/v1/") {
		return
	}
	var slug string
	if l, ok := strings.CutPrefix(h.Get("Link"), "<"+apidocs.ProblemPath("")); ok {
		slug, _, _ = strings.Cut(l, ">")
	}
	g.reqlog.Record(reqlog.Entry{Time: g.now().UTC(), AccountID: li.accountID, CredentialID: li.credentialID, Mode: li.mode,
		Method: r.Method, Route: li.route, Status: status, DurationMS: took.Milliseconds(), RequestID: requestID(r.Context()), Problem: slug})
}

// RunRequestLog writes the request log's buffer out every second until ctx
// ends, then once more.
func (g *Gateway) RunRequestLog(ctx context.Context) { g.reqlog.Run(ctx) }
