package gateway

import (
	"context"
	"net/http"
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
}

// ListRequests answers the caller's account's requests, newest first.
func (s *requestLogServer) ListRequests(ctx context.Context, req *edgev1.ListRequestsRequest) (*edgev1.ListRequestsResponse, error) {
	p, ok := principal.From(ctx)
	if !ok {
		if p, ok = principal.FromIncoming(ctx); !ok {
			return nil, problem.New(problem.Unauthorized, "no caller")
		}
	}
	if !p.HasScope("usage:read") {
		return nil, problem.New(problem.ForbiddenScope, "the request log needs scope usage:read")
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
			Method: e.Method, Route: e.Route, Status: int32(e.Status), DurationMs: e.DurationMS, RequestId: e.RequestID}
		if e.Problem != "" {
			le.Problem = &e.Problem
		}
		out.Data = append(out.Data, le)
	}
	return out, nil
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
