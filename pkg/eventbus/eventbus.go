// Package eventbus is the contract of the domain events a service publishes
// for jobs' webhook fan-out (the finance events of docs/webhooks.md): the
// envelope, the JetStream stream and one subject per event type, and the
// publisher. Services never import each other; both sides import this.
package eventbus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerlane/platform/pkg/tracing"
)

// Envelope is one domain event on the bus.
type Envelope struct {
	// ID is the event id (the X-Service-Event-Id of its deliveries) and the
	// JetStream message id, so a republish within Duplicates is dropped
	// and the fan-out finds a redelivered event's deliveries by it.
	ID   string `json:"id"`
	Type string `json:"type"`
	// AccountID is the tenant whose endpoints receive it; Mode ("live" or
	// "test") the mode of those endpoints.
	AccountID string `json:"account_id"`
	Mode      string `json:"mode"`
	// CoalesceKey, when set, lets a pending delivery of an earlier event
	// with the same key absorb this one (docs/webhooks.md, "Coalescing").
	CoalesceKey string `json:"coalesce_key,omitempty"`
	// Body is the delivery body, as receivers get it.
	Body json.RawMessage `json:"body"`
}

// Names are the stream and the subject prefix: an event of type t travels
// on <Subject>.<t>.
type Names struct {
	Stream, Subject string
}

// DefaultNames are the production names.
func DefaultNames() Names { return NamesWithPrefix("") }

// NamesWithPrefix returns names isolated by prefix (letters and digits), for
// tests that share one NATS server.
func NamesWithPrefix(p string) Names {
	sp, subj := "", ""
	if p != "" {
		sp, subj = strings.ToUpper(p)+"_", strings.ToLower(p)+"."
	}
	return Names{Stream: sp + "FINANCE_EVENTS", Subject: subj + "finance.events"}
}

// SubjectOf is the subject of events of type t.
func (n Names) SubjectOf(t string) string { return n.Subject + "." + t }

// Duplicates is the stream's de-duplication window (by event id).
const Duplicates = 2 * time.Minute

// MaxAge bounds how long an event waits for the fan-out: one not fanned out
// within a day is dropped (a later change makes the next one).
const MaxAge = 24 * time.Hour

// StreamConfig is the stream both the publisher and the consumer create or
// update (the same configuration, so either may come first): a work queue,
// a message removed once the fan-out acknowledges it.
func StreamConfig(n Names, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: n.Stream, Subjects: []string{n.Subject + ".>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		MaxAge: MaxAge, Duplicates: Duplicates, Replicas: max(1, replicas),
	}
}

// Publisher publishes envelopes on JetStream.
type Publisher struct {
	js       jetstream.JetStream
	names    Names
	replicas int
}

// NewPublisher returns a Publisher; zero names mean DefaultNames.
func NewPublisher(js jetstream.JetStream, names Names, replicas int) *Publisher {
	if names == (Names{}) {
		names = DefaultNames()
	}
	return &Publisher{js: js, names: names, replicas: replicas}
}

// Setup creates or updates the stream.
func (p *Publisher) Setup(ctx context.Context) error {
	if _, err := p.js.CreateOrUpdateStream(ctx, StreamConfig(p.names, p.replicas)); err != nil {
		return fmt.Errorf("eventbus: stream %s: %w", p.names.Stream, err)
	}
	return nil
}

// Publish publishes ev on its type's subject with ev.ID as message id, and
// returns once the stream holds it.
func (p *Publisher) Publish(ctx context.Context, ev Envelope) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	subject := p.names.SubjectOf(ev.Type)
	ctx, hdr, end := tracing.StartPublish(ctx, subject)
	defer end()
	_, err = p.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data, Header: hdr}, jetstream.WithMsgID(ev.ID))
	return err
}

// Decode reads an envelope from a message's data.
func Decode(data []byte) (Envelope, error) {
	var ev Envelope
	err := json.Unmarshal(data, &ev)
	return ev, err
}
