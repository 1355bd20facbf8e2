package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

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
		if f, detail, ok := decodeError(st.Message(), bodyFrom(ctx)); ok {
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
	rePosition     = regexp.MustCompile(`\(line (\d+):(\d+)\)`)
)

// decodeError turns a protojson or query-parameter parse message into the
// field it names and a clean detail. body is the JSON request body the
// message is about (nil when unknown): protojson reports a value of the wrong
// JSON type for a message or list field as a bare "syntax error" at a
// position, and other fields under their camelCase JSON names, so the member
// is read off the body at that position and named as the client sent it.
func decodeError(msg string, body []byte) (field, detail string, ok bool) {
	if m := reUnknownField.FindStringSubmatch(msg); m != nil {
		return m[1], "unknown field " + m[1], true
	}
	if m := rePosition.FindStringSubmatch(msg); m != nil && json.Valid(body) {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if name, found := memberAt(body, line, col); found {
			return name, "invalid value for field " + name + ": the JSON type or value does not fit it", true
		}
	}
	if m := reInvalidValue.FindStringSubmatch(msg); m != nil {
		name := snakeCase(m[1])
		return name, "invalid value for field " + name, true
	}
	if m := reQueryField.FindStringSubmatch(msg); m != nil {
		return m[1], "invalid value for parameter " + m[1], true
	}
	if reSyntax.MatchString(msg) || strings.HasPrefix(msg, "proto:") {
		return "body", "the request body is not valid JSON", true
	}
	return "", "", false
}

// memberAt names the object member of a valid JSON body whose value starts
// at line and column (1-based; the column counts runes, as protojson does),
// as a dotted path of keys ("location.city"). Array positions add nothing to
// the path: the field is the list.
func memberAt(body []byte, line, col int) (string, bool) {
	target := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(body[target:], '\n')
		if i < 0 {
			return "", false
		}
		target += i + 1
	}
	for c := 1; c < col && target < len(body); c++ {
		_, size := utf8.DecodeRune(body[target:])
		target += size
	}
	type frame struct {
		object bool
		key    string
		expect bool // an object's next token is a key
	}
	var stack []frame
	path := func() string {
		keys := make([]string, 0, len(stack))
		for _, f := range stack {
			if f.object && f.key != "" {
				keys = append(keys, f.key)
			}
		}
		return strings.Join(keys, ".")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		// The next token starts after whitespace and the separators the
		// decoder has not consumed yet.
		start := int(dec.InputOffset())
		for start < len(body) && strings.IndexByte(" \t\r\n:,", body[start]) >= 0 {
			start++
		}
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		top := len(stack) - 1
		isKey := top >= 0 && stack[top].object && stack[top].expect
		if isKey {
			stack[top].key, _ = tok.(string)
			stack[top].expect = false
			continue
		}
		if start == target {
			p := path()
			return p, p != ""
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			top--
		}
		if top >= 0 && stack[top].object {
			stack[top].expect = true
		}
	}
}

// snakeCase turns protojson's camelCase JSON name back into the proto field
// name the API documents (expectedVersion → expected_version).
func snakeCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

type bodyKey struct{}

// withBody keeps a JSON request body in the context for decodeError.
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
