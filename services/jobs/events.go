package jobs

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ledgerlane/platform/pkg/problem"
)

// EventType is an event type an endpoint may subscribe to.
type EventType struct {
	Name        string
	Description string
	// Announced: known, and subscribable ahead of time, but not sent yet.
	Announced bool
}

// EventTypes is the registry of the event types endpoints choose from, in
// the order they are listed. Adding a type is one line here; an endpoint
// subscribed to every type ("*") receives it from then on.
var EventTypes = []EventType{
	{Name: EventJobCompleted, Description: "A batch conversion job completed (every item succeeded or failed)."},
	// The finance events: the finance service publishes them (pkg/eventbus)
	// and RunDomainFanout fans them out.
	{Name: "transactions.sync_updates_available", Description: "New or changed transactions are ready for /v1/transactions/sync (one pending per user and grant)."},
	{Name: "connection.status_changed", Description: "A bank connection's status changed (e.g. it needs the user to sign in again)."},
	{Name: "budget.threshold_reached", Description: "Spending in a budget group reached one of the budget's alert thresholds (once per grant, group, period and threshold)."},
	{Name: "recurring.detected", Description: "New recurring series (subscriptions, bills, income) were detected."},
}

// EventWebhookTest is the type of the event POST /v1/webhooks/{id}/test
// sends. It is not in EventTypes: no endpoint subscribes to it, and one is
// only ever sent on request, to the endpoint named.
const EventWebhookTest = "webhook.test"

// AllEvents is how an API request or answer writes "every event type, those
// added later included".
const AllEvents = "*"

// Limits of an endpoint's settings.
const (
	MaxDescriptionLen = 200
	// MaxPendingManual is how many resends and test events one endpoint
	// may have pending at once: each costs outbound requests, so a client
	// looping on resend is refused after a few, at the cost of one
	// indexed count (docs/webhooks.md, "Limits").
	MaxPendingManual = 5
	// RotationOverlap is how long a rotated secret still signs deliveries
	// beside the new one.
	RotationOverlap = 24 * time.Hour
)

// eventTypes validates the event_types of a request: each a known type
// (EventTypes) or "*" alone; none, or "*", means every type and is stored
// as an empty list. field names the request member.
func eventTypes(in []string, field string) ([]string, error) {
	if len(in) == 0 || (len(in) == 1 && in[0] == AllEvents) {
		return []string{}, nil
	}
	out := make([]string, 0, len(in))
	for i, name := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		if name == AllEvents {
			return nil, fieldProblem(problem.InvalidInput, `"*" (every event type) must be the only entry`, f)
		}
		if !slices.ContainsFunc(EventTypes, func(t EventType) bool { return t.Name == name }) {
			return nil, fieldProblem(problem.InvalidInput, fmt.Sprintf("%q is not a known event type (GET /v1/webhooks/event-types lists them)", clip(name, 64)), f)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// EventTypesOf is how an answer shows an endpoint's event types: "*" for
// every type.
func EventTypesOf(e Endpoint) []string {
	if len(e.EventTypes) == 0 {
		return []string{AllEvents}
	}
	return slices.Clone(e.EventTypes)
}

// checkText refuses a free-text member that is too long, not UTF-8, or holds
// control characters (it travels in JSON, logs and pages).
func checkText(v, field string, maxLen int) error {
	bad := func(detail string) error { return fieldProblem(problem.InvalidInput, detail, field) }
	if !utf8.ValidString(v) {
		return bad(field + " must be UTF-8")
	}
	if n := utf8.RuneCountInString(v); n > maxLen {
		return bad(fmt.Sprintf("%s has %d characters; at most %d", field, n, maxLen))
	}
	if strings.ContainsFunc(v, unicode.IsControl) {
		return bad(field + " must not contain control characters")
	}
	return nil
}

// clip shortens what a client sent before quoting it back.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
