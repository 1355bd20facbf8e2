package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ledgerlane/platform/gateway/fieldcheck"
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
	if st, ok := status.FromError(err); ok && st.Code() == codes.InvalidArgument && p.Field == "" && !rpc.CarriesProblem(st) {
		// An error grpc-gateway raised itself while decoding the body or
		// the query: name the member that does not fit, never pass its
		// text on.
		if f, ok := decodeFinding(ctx, r); ok {
			p.Field, p.Detail = f.Field, f.Detail
		} else {
			p.Detail = "the request does not fit this operation's parameters"
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

// decodeFinding names what grpc-gateway could not decode: the JSON body's
// member, or the query parameter, that does not fit the method's request
// message (gateway/fieldcheck reads the request against the message's
// descriptor; no library error text is parsed). The request message comes
// from the method grpc-gateway annotated the context with.
func decodeFinding(ctx context.Context, r *http.Request) (fieldcheck.Finding, bool) {
	method, ok := runtime.RPCMethod(ctx)
	if !ok {
		return fieldcheck.Finding{}, false
	}
	md := requestMessage(method)
	if md == nil {
		return fieldcheck.Finding{}, false
	}
	if body := bodyFrom(ctx); len(body) > 0 {
		if f, bad := fieldcheck.Body(body, md); bad {
			return f, true
		}
	}
	return fieldcheck.Query(r.URL.Query(), md)
}

// requestMessage is the request message of a full gRPC method name
// ("/finance.v1.TransactionService/UpdateTransaction"), nil when unknown:
// the route selector's lookup (input.go), spelled with a slash.
func requestMessage(method string) protoreflect.MessageDescriptor {
	service, name, ok := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	if !ok {
		return nil
	}
	return selectorMessage(service + "." + name)
}

type bodyKey struct{}

// withBody keeps a JSON request body in the context for decodeFinding.
func withBody(ctx context.Context, body []byte) context.Context {
	return context.WithValue(ctx, bodyKey{}, body)
}

func bodyFrom(ctx context.Context) []byte {
	b, _ := ctx.Value(bodyKey{}).([]byte)
	return b
}

// writeUnauthorized is the one 401 the API answers.
func writeUnauthorized(w http.ResponseWriter, reqID string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ledgerlane"`)
	writeProblem(w, problem.New(problem.Unauthorized, "a valid API key or access token is required"), reqID)
}
