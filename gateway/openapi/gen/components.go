package main

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ledgerlane/platform/pkg/problem"
)

// The shapes below are the edge's own: the problem document (gateway/problem.go,
// pkg/problem), the headers the edge writes (docs/limits.md, docs/api.md) and
// the hand-written routes (gateway/convert.go, gateway/openapi). The
// end-to-end suite (deploy/local) validates real answers against them.

func (b *builder) components() {
	c := b.doc.Components
	c.SecuritySchemes = securitySchemes()
	if c.Schemas == nil {
		c.Schemas = openapi3.Schemas{}
	}
	c.Schemas["Problem"] = problemSchema()
	c.Headers = edgeHeaders()
	c.Parameters = requestHeaders()
	c.Responses = problemResponses()
	b.convertSchemas()
}

// securitySchemes are the two ways to send a credential.
func securitySchemes() openapi3.SecuritySchemes {
	return openapi3.SecuritySchemes{
		"BearerAuth": {Value: &openapi3.SecurityScheme{Type: "http", Scheme: "bearer",
			Description: "An API key (ak_live_…, ak_test_…) or access token (at_…) as a bearer token. " +
				"Every 401 reads the same whatever the cause."}},
		"ApiKeyAuth": {Value: &openapi3.SecurityScheme{Type: "apiKey", In: "header", Name: "X-API-Key",
			Description: "An API key in the X-API-Key header."}},
	}
}

// problemSchema is the problem document, with every slug.
func problemSchema() *openapi3.SchemaRef {
	var slugs []any
	types := problem.Types()
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	for _, t := range types {
		slugs = append(slugs, string(t))
	}
	return openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "An RFC 9457 problem document (application/problem+json). Switch on `type`, never on `title` or `detail`; docs/errors.md lists the slugs.",
		Required:    []string{"type", "title", "status", "instance"},
		Properties: openapi3.Schemas{
			"type":        stringSchema("A stable slug.", func(s *openapi3.Schema) { s.Enum = slugs }),
			"title":       stringSchema("The slug's short human summary.", nil),
			"status":      intSchema("The HTTP status.", func(s *openapi3.Schema) { s.Min, s.Max = ptr(400.0), ptr(599.0) }),
			"detail":      stringSchema("What happened, for a human; never parse it.", nil),
			"instance":    stringSchema("The request id, also sent as X-Request-Id.", nil),
			"field":       stringSchema("The request member at fault (a JSON field, query parameter or header), when there is one.", nil),
			"retry_after": intSchema("Mirrors the Retry-After header, in seconds.", func(s *openapi3.Schema) { s.Min = ptr(1.0) }),
		},
		AdditionalProperties: openapi3.AdditionalProperties{Has: ptr(false)},
	})
}

// edgeHeaders are the headers the edge writes.
func edgeHeaders() openapi3.Headers {
	return openapi3.Headers{
		"X-Request-Id": header("The request id: the client's X-Request-Id when well formed, else a new one. Problem documents repeat it as `instance`.", true, stringSchema("", nil)),
		"RateLimit-Limit": header("The account's token bucket size (its plan's burst). On every authenticated answer that passed the bucket "+
			"(draft-ietf-httpapi-ratelimit-headers-06); absent while Redis is unreachable.", false, intSchema("", nonNegative)),
		"RateLimit-Remaining": header("Whole tokens left after this request.", false, intSchema("", nonNegative)),
		"RateLimit-Reset":     header("Seconds until the bucket is full again.", false, intSchema("", nonNegative)),
		"X-Quota-Limit": header("Metered routes: the quota this request drew on (the plan's included live conversions, or the "+
			"test pool of 250 for test credentials).", false, intSchema("", nonNegative)),
		"X-Quota-Remaining":    header("Metered routes: the quota left before this request, clamped at 0.", false, intSchema("", nonNegative)),
		"Idempotency-Replayed": header("`true` when this answer is the stored answer to an earlier request with the same Idempotency-Key, replayed byte for byte.", false, stringSchema("", func(s *openapi3.Schema) { s.Enum = []any{"true"} })),
		"Retry-After":          header("Seconds to wait before retrying (429, and 409 idempotency-in-flight).", false, intSchema("", func(s *openapi3.Schema) { s.Min = ptr(1.0) })),
		"Cache-Control":        header("Problem documents are never cached.", true, stringSchema("", func(s *openapi3.Schema) { s.Enum = []any{"no-store"} })),
		"WWW-Authenticate":     header("The bearer challenge.", true, stringSchema("", nil)),
		"Allow":                header("The methods the path answers (HEAD wherever GET, OPTIONS everywhere).", true, stringSchema("", nil)),
		"X-Service-Warnings":   header("Bare convert answers: how many conversion warnings the envelope would have listed.", false, intSchema("", nonNegative)),
		"X-Service-Warnings-Link": header("Bare convert answers: where the warning codes are documented.", false,
			stringSchema("", nil)),
		"X-Service-Pages": header("Bare convert answers of an MT target split over several messages: how many are concatenated in the body.", false,
			intSchema("", func(s *openapi3.Schema) { s.Min = ptr(2.0) })),
		"ETag":                   header("A strong validator of the document; send it back as If-None-Match.", true, stringSchema("", nil)),
		"Cache-Control-Document": header("The document may be cached for five minutes.", true, stringSchema("", nil)),
	}
}

// requestHeaders are the request headers every route or some routes take:
// the request id and the idempotency key, optional or required.
func requestHeaders() openapi3.ParametersMap {
	key := func(required bool) *openapi3.ParameterRef {
		p := openapi3.NewHeaderParameter("Idempotency-Key").WithRequired(required)
		p.Description = "1 to 128 visible ASCII characters, kept 24 hours and scoped to the credential. The same key and request " +
			"replays the stored answer (Idempotency-Replayed: true); the same key with another request is 409 idempotency-conflict; " +
			"a duplicate of a request still running is 409 idempotency-in-flight with Retry-After."
		p.Schema = stringSchema("", func(s *openapi3.Schema) {
			s.MinLength, s.MaxLength, s.Pattern = 1, ptr(uint64(128)), "^[!-~]+$"
		})
		return &openapi3.ParameterRef{Value: p}
	}
	reqID := openapi3.NewHeaderParameter("X-Request-Id")
	reqID.Description = "Optional correlation id (1-128 of A-Z a-z 0-9 . _ : -); anything else is replaced by a new id."
	reqID.Schema = stringSchema("", nil)
	return openapi3.ParametersMap{
		"IdempotencyKey":         key(false),
		"IdempotencyKeyRequired": key(true),
		"RequestId":              {Value: reqID},
	}
}

// problemResponses are one problem response per status, listing its slugs
// and the headers it may carry, and the catch-all.
func problemResponses() openapi3.ResponseBodies {
	bodies := openapi3.ResponseBodies{}
	for status, slugs := range slugsByStatus() {
		hs := []string{"X-Request-Id", "Cache-Control", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
			"X-Quota-Limit", "X-Quota-Remaining", "Idempotency-Replayed"}
		switch status {
		case http.StatusUnauthorized:
			hs = append(hs, "WWW-Authenticate")
		case http.StatusMethodNotAllowed:
			hs = append(hs, "Allow")
		case http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			hs = append(hs, "Retry-After")
		}
		enum := make([]any, len(slugs))
		for i, s := range slugs {
			enum[i] = s
		}
		schema := &openapi3.SchemaRef{Value: &openapi3.Schema{AllOf: openapi3.SchemaRefs{
			{Ref: schemas + "Problem"},
			{Value: &openapi3.Schema{Properties: openapi3.Schemas{
				"type":   {Value: &openapi3.Schema{Enum: enum}},
				"status": {Value: &openapi3.Schema{Enum: []any{status}}},
			}}},
		}}}
		desc := fmt.Sprintf("%d %s: a problem document of type %s.", status, http.StatusText(status), strings.Join(quote(slugs), ", "))
		bodies[problemResponse(status)] = &openapi3.ResponseRef{Value: &openapi3.Response{
			Description: &desc,
			Headers:     headerRefs(hs...),
			Content:     openapi3.Content{problem.ContentType: &openapi3.MediaType{Schema: schema}},
		}}
	}
	desc := "A problem document (RFC 9457); docs/errors.md lists every type."
	bodies["Problem"] = &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: &desc,
		Headers: headerRefs("X-Request-Id", "Cache-Control", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
			"X-Quota-Limit", "X-Quota-Remaining", "Idempotency-Replayed", "Retry-After"),
		Content: openapi3.Content{problem.ContentType: &openapi3.MediaType{Schema: &openapi3.SchemaRef{Ref: schemas + "Problem"}}},
	}}
	return bodies
}

// convertSchemas are POST /v1/convert's JSON shapes (gateway/convert.go):
// camelCase, unlike the rest of the API.
func (b *builder) convertSchemas() {
	c := b.doc.Components
	closed := openapi3.AdditionalProperties{Has: ptr(false)}
	strOrNum := &openapi3.SchemaRef{Value: &openapi3.Schema{OneOf: openapi3.SchemaRefs{
		stringSchema("", nil), {Value: openapi3.NewFloat64Schema()},
	}}}
	c.Schemas["ConvertOptions"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "Conversion options (docs/conversion-formats.md lists which target takes which).",
		Properties: openapi3.Schemas{
			"translitProfile": stringSchema("Transliteration profile for MT output.", nil),
			"field86Profile":  stringSchema("How MT940 field 86 is structured.", nil),
			"strict":          boolSchema("Refuse lossy steps (422 unprocessable) instead of warning."),
			"targetVersion":   stringSchema("Target message version, e.g. camt.053.001.02.", nil),
			"dateFormat":      stringSchema("CSV date format.", nil),
			"ofxVersion":      strOrNum,
			"intuBid":         strOrNum,
		},
		AdditionalProperties: closed,
	})
	c.Schemas["ConvertEnvelope"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "The JSON request of POST /v1/convert. `from`, `to` and the target version fall back to the query parameters, then the X-Service-* headers.",
		Required:    []string{"message"},
		Properties: openapi3.Schemas{
			"from":    stringSchema("Source type; detected when absent.", nil),
			"to":      stringSchema("Target type (e.g. camt.053, MT940, csv, ofx, qbo); may also be given as ?to= or X-Service-To.", nil),
			"message": stringSchema("The message to convert.", func(s *openapi3.Schema) { s.MinLength = 1 }),
			"options": {Ref: schemas + "ConvertOptions"},
		},
		AdditionalProperties: closed,
	})
	c.Schemas["ConvertWarning"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "A conversion warning (docs/conversion-warnings.md lists the codes).",
		Required:    []string{"code", "severity"},
		Properties: openapi3.Schemas{
			"code":     stringSchema("", nil),
			"severity": stringSchema("", nil),
			"message":  stringSchema("", nil),
			"path":     stringSchema("", nil),
		},
		AdditionalProperties: closed,
	})
	c.Schemas["ConvertMeta"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:     &openapi3.Types{openapi3.TypeObject},
		Required: []string{"detectedType", "detectedVersion", "targetType", "durationMs", "pages"},
		Properties: openapi3.Schemas{
			"detectedType":    stringSchema("", nil),
			"detectedVersion": stringSchema("", nil),
			"targetType":      stringSchema("", nil),
			"durationMs":      intSchema("", nonNegative),
			"pages":           intSchema("MT targets: how many messages the result spans.", nonNegative),
		},
		AdditionalProperties: closed,
	})
	c.Schemas["ConvertResponse"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "The JSON envelope answer of POST /v1/convert.",
		Required:    []string{"result", "warnings", "meta"},
		Properties: openapi3.Schemas{
			"result": {Value: &openapi3.Schema{
				Description: "The converted document, or one string per message when an MT target spans several.",
				OneOf:       openapi3.SchemaRefs{stringSchema("", nil), {Value: openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())}},
			}},
			"warnings": {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: &openapi3.SchemaRef{Ref: schemas + "ConvertWarning"}}},
			"meta":     {Ref: schemas + "ConvertMeta"},
		},
		AdditionalProperties: closed,
	})
}

// bareMediaTypes are the media types the converter's renderers carry
// (services/converter: mt, mx, filefmt), which Accept may ask for instead of
// the JSON envelope.
var bareMediaTypes = []string{"text/plain", "application/xml", "text/csv", "application/x-ofx", "application/vnd.intu.qbo"}

// convert describes POST /v1/convert as gateway/convert.go serves it: a JSON
// envelope or a raw message in, the envelope or the bare document out.
func (b *builder) convert(op *openapi3.Operation) {
	raw := func(desc string) *openapi3.MediaType {
		return &openapi3.MediaType{Schema: stringSchema(desc, func(s *openapi3.Schema) { s.MinLength = 1 })}
	}
	desc := "The message: a JSON envelope, or the raw message with its own media type (then from, to and the options come from the query or the X-Service-* headers)."
	op.RequestBody = &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{
		Description: desc,
		Required:    true,
		Content: openapi3.Content{
			"application/json":       {Schema: &openapi3.SchemaRef{Ref: schemas + "ConvertEnvelope"}},
			"text/plain":             raw("A SWIFT MT message."),
			"application/x-swift-mt": raw("A SWIFT MT message."),
			"application/xml":        raw("An ISO 20022 (MX) document."),
		},
	}}
	var params openapi3.Parameters
	for _, p := range op.Parameters {
		if p.Ref != "" { // the edge's own headers, added above
			params = append(params, p)
		}
	}
	query := []struct{ name, desc string }{
		{"to", "Target type, when not in the envelope."},
		{"from", "Source type, when not in the envelope; detected when absent."},
		{"toVersion", "Target message version (e.g. camt.053.001.02)."},
		{"translitProfile", "Raw bodies: option translitProfile."},
		{"field86Profile", "Raw bodies: option field86Profile."},
		{"targetVersion", "Raw bodies: option targetVersion."},
		{"dateFormat", "Raw bodies: option dateFormat."},
		{"ofxVersion", "Raw bodies: option ofxVersion."},
		{"intuBid", "Raw bodies: option intuBid."},
	}
	for _, q := range query {
		p := openapi3.NewQueryParameter(q.name)
		p.Description, p.Schema = q.desc, stringSchema("", nil)
		params = append(params, &openapi3.ParameterRef{Value: p})
	}
	strict := openapi3.NewQueryParameter("strict")
	strict.Description, strict.Schema = "Raw bodies: option strict.", &openapi3.SchemaRef{Value: openapi3.NewBoolSchema()}
	params = append(params, &openapi3.ParameterRef{Value: strict})
	for _, h := range []struct{ name, desc string }{
		{"X-Service-From", "Source type, when neither the envelope nor the query gives one."},
		{"X-Service-To", "Target type, when neither the envelope nor the query gives one."},
		{"X-Service-To-Version", "Target message version, when the query gives none."},
	} {
		p := openapi3.NewHeaderParameter(h.name)
		p.Description, p.Schema = h.desc, stringSchema("", nil)
		params = append(params, &openapi3.ParameterRef{Value: p})
	}
	op.Parameters = params
	op.Description += "\n\nAccept picks the answer: application/json (the default, also for */*) is the envelope; the target's own media type " +
		"(" + strings.Join(bareMediaTypes, ", ") + ") is the bare document with X-Service-Warnings, X-Service-Warnings-Link and, " +
		"for an MT target over several messages, X-Service-Pages; anything else is 406 not-acceptable."

	ok := op.Responses.Value("200").Value
	content := openapi3.Content{"application/json": {Schema: &openapi3.SchemaRef{Ref: schemas + "ConvertResponse"}}}
	for _, mt := range bareMediaTypes {
		content[mt] = &openapi3.MediaType{Schema: stringSchema("The converted document.", nil)}
	}
	ok.Content = content
	for _, h := range []string{"X-Service-Warnings", "X-Service-Warnings-Link", "X-Service-Pages"} {
		ok.Headers[h] = &openapi3.HeaderRef{Ref: headers + h}
	}
}

// openapi describes GET /v1/openapi.json, served from the embedded file.
func (b *builder) openapi(op *openapi3.Operation) {
	ok := op.Responses.Value("200").Value
	desc := "This document."
	ok.Description = &desc
	ok.Content = openapi3.NewContentWithJSONSchema(&openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "An OpenAPI 3.0 document.",
		Required:    []string{"openapi", "info", "paths"},
	})
	ok.Headers["ETag"] = &openapi3.HeaderRef{Ref: headers + "ETag"}
	ok.Headers["Cache-Control"] = &openapi3.HeaderRef{Ref: headers + "Cache-Control-Document"}
	nm := "Not modified: If-None-Match named the current ETag."
	op.Responses.Set("304", &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: &nm,
		Headers:     headerRefs("X-Request-Id", "ETag"),
	}})
	inm := openapi3.NewHeaderParameter("If-None-Match")
	inm.Description, inm.Schema = "An ETag from an earlier answer.", stringSchema("", nil)
	op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: inm})
}

func header(desc string, required bool, schema *openapi3.SchemaRef) *openapi3.HeaderRef {
	return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{Description: desc, Required: required, Schema: schema}}}
}

func headerRefs(names ...string) openapi3.Headers {
	hs := openapi3.Headers{}
	for _, n := range names {
		hs[n] = &openapi3.HeaderRef{Ref: headers + n}
	}
	return hs
}

func stringSchema(desc string, f func(*openapi3.Schema)) *openapi3.SchemaRef {
	s := openapi3.NewStringSchema()
	s.Description = desc
	if f != nil {
		f(s)
	}
	return &openapi3.SchemaRef{Value: s}
}

func boolSchema(desc string) *openapi3.SchemaRef {
	s := openapi3.NewBoolSchema()
	s.Description = desc
	return &openapi3.SchemaRef{Value: s}
}

func intSchema(desc string, f func(*openapi3.Schema)) *openapi3.SchemaRef {
	s := openapi3.NewIntegerSchema()
	s.Description = desc
	if f != nil {
		f(s)
	}
	return &openapi3.SchemaRef{Value: s}
}

func nonNegative(s *openapi3.Schema) { s.Min = ptr(0.0) }

func ptr[T any](v T) *T { return &v }

func quote(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
