package jobs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
)

// The webhook endpoint routes: create, list, update, delete, the
// deliveries with their attempts, resend, test, rotate and enable. Every
// one acts on the caller's endpoints of the caller's mode: another mode's
// or another tenant's id is absent (404).

// WebhookSettings are an endpoint's settings as a request gives them.
type WebhookSettings struct {
	URL         string
	Description string
	// EventTypes: known names (EventTypes), or none or "*" for every type.
	EventTypes []string
}

// EndpointCreated is CreateWebhook's answer; Secret is shown only here.
type EndpointCreated struct {
	Endpoint Endpoint
	Secret   string
}

// CreateWebhook registers an endpoint for the caller and returns its new
// secret.
func (s *Service) CreateWebhook(ctx context.Context, c Caller, in WebhookSettings) (EndpointCreated, error) {
	if err := s.check(c); err != nil {
		return EndpointCreated{}, err
	}
	u, err := s.checkURL(ctx, in.URL)
	if err != nil {
		return EndpointCreated{}, err
	}
	types, err := eventTypes(in.EventTypes, "event_types")
	if err != nil {
		return EndpointCreated{}, err
	}
	if err := checkText(in.Description, "description", MaxDescriptionLen); err != nil {
		return EndpointCreated{}, err
	}
	// A soft limit: two concurrent creations may pass it by one, which
	// costs nothing worse than one more delivery per job.
	have, err := s.store.ListEndpoints(ctx, c.AccountID)
	if err != nil {
		return EndpointCreated{}, s.internal("list endpoints", err)
	}
	if len(ofMode(have, c.Mode)) >= MaxEndpoints {
		return EndpointCreated{}, fieldProblem(problem.Conflict,
			fmt.Sprintf("an account may have at most %d webhook endpoints in %s mode; delete one first", MaxEndpoints, modeOf(c.Mode)), "url")
	}
	secret, err := newSecret()
	if err != nil {
		return EndpointCreated{}, s.internal("secret", err)
	}
	e := Endpoint{ID: uuid.NewString(), AccountID: c.AccountID, Mode: modeOf(c.Mode), URL: u, Description: in.Description,
		EventTypes: types, Status: EndpointActive, CreatedAt: s.timestamp()}
	if e.Secret, err = s.keys.Seal([]byte(secret), secretAAD(e.ID)); err != nil {
		return EndpointCreated{}, s.internal("seal secret", err)
	}
	if err := s.store.CreateEndpoint(ctx, e); err != nil {
		return EndpointCreated{}, s.internal("create endpoint", err)
	}
	return EndpointCreated{Endpoint: s.shown(e), Secret: secret}, nil
}

// newSecret is a signing secret: "whsec_" and 32 random bytes.
func newSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// shown is e as answers carry it: without its sealed secrets, and with
// PrevSecretUntil only while the overlap lasts.
func (s *Service) shown(e Endpoint) Endpoint {
	e.Secret, e.PrevSecret = nil, nil
	if !s.now().Before(e.PrevSecretUntil) {
		e.PrevSecretUntil = time.Time{}
	}
	return e
}

// ListWebhooks returns the caller's endpoints (their secrets cleared).
func (s *Service) ListWebhooks(ctx context.Context, c Caller) ([]Endpoint, error) {
	if err := s.check(c); err != nil {
		return nil, err
	}
	es, err := s.store.ListEndpoints(ctx, c.AccountID)
	if err != nil {
		return nil, s.internal("list endpoints", err)
	}
	es = ofMode(es, c.Mode)
	for i := range es {
		es[i] = s.shown(es[i])
	}
	return es, nil
}

func errNoEndpoint() error { return problem.New(problem.NotFound, "no such webhook endpoint") }

// endpoint returns the caller's endpoint id of the caller's mode; another
// mode's is as absent as another tenant's.
func (s *Service) endpoint(ctx context.Context, c Caller, id string) (Endpoint, error) {
	if err := s.check(c); err != nil {
		return Endpoint{}, err
	}
	if uuid.Validate(id) != nil {
		return Endpoint{}, errNoEndpoint()
	}
	e, err := s.store.EndpointByID(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && (e.AccountID != c.AccountID || modeOf(e.Mode) != modeOf(c.Mode))) {
		return Endpoint{}, errNoEndpoint()
	}
	if err != nil {
		return Endpoint{}, s.internal("endpoint", err)
	}
	return e, nil
}

// owned maps a store's ErrNotFound for the caller's endpoint (deleted in
// between) to 404.
func (s *Service) owned(op string, e Endpoint, err error) (Endpoint, error) {
	if errors.Is(err, ErrNotFound) {
		return Endpoint{}, errNoEndpoint()
	}
	if err != nil {
		return Endpoint{}, s.internal(op, err)
	}
	return s.shown(e), nil
}

// DeleteWebhook removes one of the caller's endpoints; pending deliveries to
// it are abandoned when next due.
func (s *Service) DeleteWebhook(ctx context.Context, c Caller, id string) error {
	if _, err := s.endpoint(ctx, c, id); err != nil {
		return err
	}
	_, err := s.owned("delete endpoint", Endpoint{}, s.store.DeleteEndpoint(ctx, c.AccountID, id))
	return err
}

// WebhookUpdate is UpdateWebhook's request: the nil members stay as they
// are. An empty EventTypes list is refused (send "*" for every type).
type WebhookUpdate struct {
	URL, Description *string
	EventTypes       []string
	SetEventTypes    bool
}

// UpdateWebhook changes an endpoint's url, description or event types,
// with the same rules as at creation (the URL's address check included).
func (s *Service) UpdateWebhook(ctx context.Context, c Caller, id string, in WebhookUpdate) (Endpoint, error) {
	if _, err := s.endpoint(ctx, c, id); err != nil {
		return Endpoint{}, err
	}
	var u EndpointUpdate
	if in.URL != nil {
		v, err := s.checkURL(ctx, *in.URL)
		if err != nil {
			return Endpoint{}, err
		}
		u.URL = &v
	}
	if in.Description != nil {
		if err := checkText(*in.Description, "description", MaxDescriptionLen); err != nil {
			return Endpoint{}, err
		}
		u.Description = in.Description
	}
	if in.SetEventTypes {
		if len(in.EventTypes) == 0 {
			return Endpoint{}, fieldProblem(problem.InvalidInput, `event_types must name at least one type, or "*" for every type`, "event_types")
		}
		types, err := eventTypes(in.EventTypes, "event_types")
		if err != nil {
			return Endpoint{}, err
		}
		u.EventTypes = &types
	}
	e, err := s.store.UpdateEndpoint(ctx, c.AccountID, id, u)
	return s.owned("update endpoint", e, err)
}

// SecretRotated is RotateWebhookSecret's answer: the new secret, shown only
// here, and when the one it replaced stops signing.
type SecretRotated struct {
	Endpoint Endpoint
	Secret   string
}

// RotateWebhookSecret gives an endpoint a new secret. For RotationOverlap
// every delivery is signed with both, so a receiver can switch to the new
// one without refusing a delivery; then only the new one signs. A second
// rotation within the overlap drops the oldest secret at once.
func (s *Service) RotateWebhookSecret(ctx context.Context, c Caller, id string) (SecretRotated, error) {
	if _, err := s.endpoint(ctx, c, id); err != nil {
		return SecretRotated{}, err
	}
	secret, err := newSecret()
	if err != nil {
		return SecretRotated{}, s.internal("secret", err)
	}
	sealed, err := s.keys.Seal([]byte(secret), secretAAD(id))
	if err != nil {
		return SecretRotated{}, s.internal("seal secret", err)
	}
	e, err := s.store.RotateSecret(ctx, c.AccountID, id, sealed, s.timestamp().Add(RotationOverlap))
	if e, err = s.owned("rotate secret", e, err); err != nil {
		return SecretRotated{}, err
	}
	return SecretRotated{Endpoint: e, Secret: secret}, nil
}

// EnableWebhook makes a disabled endpoint active again with its failure
// count reset; an active one is answered as it is. Deliveries abandoned
// while it was disabled stay so (resend them).
func (s *Service) EnableWebhook(ctx context.Context, c Caller, id string) (Endpoint, error) {
	if _, err := s.endpoint(ctx, c, id); err != nil {
		return Endpoint{}, err
	}
	e, err := s.store.EnableEndpoint(ctx, c.AccountID, id)
	return s.owned("enable endpoint", e, err)
}

// Delivery listing bounds.
const (
	DefaultDeliveryPage = 20
	MaxDeliveryPage     = 100
)

// DeliveryView is a delivery with its attempts, as the routes show it.
type DeliveryView struct {
	Delivery
	Attempts []AttemptRecord
}

// DeliveryPage is one page of ListDeliveries.
type DeliveryPage struct {
	Deliveries []DeliveryView
	// NextCursor continues the list; "" at its end.
	NextCursor string
}

// deliveryStatuses are the statuses a list may be filtered by.
var deliveryStatuses = []string{DeliveryPending, DeliverySucceeded, DeliveryFailed, DeliveryAbandoned}

type deliveryPos struct {
	CreatedAt int64  `json:"c"` // Unix microseconds
	ID        string `json:"i"`
}

// ListDeliveries returns a page of an endpoint's deliveries, newest first,
// each with its attempts; status ("" for all) filters them.
func (s *Service) ListDeliveries(ctx context.Context, c Caller, endpointID, status, cur string, pageSize *int32) (DeliveryPage, error) {
	if _, err := s.endpoint(ctx, c, endpointID); err != nil {
		return DeliveryPage{}, err
	}
	if status != "" && !slices.Contains(deliveryStatuses, status) {
		return DeliveryPage{}, fieldProblem(problem.InvalidInput, "status must be pending, succeeded, failed or abandoned", "status")
	}
	size := DefaultDeliveryPage
	if pageSize != nil {
		if *pageSize < 1 || *pageSize > MaxDeliveryPage {
			return DeliveryPage{}, fieldProblem(problem.InvalidInput, fmt.Sprintf("page_size must be 1 to %d", MaxDeliveryPage), "page_size")
		}
		size = int(*pageSize)
	}
	// The cursor is valid for this endpoint and filter only.
	scope := "jobs/webhook-deliveries|" + c.AccountID + "|" + endpointID + "|" + status
	f := DeliveryFilter{AccountID: c.AccountID, EndpointID: endpointID, Status: status}
	if cur != "" {
		var p deliveryPos
		if err := s.cursors.Decode(cur, scope, &p); err != nil {
			return DeliveryPage{}, fieldProblem(problem.InvalidInput, "invalid value for parameter cursor", "cursor")
		}
		f.Before = &Position{CreatedAt: time.UnixMicro(p.CreatedAt).UTC(), ID: p.ID}
	}
	ds, err := s.store.ListDeliveries(ctx, f, size+1)
	if err != nil {
		return DeliveryPage{}, s.internal("list deliveries", err)
	}
	var page DeliveryPage
	if len(ds) > size {
		ds = ds[:size]
		last := ds[len(ds)-1]
		if page.NextCursor, err = s.cursors.Encode(scope, deliveryPos{last.CreatedAt.UnixMicro(), last.ID}); err != nil {
			return DeliveryPage{}, s.internal("cursor", err)
		}
	}
	for _, d := range ds {
		v, err := s.deliveryView(ctx, d)
		if err != nil {
			return DeliveryPage{}, err
		}
		page.Deliveries = append(page.Deliveries, v)
	}
	return page, nil
}

func (s *Service) deliveryView(ctx context.Context, d Delivery) (DeliveryView, error) {
	as, err := s.store.DeliveryAttempts(ctx, d.ID)
	if err != nil {
		return DeliveryView{}, s.internal("delivery attempts", err)
	}
	d.Body = nil // the event's body is the receiver's to keep; the routes show its metadata
	return DeliveryView{Delivery: withEventID(d), Attempts: as}, nil
}

func errNoDelivery() error { return problem.New(problem.NotFound, "no such delivery") }

// delivery returns the caller's delivery id to the endpoint endpointID.
func (s *Service) delivery(ctx context.Context, c Caller, endpointID, id string) (Endpoint, Delivery, error) {
	e, err := s.endpoint(ctx, c, endpointID)
	if err != nil {
		return Endpoint{}, Delivery{}, err
	}
	if uuid.Validate(id) != nil {
		return Endpoint{}, Delivery{}, errNoDelivery()
	}
	d, err := s.store.Delivery(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && (d.AccountID != c.AccountID || d.EndpointID != e.ID)) {
		return Endpoint{}, Delivery{}, errNoDelivery()
	}
	if err != nil {
		return Endpoint{}, Delivery{}, s.internal("delivery", err)
	}
	return e, d, nil
}

// GetDelivery returns one of an endpoint's deliveries with its attempts.
func (s *Service) GetDelivery(ctx context.Context, c Caller, endpointID, id string) (DeliveryView, error) {
	_, d, err := s.delivery(ctx, c, endpointID, id)
	if err != nil {
		return DeliveryView{}, err
	}
	return s.deliveryView(ctx, d)
}

// ResendDelivery sends a delivery's event again, to the same endpoint: a
// new delivery (a new id and attempt chain on the retry schedule) with the
// same event id and body, so a receiver deduplicating on either sees a
// repeat.
func (s *Service) ResendDelivery(ctx context.Context, c Caller, endpointID, id string) (DeliveryView, error) {
	e, d, err := s.delivery(ctx, c, endpointID, id)
	if err != nil {
		return DeliveryView{}, err
	}
	d = withEventID(d)
	now := s.timestamp()
	return s.manual(ctx, e, Delivery{
		ID: uuid.NewString(), AccountID: c.AccountID, EndpointID: e.ID, JobID: d.JobID, Event: d.Event, EventID: d.EventID,
		Origin: OriginResend, ResendOf: d.ID, Body: d.Body, Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now,
	})
}

// testBody is the body of a webhook.test event.
type testBody struct {
	Event      string `json:"event"`
	ID         string `json:"id"`
	Test       bool   `json:"test"`
	EndpointID string `json:"endpoint_id"`
	CreatedAt  string `json:"created_at"`
	Message    string `json:"message"`
}

// SendTestEvent sends a webhook.test event to an endpoint, whatever event
// types it subscribes to, signed and retried as any delivery.
func (s *Service) SendTestEvent(ctx context.Context, c Caller, endpointID string) (DeliveryView, error) {
	e, err := s.endpoint(ctx, c, endpointID)
	if err != nil {
		return DeliveryView{}, err
	}
	now := s.timestamp()
	evID := uuid.NewString()
	body, err := json.Marshal(testBody{Event: EventWebhookTest, ID: evID, Test: true, EndpointID: e.ID, CreatedAt: timestamp(now),
		Message: "This is a test event sent from the API or the portal. It carries no data and needs no action."})
	if err != nil {
		return DeliveryView{}, s.internal("test body", err)
	}
	return s.manual(ctx, e, Delivery{
		ID: uuid.NewString(), AccountID: c.AccountID, EndpointID: e.ID, Event: EventWebhookTest, EventID: evID,
		Origin: OriginTest, Body: body, Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now,
	})
}

// manual stores a resend or test delivery for e, at most MaxPendingManual
// pending per endpoint; the next delivery pass (every second) sends it.
// A disabled endpoint is refused: the delivery would only be abandoned.
func (s *Service) manual(ctx context.Context, e Endpoint, d Delivery) (DeliveryView, error) {
	if e.Status != EndpointActive {
		return DeliveryView{}, problem.New(problem.Conflict, "the endpoint is disabled; enable it first (POST /v1/webhooks/{id}/enable)")
	}
	err := s.store.CreateManualDelivery(ctx, d, MaxPendingManual)
	if errors.Is(err, ErrLimit) {
		return DeliveryView{}, problem.New(problem.RateLimited,
			fmt.Sprintf("this endpoint already has %d resent or test deliveries pending; wait until one finishes", MaxPendingManual)).WithRetryAfter(60)
	}
	if err != nil {
		return DeliveryView{}, s.internal("create delivery", err)
	}
	d.Body = nil
	return DeliveryView{Delivery: d}, nil
}

// withEventID fills the event id of a delivery stored before event ids
// were (its job's event id, as the fan-out derives it now).
func withEventID(d Delivery) Delivery {
	if d.EventID == "" && d.JobID != "" {
		d.EventID = eventID(d.Event, d.JobID)
	}
	if d.Origin == "" {
		d.Origin = OriginEvent
	}
	return d
}
