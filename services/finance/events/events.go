// Package events turns the finance service's committed changes into the
// webhook events of docs/webhooks.md (transactions.sync_updates_available,
// connection.status_changed, recurring.detected, and
// budget.threshold_reached for the budgets package) and publishes them
// through a Publisher port (NATS JetStream in production: pkg/eventbus).
// Its Outbox implements finance.Notifier and keeps each change as a
// finance.Note (the kernel's store.go) until its Relay has published the
// note's events (outbox.go).
// The Service also implements budgets.AlertPublisher, which publishes at
// once (the budgets package keeps its own claim), so it may import budgets
// for the alert's type; budgets never imports it. Plain Go, like the root.
//
// Privacy (docs/privacy.md): an event goes to the tenant that owns the
// finance user, in the user's mode, once per grant that can see the change:
// a change only on accounts a grant excludes makes no event for that grant,
// and no body names an account, a category, an amount or any text.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

// The event types, as jobs' registry names them.
const (
	TypeSyncUpdates      = "transactions.sync_updates_available"
	TypeConnectionStatus = "connection.status_changed"
	TypeBudgetThreshold  = "budget.threshold_reached"
	TypeRecurring        = "recurring.detected"
)

// Event is one event to publish.
type Event struct {
	ID, Type string
	// AccountID is the tenant owning the finance user; Mode the user's.
	AccountID, Mode string
	// CoalesceKey: the fan-out keeps at most one delivery with this key
	// waiting per endpoint (docs/webhooks.md, "Coalescing").
	CoalesceKey string
	Body        []byte
}

// Publisher publishes an event; once it returns nil the event will be
// fanned out.
type Publisher interface {
	Publish(ctx context.Context, ev Event) error
}

// Store is what the events need from the finance store.
type Store interface {
	GetUser(ctx context.Context, id string) (finance.User, error)
	// ListGrants returns the user's grants.
	ListGrants(ctx context.Context, userID string) ([]finance.Grant, error)
}

// Config assembles a Service.
type Config struct {
	Store     Store
	Publisher Publisher
	// Clock stamps budget alerts (a note's events carry the note's time).
	Clock finance.Clock
	Log   *slog.Logger
}

// Service turns the outbox's notes into the events of docs/webhooks.md:
// which grants may learn of a change, and the bodies. The relay calls it.
type Service struct {
	store Store
	pub   Publisher
	now   finance.Clock
	log   *slog.Logger
}

var _ budgets.AlertPublisher = (*Service)(nil)

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: cfg.Store, pub: cfg.Publisher, now: cfg.Clock, log: cfg.Log}
}

// envelope is the common head of every body.
type envelope struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	UserID    string `json:"user_id"`
	// GrantID names the grant (and so the client's credential) the event
	// is for; empty for events about the user as a whole.
	GrantID string `json:"grant_id,omitempty"`
}

// SyncBody is transactions.sync_updates_available: no counts (they would
// have to be per grant, and the feed says it all).
type SyncBody struct {
	envelope
}

// ConnectionBody is connection.status_changed.
type ConnectionBody struct {
	envelope
	ConnectionID string `json:"connection_id"`
	OldStatus    string `json:"old_status"`
	NewStatus    string `json:"new_status"`
	// ErrorCode is the new status's code (e.g. login_required), never the
	// provider's message.
	ErrorCode string `json:"error_code,omitempty"`
}

// BudgetThresholdBody is budget.threshold_reached: ids, the threshold and
// the period; never an amount, a name or a category.
type BudgetThresholdBody struct {
	envelope
	BudgetID  string `json:"budget_id"`
	GroupID   string `json:"group_id"`
	Threshold int32  `json:"threshold"`
	// PeriodStart is the period's first day, PeriodEnd the first day after
	// it (YYYY-MM-DD), as on GET /v1/budgets/{id}/progress.
	PeriodStart string `json:"period_start"`
	PeriodEnd   string `json:"period_end"`
}

// RecurringBody is recurring.detected: the new streams the grant sees.
type RecurringBody struct {
	envelope
	StreamIDs []string `json:"stream_ids"`
	Count     int      `json:"count"`
}

// owner loads the user and its grants; ok is false for a user no tenant
// owns (from before owners, or deleted), which has no endpoints. A store
// failure is returned: the relay tries the note again.
func (s *Service) owner(ctx context.Context, userID string) (finance.User, []finance.Grant, bool, error) {
	u, err := s.store.GetUser(ctx, userID)
	if errors.Is(err, finance.ErrNotFound) {
		return u, nil, false, nil
	}
	if err != nil {
		return u, nil, false, fmt.Errorf("finance events: user %s: %w", userID, err)
	}
	if u.OwnerAccountID == "" {
		return u, nil, false, nil
	}
	gs, err := s.store.ListGrants(ctx, userID)
	if err != nil {
		return u, nil, false, fmt.Errorf("finance events: grants of %s: %w", userID, err)
	}
	return u, gs, true, nil
}

// sees reports whether a grant sees a change on accountIDs (nil: on
// accounts unknown, which every grant may see).
func sees(g finance.Grant, accountIDs []string) bool {
	if accountIDs == nil {
		return true
	}
	return slices.ContainsFunc(accountIDs, func(a string) bool { return !slices.Contains(g.ExcludedAccountIDs, a) })
}

// eventNamespace is the UUID namespace of event ids derived from notes.
var eventNamespace = uuid.MustParse("0c5b6f0e-3f7a-4b9e-a1d2-6e8f4c2b7a90")

// event builds one event of note n for key (the user, or user|grant): its
// id and created_at derive from the note, so the note's events are the same
// however often the relay builds them.
func (s *Service) event(n finance.Note, u finance.User, typ, key string, body func(envelope) any) (Event, error) {
	return s.eventWith(u, uuid.NewSHA1(eventNamespace, []byte(n.ID+"|"+typ+"|"+key)).String(), n.At, typ, key, body)
}

// eventWith builds the event id of type typ for key (the user, or
// user|grant), made at at.
func (s *Service) eventWith(u finance.User, id string, at time.Time, typ, key string, body func(envelope) any) (Event, error) {
	head := envelope{Type: typ, ID: id, CreatedAt: at.UTC().Format(time.RFC3339Nano), UserID: u.ID}
	if g, ok := strings.CutPrefix(key, u.ID+"|"); ok {
		head.GrantID = g
	}
	b, err := json.Marshal(body(head))
	if err != nil {
		return Event{}, err
	}
	return Event{ID: head.ID, Type: typ, AccountID: u.OwnerAccountID, Mode: finance.ModeOf(u.Mode),
		CoalesceKey: coalesceKey(typ, key), Body: b}, nil
}

// alertNamespace is the UUID namespace of budget.threshold_reached ids.
var alertNamespace = uuid.MustParse("9a3f6c2e-0b1d-4e57-8c44-71d2e5a0b6f3")

// BudgetThresholdReached publishes budget.threshold_reached for one
// alert of the budgets package, to the grant that reached it (the budgets
// package checked the threshold in that grant's view). The event id is
// derived from the alert's key, so an alert published again after a
// failure that was not one (a timeout after the bus took it) is dropped as
// a duplicate by the bus and by the fan-out (one delivery per event id and
// endpoint). Unlike the other events, a failure is returned: the caller
// releases its claim so the next check sends the alert.
func (s *Service) BudgetThresholdReached(ctx context.Context, a budgets.ThresholdAlert) error {
	u, err := s.store.GetUser(ctx, a.UserID)
	if err != nil {
		return err
	}
	if u.OwnerAccountID == "" {
		return nil
	}
	start, end := a.PeriodStart.Format(finance.DateLayout), a.PeriodEnd.Format(finance.DateLayout)
	id := uuid.NewSHA1(alertNamespace, []byte(strings.Join([]string{a.GrantID, a.BudgetID, a.GroupID, start,
		strconv.Itoa(int(a.Threshold))}, "|"))).String()
	ev, err := s.eventWith(u, id, s.now(), TypeBudgetThreshold, u.ID+"|"+a.GrantID, func(h envelope) any {
		return BudgetThresholdBody{envelope: h, BudgetID: a.BudgetID, GroupID: a.GroupID, Threshold: a.Threshold,
			PeriodStart: start, PeriodEnd: end}
	})
	if err != nil {
		return err
	}
	return s.pub.Publish(ctx, ev)
}

// coalesceKey: only sync events coalesce, per user and grant.
func coalesceKey(typ, key string) string {
	if typ != TypeSyncUpdates {
		return ""
	}
	return typ + "|" + key
}

// EventsOf is the events of note n, each for a grant that may learn of it
// (or the user as a whole): none for a user no tenant owns.
//
//   - transactions changed: transactions.sync_updates_available for each
//     grant that sees a change on the note's accounts;
//   - a grant's settings changed: transactions.sync_updates_available for
//     that grant only (its feed moved, no other's);
//   - a connection's status: connection.status_changed once for the user,
//     since every grant sees its connections (GET /v1/connections);
//   - recurring streams: recurring.detected for each grant that sees at
//     least one of them, naming only those.
func (s *Service) EventsOf(ctx context.Context, n finance.Note) ([]Event, error) {
	u, gs, ok, err := s.owner(ctx, n.UserID)
	if err != nil || !ok {
		return nil, err
	}
	var out []Event
	add := func(typ, key string, body func(envelope) any) error {
		ev, err := s.event(n, u, typ, key, body)
		if err == nil {
			out = append(out, ev)
		}
		return err
	}
	syncBody := func(h envelope) any { return SyncBody{h} }
	switch n.Kind {
	case finance.NoteTransactions:
		for _, g := range gs {
			if sees(g, n.AccountIDs) {
				if err := add(TypeSyncUpdates, u.ID+"|"+g.ID, syncBody); err != nil {
					return nil, err
				}
			}
		}
	case finance.NoteGrant:
		if slices.ContainsFunc(gs, func(g finance.Grant) bool { return g.ID == n.GrantID }) {
			if err := add(TypeSyncUpdates, u.ID+"|"+n.GrantID, syncBody); err != nil {
				return nil, err
			}
		}
	case finance.NoteConnection:
		if err := add(TypeConnectionStatus, u.ID, func(h envelope) any {
			return ConnectionBody{envelope: h, ConnectionID: n.ConnectionID, OldStatus: n.OldStatus, NewStatus: n.NewStatus,
				ErrorCode: n.ErrorCode}
		}); err != nil {
			return nil, err
		}
	case finance.NoteRecurring:
		for _, g := range gs {
			var ids []string
			for id, acct := range n.Streams {
				if !slices.Contains(g.ExcludedAccountIDs, acct) {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				continue
			}
			slices.Sort(ids)
			if err := add(TypeRecurring, u.ID+"|"+g.ID, func(h envelope) any {
				return RecurringBody{envelope: h, StreamIDs: ids, Count: len(ids)}
			}); err != nil {
				return nil, err
			}
		}
	default:
		s.log.WarnContext(ctx, "finance events: unknown note kind, dropped", "kind", n.Kind, "note_id", n.ID)
	}
	return out, nil
}

// Publish publishes every event of note n; the first failure is returned
// (the relay tries the note again; the events already published are sent
// again with the same ids, which the bus and the fan-out drop).
func (s *Service) Publish(ctx context.Context, n finance.Note) error {
	evs, err := s.EventsOf(ctx, n)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if err := s.pub.Publish(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}
