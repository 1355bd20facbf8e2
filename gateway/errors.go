package gateway

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
)

// grpcError is grpc-gateway's error hook: every backend or decoding error
// becomes a problem document here, and nowhere else.
func (g *Gateway) grpcError(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	p := rpc.Problem(err)
	var be *backendError
	if errors.As(err, &be) {
		markContentLevel(w)
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.InvalidArgument && p.Field == "" {
		// Errors raised by grpc-gateway itself while decoding JSON or query
		// parameters carry protojson's text; name the field and say it plainly.
		if f, detail, ok := decodeError(st.Message()); ok {
			p.Field, p.Detail = f, detail
		}
	}
	if p.Type == problem.Unauthorized {
		// A backend can refuse a credential the edge accepted (a finance grant
		// withdrawn since). Every 401 reads the same whatever the cause: the
		// reason stays in the log.
		g.log.Info("backend refused the credential", "request_id", requestID(r.Context()), "path", r.URL.Path, "reason", p.Detail)
		writeUnauthorized(w, requestID(r.Context()))
		return
	}
	if p.Type == problem.Internal || p.Type == problem.Unavailable {
		g.log.Error("backend error", "request_id", requestID(r.Context()), "path", r.URL.Path, "code", status.Code(err).String())
	}
	writeProblem(w, p, requestID(r.Context()))
}

// routingError covers grpc-gateway's own 404/405, which the route table should
// already have answered; kept so no plain-text error can ever escape.
func (g *Gateway) routingError(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	t := problem.NotFound
	switch code {
	case http.StatusMethodNotAllowed:
		t = problem.MethodNotAllowed
	case http.StatusBadRequest:
		t = problem.InvalidInput
	}
	writeProblem(w, problem.New(t, ""), requestID(r.Context()))
}

var (
	reUnknownField = regexp.MustCompile(`unknown field "([^"]+)"`)
	reInvalidValue = regexp.MustCompile(`invalid value for [a-z0-9 ]*field ([A-Za-z0-9_]+)`)
	reQueryField   = regexp.MustCompile(`(?:parsing field|field) "([^"]+)"`)
	reSyntax       = regexp.MustCompile(`syntax error|unexpected token|unexpected EOF|invalid character`)
)

// decodeError turns a protojson or query-parameter parse message into the
// field it names and a clean detail.
func decodeError(msg string) (field, detail string, ok bool) {
	if m := reUnknownField.FindStringSubmatch(msg); m != nil {
		return m[1], "unknown field " + m[1], true
	}
	if m := reInvalidValue.FindStringSubmatch(msg); m != nil {
		return m[1], "invalid value for field " + m[1], true
	}
	if m := reQueryField.FindStringSubmatch(msg); m != nil {
		return m[1], "invalid value for parameter " + m[1], true
	}
	if reSyntax.MatchString(msg) || strings.HasPrefix(msg, "proto:") {
		return "body", "the request body is not valid JSON", true
	}
	return "", "", false
}

// writeUnauthorized is the one 401 the API answers.
func writeUnauthorized(w http.ResponseWriter, reqID string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ledgerlane"`)
	writeProblem(w, problem.New(problem.Unauthorized, "a valid API key or access token is required"), reqID)
}
