// Package problem is the one enumeration of error types the platform answers
// with and the RFC 9457 problem document, in plain Go: it imports neither
// net/http nor gRPC, so a service root (domain code, testable without a
// network) can return *Problem values and stay free of transports.
//
// The one error path (docs/errors.md): domain code returns a *Problem as its
// error; the gRPC server interceptor in pkg/rpc turns it into a status error
// carrying its type, and the gateway turns that back into a *Problem
// (rpc.Problem) and renders it as application/problem+json. Nothing else maps
// errors.
package problem

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
	DirectDebitRequired Type = "direct-debit-required"
	MessageTooLarge     Type = "message-too-large"
	FieldImmutable      Type = "field-immutable"
	Unprocessable       Type = "unprocessable"
	RateLimited         Type = "rate-limited"
	QuotaExceeded       Type = "quota-exceeded"
	Internal            Type = "internal"
	NotImplemented      Type = "not-implemented"
	Unavailable         Type = "unavailable"
	BatchUnavailable    Type = "batch-unavailable"
	// SyncCursorExpired: a change-feed cursor older than the retention
	// (docs/transactions-sync.md); the client restarts from an empty cursor.
	SyncCursorExpired Type = "sync-cursor-expired"
	// Accounting-platform connections (docs/accounting.md).
	AuthorizationFailed Type = "authorization-failed"
	ConnectionInactive  Type = "connection-not-active"
	PlatformRejected    Type = "platform-rejected"
	PlatformUnavailable Type = "platform-unavailable"
	// The finance sandbox (docs/finance-sandbox.md).
	TestModeOnly        Type = "test-mode-only"
	InvalidCredentials  Type = "invalid-credentials"
	InvalidMFACode      Type = "invalid-mfa-code"
	InstitutionDown     Type = "institution-down"
	SandboxLimitReached Type = "sandbox-limit-reached"
)

// ContentType is the media type of problem documents (RFC 9457).
const ContentType = "application/problem+json"

type meta struct {
	status int
	title  string
}

// HTTP statuses are spelled as numbers: importing net/http for its
// constants would pull the whole HTTP stack into every domain package.
var registry = map[Type]meta{
	InvalidInput:        {400, "Invalid input"},
	Unauthorized:        {401, "Unauthorized"},
	ForbiddenScope:      {403, "Missing scope"},
	WritesDisabled:      {403, "Writes are not enabled for this connection"},
	FieldHidden:         {403, "Field hidden by connection privacy settings"},
	DataExcluded:        {403, "Data excluded by connection privacy settings"},
	NotFound:            {404, "Not found"},
	MethodNotAllowed:    {405, "Method not allowed"},
	NotAcceptable:       {406, "Not acceptable"},
	VersionConflict:     {409, "Version conflict"},
	SplitTransaction:    {409, "Split transaction"},
	NoProviderValue:     {409, "No bank-recorded value"},
	CategoryLimit:       {409, "Category limit reached"},
	SystemCategory:      {409, "System category"},
	CategoryHasChildren: {409, "Category has subcategories"},
	IdempotencyConflict: {409, "Idempotency key reused"},
	IdempotencyInFlight: {409, "Request with this idempotency key in flight"},
	Conflict:            {409, "Conflict"},
	DirectDebitRequired: {409, "Direct debit required"},
	MessageTooLarge:     {413, "Message too large"},
	FieldImmutable:      {422, "Field cannot be changed"},
	Unprocessable:       {422, "Unprocessable message"},
	RateLimited:         {429, "Rate limited"},
	QuotaExceeded:       {429, "Quota exceeded"},
	Internal:            {500, "Internal error"},
	NotImplemented:      {501, "Not implemented yet"},
	Unavailable:         {503, "Service unavailable"},
	BatchUnavailable:    {503, "Batch conversion unavailable"},
	SyncCursorExpired:   {410, "Sync cursor expired"},
	AuthorizationFailed: {400, "Platform authorization failed"},
	ConnectionInactive:  {409, "Connection not active"},
	PlatformRejected:    {502, "Accounting platform refused the request"},
	PlatformUnavailable: {503, "Accounting platform unavailable"},
	TestModeOnly:        {403, "Test mode only"},
	InvalidCredentials:  {422, "Institution refused the credentials"},
	InvalidMFACode:      {422, "Wrong MFA code"},
	// A pretend institution's outage is the answer the sandbox was asked
	// for, not ours: 422, so it is neither retried as a 503 nor counted as
	// a backend failure.
	InstitutionDown:     {422, "Institution unavailable"},
	SandboxLimitReached: {409, "Sandbox limit reached"},
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
	return 500
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
//
// A *Problem is also an error: domain code returns one as is (wrapped or
// not), and pkg/rpc's server interceptor carries it over the wire.
type Problem struct {
	Type       Type   `json:"type"`
	Title      string `json:"title"`
	Status     int    `json:"status"`
	Detail     string `json:"detail,omitempty"`
	Instance   string `json:"instance,omitempty"`
	Field      string `json:"field,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"`
}

// New builds a problem of type t. detail is shown to the client: it must never
// carry message content or secrets.
func New(t Type, detail string) *Problem {
	return &Problem{Type: t, Title: t.Title(), Status: t.Status(), Detail: detail}
}

// WithField names the offending request member (a JSON field, query
// parameter or header, e.g. "expected_version").
func (p *Problem) WithField(f string) *Problem { p.Field = f; return p }

// WithRetryAfter asks the client to wait the given seconds before retrying.
func (p *Problem) WithRetryAfter(seconds int) *Problem { p.RetryAfter = seconds; return p }

// Error lets a *Problem travel as a Go error.
func (p *Problem) Error() string { return string(p.Type) + ": " + p.Detail }
