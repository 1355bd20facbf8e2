// Package problem holds the one enumeration of error types the platform answers
// with, the RFC 9457 problem document, and the mapping between problems and gRPC
// status errors. Services return problem.Error values, or *Problem values from a
// plain-Go root (package problemdoc, re-exported here) that their gRPC layer
// passes through ToGRPC; the gateway turns any gRPC error back into a problem
// document with Write. Nothing else maps errors.
package problem

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ledgerlane/platform/pkg/problemdoc"
)

// The enumeration and the document live in package problemdoc (plain Go, for
// service roots); these aliases keep them available here, next to the gRPC
// and HTTP mappings.

// Type is a stable slug: the `type` member of every problem document.
type Type = problemdoc.Type

const (
	InvalidInput        = problemdoc.InvalidInput
	Unauthorized        = problemdoc.Unauthorized
	ForbiddenScope      = problemdoc.ForbiddenScope
	WritesDisabled      = problemdoc.WritesDisabled
	FieldHidden         = problemdoc.FieldHidden
	DataExcluded        = problemdoc.DataExcluded
	NotFound            = problemdoc.NotFound
	MethodNotAllowed    = problemdoc.MethodNotAllowed
	NotAcceptable       = problemdoc.NotAcceptable
	VersionConflict     = problemdoc.VersionConflict
	SplitTransaction    = problemdoc.SplitTransaction
	NoProviderValue     = problemdoc.NoProviderValue
	CategoryLimit       = problemdoc.CategoryLimit
	SystemCategory      = problemdoc.SystemCategory
	CategoryHasChildren = problemdoc.CategoryHasChildren
	IdempotencyConflict = problemdoc.IdempotencyConflict
	IdempotencyInFlight = problemdoc.IdempotencyInFlight
	Conflict            = problemdoc.Conflict
	MessageTooLarge     = problemdoc.MessageTooLarge
	FieldImmutable      = problemdoc.FieldImmutable
	Unprocessable       = problemdoc.Unprocessable
	RateLimited         = problemdoc.RateLimited
	QuotaExceeded       = problemdoc.QuotaExceeded
	Internal            = problemdoc.Internal
	NotImplemented      = problemdoc.NotImplemented
	Unavailable         = problemdoc.Unavailable
	BatchUnavailable    = problemdoc.BatchUnavailable
)

// Types lists every slug, for documentation tests.
func Types() []Type { return problemdoc.Types() }

// Problem is an RFC 9457 problem document (see problemdoc.Problem).
type Problem = problemdoc.Problem

// New builds a problem of type t.
func New(t Type, detail string) *Problem { return problemdoc.New(t, detail) }

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
