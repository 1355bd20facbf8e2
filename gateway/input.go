package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/ledgerlane/platform/gateway/fieldcheck"
	"github.com/ledgerlane/platform/gateway/route"
	"github.com/ledgerlane/platform/pkg/problem"
)

// checkInput refuses, before any backend is called, what no backend could
// read: path ids, query parameters and X-Service-* headers that are not
// valid UTF-8 or carry control characters (a NUL cannot even be stored in
// PostgreSQL text), and a query string that does not parse. Each answer
// names the parameter.
func checkInput(r *http.Request, rt route.Route) *problem.Problem {
	if strings.Contains(rt.Pattern, "{") { // only parameters are checked: skip the splits without any
		segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		for i, p := range strings.Split(strings.TrimPrefix(rt.Pattern, "/"), "/") {
			if name, ok := strings.CutPrefix(p, "{"); ok && i < len(segs) && !cleanText(segs[i]) {
				name = strings.TrimSuffix(name, "}")
				return problem.New(problem.InvalidInput, "path parameter "+name+" must be valid UTF-8 without control characters").WithField(name)
			}
		}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return problem.New(problem.InvalidInput, "the query string is malformed (a bad %-escape or a semicolon)").WithField("query")
	}
	for k, vs := range q {
		if !cleanText(k) {
			return problem.New(problem.InvalidInput, "query parameter names must be valid UTF-8 without control characters").WithField("query")
		}
		for _, v := range vs {
			if !cleanText(v) {
				return problem.New(problem.InvalidInput, "query parameter "+k+" must be valid UTF-8 without control characters").WithField(k)
			}
		}
	}
	if rt.Handler == route.HandlerGenerated && len(q) > 0 && jsonBody(r, rt) {
		// Every write binds its whole body (body: "*" in proto/http.yaml),
		// and grpc-gateway then reads no query parameter at all: refuse
		// rather than drop ?expected_version=3 in silence.
		if f, bad := fieldcheck.UnknownQuery(q, emptyMessage); bad {
			return problem.New(problem.InvalidInput, "query parameter "+f.Field+" is not read by this operation: send it in the JSON body").WithField(f.Field)
		}
	}
	if rt.Handler == route.HandlerGenerated {
		if md := selectorMessage(rt.Selector); md != nil {
			if f, bad := fieldcheck.UnknownQuery(q, md); bad {
				return problem.New(problem.InvalidInput, f.Detail+": this operation takes none by that name").WithField(f.Field)
			}
		}
	}
	for k, vs := range r.Header {
		if !strings.HasPrefix(k, "X-Service-") {
			continue
		}
		for _, v := range vs {
			if !cleanText(v) {
				return problem.New(problem.InvalidInput, "header "+k+" must be valid UTF-8 without control characters").WithField(k)
			}
		}
	}
	return nil
}

// cleanText: valid UTF-8 with no C0 control character or DEL.
func cleanText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// selectorMessage is the request message of a route's gRPC method
// ("finance.v1.TransactionService.ListTransactions"), nil when unknown.
func selectorMessage(selector string) protoreflect.MessageDescriptor {
	if md, ok := selectorMessages.Load(selector); ok {
		return md.(protoreflect.MessageDescriptor)
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(selector))
	if err != nil {
		return nil
	}
	m, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return nil
	}
	selectorMessages.Store(selector, m.Input())
	return m.Input()
}

// emptyMessage names no field: every query parameter is unknown to it.
var emptyMessage = (&emptypb.Empty{}).ProtoReflect().Descriptor()

var selectorMessages sync.Map // route selector → protoreflect.MessageDescriptor

// checkContentType refuses a body declared as something other than JSON on
// a route that decodes JSON: a form post (curl -d without -H), text/plain or
// XML is refused rather than read as JSON anyway, as POST /v1/convert
// refuses a type it does not take. A body without any Content-Type is read
// as JSON (docs/api.md): many HTTP clients send none, and nothing is lost.
func checkContentType(r *http.Request, body []byte) *problem.Problem {
	ct := r.Header.Get("Content-Type")
	if ct == "" || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	switch mt := mediaType(ct); {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return nil
	default:
		return problem.New(problem.InvalidInput, fmt.Sprintf("unsupported Content-Type %q: this operation takes application/json", ct)).WithField("Content-Type")
	}
}

// checkJSON refuses a JSON request body that is not exactly one JSON value:
// malformed JSON, data after the value (`{"a":1}{"b":2}` must not be half
// read), and strings holding U+0000, which no store keeps. Whitespace around
// the value is fine.
func checkJSON(body []byte) *problem.Problem {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil // an empty body is an empty request message
	}
	notJSON := problem.New(problem.InvalidInput, "the request body is not valid JSON").WithField("body")
	if json.Valid(body) {
		if bytes.Contains(body, []byte(`\u0000`)) && hasNUL(body) {
			return problem.New(problem.InvalidInput, "strings in the request body must not contain U+0000").WithField("body")
		}
		return nil
	}
	// Say "trailing data" when the body starts with one whole value.
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err == nil {
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return problem.New(problem.InvalidInput, "the request body has data after its JSON value").WithField("body")
		}
	}
	return notJSON
}

// hasNUL reports whether a decoded string of the valid JSON body holds U+0000
// (the raw bytes can say \u0000 inside an escaped backslash, which is fine).
func hasNUL(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

// jsonBody reports whether requests on rt carry a JSON body that a backend
// decodes: every POST, PATCH and PUT except raw-body conversion requests,
// and a DELETE that carries a body (DELETE /v1/categories/{id} and
// /v1/goals/{id} take one, so a text/plain one is refused naming
// Content-Type like any other write's).
func jsonBody(r *http.Request, rt route.Route) bool {
	switch rt.Method {
	case http.MethodPost, http.MethodPatch, http.MethodPut:
	case http.MethodDelete:
		if r.ContentLength == 0 {
			return false
		}
	default:
		return false
	}
	if rt.Handler == route.HandlerConvert { // also takes raw MT and MX bodies
		return mediaType(r.Header.Get("Content-Type")) == "application/json"
	}
	return true
}

// mediaType is a Content-Type's media type, lower case, "" when it does not
// parse.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}
