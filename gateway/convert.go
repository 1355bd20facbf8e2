package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
)

// convertEnvelope is the JSON request of POST /v1/convert. Option names are
// camelCase on the wire (the spec's), unlike the rest of the API.
type convertEnvelope struct {
	From    string          `json:"from"`
	To      string          `json:"to"`
	Message *string         `json:"message"`
	Options *convertOptions `json:"options"`
}

type convertOptions struct {
	TranslitProfile string      `json:"translitProfile"`
	Field86Profile  string      `json:"field86Profile"`
	Strict          *bool       `json:"strict"`
	TargetVersion   string      `json:"targetVersion"`
	DateFormat      string      `json:"dateFormat"`
	OfxVersion      stringOrNum `json:"ofxVersion"`
	IntuBid         stringOrNum `json:"intuBid"`
}

// stringOrNum accepts "220" and 220 alike: clients send both for versions and
// bank ids.
type stringOrNum string

func (s *stringOrNum) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = stringOrNum(v)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*s = stringOrNum(n.String())
	return nil
}

func (o *convertOptions) proto() *conversionv1.Options {
	if o == nil {
		return nil
	}
	return &conversionv1.Options{
		TranslitProfile: o.TranslitProfile, Field86Profile: o.Field86Profile, Strict: o.Strict,
		TargetVersion: o.TargetVersion, DateFormat: o.DateFormat,
		OfxVersion: string(o.OfxVersion), IntuBid: string(o.IntuBid),
	}
}

var rawContentTypes = map[string]bool{
	"text/plain":             true,
	"application/x-swift-mt": true,
	"application/xml":        true,
}

// convert serves POST /v1/convert: a JSON envelope or a raw MT/MX body, with
// the answer negotiated by Accept (the envelope, or the bare document).
func (g *Gateway) convert(w http.ResponseWriter, r *http.Request) {
	reqID := requestID(r.Context())
	fail := func(p *problem.Problem) { writeProblem(w, p, reqID) }

	req, p := parseConvertRequest(r)
	if p != nil {
		fail(p)
		return
	}
	resp, err := g.converter.Convert(outgoing(r), req)
	if err != nil {
		g.grpcError(r.Context(), nil, nil, w, r, err)
		return
	}
	// The target's media type comes with the answer (the converter's
	// renderers carry it), so Accept is weighed once the document exists; a
	// refusal (406) is not counted.
	bare, p := negotiateConvert(r.Header.Get("Accept"), resp.GetMeta().GetMediaType(), req.GetTo())
	if p != nil {
		fail(p)
		return
	}
	warnings := resp.GetWarnings()
	if bare != "" {
		h := w.Header()
		h.Set("Content-Type", bare)
		h.Set("X-Service-Warnings", strconv.Itoa(len(warnings)))
		h.Set("X-Service-Warnings-Link", strings.TrimRight(g.cfg.DocsURL, "/")+"/warnings")
		if n := len(resp.GetResult()); n > 1 {
			h.Set("X-Service-Pages", strconv.Itoa(n))
		}
		w.WriteHeader(http.StatusOK)
		for _, page := range resp.GetResult() {
			_, _ = io.WriteString(w, page)
		}
		return
	}
	out := convertResponse{Warnings: make([]convertWarning, 0, len(warnings))}
	if res := resp.GetResult(); len(res) == 1 {
		out.Result = res[0]
	} else {
		out.Result = res
	}
	for _, wn := range warnings {
		out.Warnings = append(out.Warnings, convertWarning{Code: wn.GetCode(), Severity: wn.GetSeverity(), Message: wn.GetMessage(), Path: wn.GetPath()})
	}
	m := resp.GetMeta()
	out.Meta = convertMeta{DetectedType: m.GetDetectedType(), DetectedVersion: m.GetDetectedVersion(),
		TargetType: m.GetTargetType(), DurationMs: m.GetDurationMs(), Pages: m.GetPages()}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // XML and OFX results stay readable
	_ = enc.Encode(out)
}

// convertResponse is the spec's convert envelope; its members are camelCase.
type convertResponse struct {
	Result   any              `json:"result"` // a string, or one string per MT page
	Warnings []convertWarning `json:"warnings"`
	Meta     convertMeta      `json:"meta"`
}

type convertWarning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message,omitempty"`
	Path     string `json:"path,omitempty"`
}

type convertMeta struct {
	DetectedType    string `json:"detectedType"`
	DetectedVersion string `json:"detectedVersion"`
	TargetType      string `json:"targetType"`
	DurationMs      int32  `json:"durationMs"`
	Pages           int32  `json:"pages"`
}

// parseConvertRequest resolves from/to/options in the spec's precedence: the
// JSON envelope, then query parameters, then X-Service-* headers.
func parseConvertRequest(r *http.Request) (*conversionv1.ConvertRequest, *problem.Problem) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, problem.New(problem.InvalidInput, "Content-Type must be application/json, text/plain, application/x-swift-mt or application/xml").WithField("Content-Type")
	}
	body, err := bodyBytes(r)
	if err != nil {
		return nil, problem.New(problem.InvalidInput, "the request body could not be read")
	}
	req := &conversionv1.ConvertRequest{}
	q := r.URL.Query()
	switch {
	case mt == "application/json":
		var env convertEnvelope
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&env); err != nil {
			return nil, jsonProblem(err)
		}
		if env.Message == nil || *env.Message == "" {
			return nil, problem.New(problem.InvalidInput, "message is required").WithField("message")
		}
		req.From, req.To, req.Message, req.Options = env.From, env.To, *env.Message, env.Options.proto()
	case rawContentTypes[mt]:
		if len(body) == 0 {
			return nil, problem.New(problem.InvalidInput, "the request body is empty").WithField("body")
		}
		req.Raw, req.ContentType = body, mt
		opts, p := optionsFromQuery(q.Get)
		if p != nil {
			return nil, p
		}
		req.Options = opts
	default:
		return nil, problem.New(problem.InvalidInput, fmt.Sprintf("unsupported Content-Type %q: use application/json, text/plain, application/x-swift-mt or application/xml", mt)).WithField("Content-Type")
	}
	// Each of from, to and the target version is resolved on its own: the
	// envelope's value, else the query parameter, else the X-Service-* header.
	req.From = firstOf(req.From, q.Get("from"), r.Header.Get("X-Service-From"))
	req.To = firstOf(req.To, q.Get("to"), r.Header.Get("X-Service-To"))
	if v := firstOf(q.Get("toVersion"), r.Header.Get("X-Service-To-Version")); v != "" {
		if req.Options == nil {
			req.Options = &conversionv1.Options{}
		}
		if req.Options.TargetVersion == "" {
			req.Options.TargetVersion = v
		}
	}
	if req.To == "" {
		return nil, problem.New(problem.InvalidInput, "to is required (envelope field, query parameter or X-Service-To header)").WithField("to")
	}
	return req, nil
}

func optionsFromQuery(get func(string) string) (*conversionv1.Options, *problem.Problem) {
	o := &conversionv1.Options{
		TranslitProfile: get("translitProfile"), Field86Profile: get("field86Profile"),
		TargetVersion: get("targetVersion"), DateFormat: get("dateFormat"),
		OfxVersion: get("ofxVersion"), IntuBid: get("intuBid"),
	}
	if s := get("strict"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, problem.New(problem.InvalidInput, "strict must be true or false").WithField("strict")
		}
		o.Strict = &b
	}
	return o, nil
}

func jsonProblem(err error) *problem.Problem {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ):
		f := typ.Field
		if f == "" {
			f = "body"
		}
		return problem.New(problem.InvalidInput, "invalid value for field "+f).WithField(f)
	case errors.As(err, &syn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(problem.InvalidInput, "the request body is not valid JSON").WithField("body")
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return problem.New(problem.InvalidInput, "unknown field "+f).WithField(f)
	}
	return problem.New(problem.InvalidInput, "the request body is not valid JSON").WithField("body")
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// negotiateConvert picks the response form from Accept: "" for the JSON
// envelope (the default, also for */*), or bare, the converted document's
// media type. Asking for a bare type that is not the target's answers 406.
func negotiateConvert(accept, bare, to string) (string, *problem.Problem) {
	if strings.TrimSpace(accept) == "" {
		return "", nil
	}
	bestQ, best := -1.0, ""
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q <= 0 {
			continue
		}
		var cand string
		switch mt {
		case "application/json", "*/*", "application/*":
			cand = "json"
		case bare:
			cand = bare
		default:
			continue
		}
		if q > bestQ {
			bestQ, best = q, cand
		}
	}
	switch best {
	case "json":
		return "", nil
	case "":
		return "", problem.New(problem.NotAcceptable, fmt.Sprintf("Accept must allow application/json or %s for target %s", bare, to)).WithField("Accept")
	default:
		return best, nil
	}
}
