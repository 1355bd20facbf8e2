// Package problem holds the one enumeration of error types the platform answers
// with, the RFC 9457 problem document, and the mapping between problems and gRPC
// status errors. Services return problem.Error values; the gateway turns any
// gRPC error back into a problem document with Write. Nothing else maps errors.
package problem

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Type is a stable slug: the `type` member of every problem document. Clients
// switch on it; never rename one. docs/errors.md lists them all.
type Type string

const (
	InvalidInput        Type = "invalid-input"
	Unauthorized        Type = "unauthorized"
	ForbiddenScope      Type = "forbidden-scope"
	WritesDisabled      Type = "writes-disabled"
	FieldHidden         Type = "field-hidden"
	DataExcluded        Type = "data-excluded"
	NotFound            Type = "not-found"
	MethodNotAllowed    Type = "method-not-allowed"
	NotAcceptable       Type = "not-acceptable"
	VersionConflict     Type = "version-conflict"
	SplitTransaction    Type = "split-transaction"
	NoProviderValue     Type = "no-provider-value"
	CategoryLimit       Type = "category-limit-reached"
	SystemCategory      Type = "system-category"
	CategoryHasChildren Type = "category-has-subcategories"
	IdempotencyConflict Type = "idempotency-conflict"
	IdempotencyInFlight Type = "idempotency-in-flight"
	Conflict            Type = "conflict"
	MessageTooLarge     Type = "message-too-large"
	FieldImmutable      Type = "field-immutable"
	Unprocessable       Type = "unprocessable"
	RateLimited         Type = "rate-limited"
	QuotaExceeded       Type = "quota-exceeded"
	Internal            Type = "internal"
	NotImplemented      Type = "not-implemented"
	Unavailable         Type = "unavailable"
	BatchUnavailable    Type = "batch-unavailable"
)

type meta struct {
	status int
	title  string
}

var registry = map[Type]meta{
	InvalidInput:        {http.StatusBadRequest, "Invalid input"},
	Unauthorized:        {http.StatusUnauthorized, "Unauthorized"},
	ForbiddenScope:      {http.StatusForbidden, "Missing scope"},
	WritesDisabled:      {http.StatusForbidden, "Writes are not enabled for this connection"},
	FieldHidden:         {http.StatusForbidden, "Field hidden by connection privacy settings"},
	DataExcluded:        {http.StatusForbidden, "Data excluded by connection privacy settings"},
	NotFound:            {http.StatusNotFound, "Not found"},
	MethodNotAllowed:    {http.StatusMethodNotAllowed, "Method not allowed"},
	NotAcceptable:       {http.StatusNotAcceptable, "Not acceptable"},
	VersionConflict:     {http.StatusConflict, "Version conflict"},
	SplitTransaction:    {http.StatusConflict, "Split transaction"},
	NoProviderValue:     {http.StatusConflict, "No bank-recorded value"},
	CategoryLimit:       {http.StatusConflict, "Category limit reached"},
	SystemCategory:      {http.StatusConflict, "System category"},
	CategoryHasChildren: {http.StatusConflict, "Category has subcategories"},
	IdempotencyConflict: {http.StatusConflict, "Idempotency key reused"},
	IdempotencyInFlight: {http.StatusConflict, "Request with this idempotency key in flight"},
	Conflict:            {http.StatusConflict, "Conflict"},
	MessageTooLarge:     {http.StatusRequestEntityTooLarge, "Message too large"},
	FieldImmutable:      {http.StatusUnprocessableEntity, "Field cannot be changed"},
	Unprocessable:       {http.StatusUnprocessableEntity, "Unprocessable message"},
	RateLimited:         {http.StatusTooManyRequests, "Rate limited"},
	QuotaExceeded:       {http.StatusTooManyRequests, "Quota exceeded"},
	Internal:            {http.StatusInternalServerError, "Internal error"},
	NotImplemented:      {http.StatusNotImplemented, "Not implemented yet"},
	Unavailable:         {http.StatusServiceUnavailable, "Service unavailable"},
	BatchUnavailable:    {http.StatusServiceUnavailable, "Batch conversion unavailable"},
}

// Types lists every slug, for documentation tests.
func Types() []Type {
	out := make([]Type, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	return out
}

// Status is the HTTP status a type answers with; unknown types are 500.
func (t Type) Status() int {
	if m, ok := registry[t]; ok {
		return m.status
	}
	return http.StatusInternalServerError
}

// Title is the short human summary of a type.
func (t Type) Title() string {
	if m, ok := registry[t]; ok {
		return m.title
	}
	return registry[Internal].title
}

// Known reports whether t is one of the enumerated slugs.
func (t Type) Known() bool { _, ok := registry[t]; return ok }

// Problem is an RFC 9457 problem document. Field and RetryAfter are extension
// members: field names the request member at fault, retry_after mirrors the
// Retry-After header in seconds.
type Problem struct {
	Type       Type   `json:"type"`
	Title      string `json:"title"`
	Status     int    `json:"status"`
	Detail     string `json:"detail,omitempty"`
	Instance   string `json:"instance,omitempty"`
	Field      string `json:"field,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"`
}

// New builds a problem of type t.
func New(t Type, detail string) *Problem {
	return &Problem{Type: t, Title: t.Title(), Status: t.Status(), Detail: detail}
}

// WithField names the offending request member.
func (p *Problem) WithField(f string) *Problem { p.Field = f; return p }

// ContentType is the media type of problem documents.
const ContentType = "application/problem+json"

// Write sends p. instance is the request id; Retry-After is set when p carries one.
func Write(w http.ResponseWriter, p *Problem, instance string) {
	p.Instance = instance
	if p.Title == "" {
		p.Title = p.Type.Title()
	}
	if p.Status == 0 {
		p.Status = p.Type.Status()
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-store")
	if p.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
