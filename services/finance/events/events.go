// Package events turns the finance service's committed changes into the
// webhook events of docs/webhooks.md (transactions.sync_updates_available,
// connection.status_changed, recurring.detected) and publishes them
// through a Publisher port (NATS JetStream in production: pkg/eventbus).
// Its Outbox implements finance.Notifier and keeps each change as a
// finance.Note until its Relay has published the note's events (outbox.go).
// Plain Go, like the root.
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
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/finance"
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
	Log       *slog.Logger
}

// Service turns the outbox's notes into the events of docs/webhooks.md:
// which grants may learn of a change, and the bodies. The relay calls it.
type Service struct {
	store Store
	pub   Publisher
	log   *slog.Logger
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: cfg.Store, pub: cfg.Publisher, log: cfg.Log}
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
	head := envelope{Type: typ, ID: uuid.NewSHA1(eventNamespace, []byte(n.ID+"|"+typ+"|"+key)).String(),
		CreatedAt: n.At.UTC().Format(time.RFC3339Nano), UserID: u.ID}
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
