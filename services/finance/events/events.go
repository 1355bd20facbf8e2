// Package events turns the finance service's committed changes into the
// webhook events of docs/webhooks.md (transactions.sync_updates_available,
// connection.status_changed, recurring.detected) and publishes them
// through a Publisher port (NATS JetStream in production: pkg/eventbus).
// It implements finance.Notifier. Plain Go, like the root.
//
// Privacy (docs/privacy.md): an event goes to the tenant that owns the
// finance user, in the user's mode, once per grant that can see the change:
// a change only on accounts a grant excludes makes no event for that grant,
// and no body names an account, a category, an amount or any text.
package events

import (
	"context"
	"encoding/json"
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
	Clock     finance.Clock
	Log       *slog.Logger
}

// Service implements finance.Notifier.
type Service struct {
	store Store
	pub   Publisher
	now   finance.Clock
	log   *slog.Logger
}

var _ finance.Notifier = (*Service)(nil)

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

// RecurringBody is recurring.detected: the new streams the grant sees.
type RecurringBody struct {
	envelope
	StreamIDs []string `json:"stream_ids"`
	Count     int      `json:"count"`
}

// owner loads the user and its grants; ok is false for a user no tenant
// owns (from before owners), which has no endpoints.
func (s *Service) owner(ctx context.Context, userID string) (finance.User, []finance.Grant, bool) {
	u, err := s.store.GetUser(ctx, userID)
	if err != nil {
		s.log.WarnContext(ctx, "finance events: user", "user_id", userID, "err", err)
		return u, nil, false
	}
	if u.OwnerAccountID == "" {
		return u, nil, false
	}
	gs, err := s.store.ListGrants(ctx, userID)
	if err != nil {
		s.log.WarnContext(ctx, "finance events: grants", "user_id", userID, "err", err)
		return u, nil, false
	}
	return u, gs, true
}

// sees reports whether a grant sees a change on accountIDs (nil: on
// accounts unknown, which every grant may see).
func sees(g finance.Grant, accountIDs []string) bool {
	if accountIDs == nil {
		return true
	}
	return slices.ContainsFunc(accountIDs, func(a string) bool { return !slices.Contains(g.ExcludedAccountIDs, a) })
}

// publish sends one event; a failure is logged (the next change makes the
// next event).
func (s *Service) publish(ctx context.Context, u finance.User, typ, key string, body func(envelope) any) {
	now := s.now().UTC()
	head := envelope{Type: typ, ID: uuid.NewString(), CreatedAt: now.Format(time.RFC3339Nano), UserID: u.ID}
	if g, ok := strings.CutPrefix(key, u.ID+"|"); ok {
		head.GrantID = g
	}
	b, err := json.Marshal(body(head))
	if err == nil {
		err = s.pub.Publish(ctx, Event{ID: head.ID, Type: typ, AccountID: u.OwnerAccountID, Mode: finance.ModeOf(u.Mode),
			CoalesceKey: coalesceKey(typ, key), Body: b})
	}
	if err != nil {
		s.log.WarnContext(ctx, "finance events: publish", "event", typ, "user_id", u.ID, "err", err)
	}
}

// coalesceKey: only sync events coalesce, per user and grant.
func coalesceKey(typ, key string) string {
	if typ != TypeSyncUpdates {
		return ""
	}
	return typ + "|" + key
}

// TransactionsChanged publishes transactions.sync_updates_available for
// each grant that sees a change on accountIDs.
func (s *Service) TransactionsChanged(ctx context.Context, userID string, accountIDs []string) {
	u, gs, ok := s.owner(ctx, userID)
	if !ok {
		return
	}
	for _, g := range gs {
		if !sees(g, accountIDs) {
			continue
		}
		s.publish(ctx, u, TypeSyncUpdates, u.ID+"|"+g.ID, func(h envelope) any { return SyncBody{h} })
	}
}

// GrantChanged publishes transactions.sync_updates_available for the one
// grant whose exclusions or redactions changed: its feed now carries the
// rows it stopped or started seeing (docs/transactions-sync.md). No other
// grant's feed moved. It coalesces with the grant's other sync events.
func (s *Service) GrantChanged(ctx context.Context, userID, grantID string) {
	u, gs, ok := s.owner(ctx, userID)
	if !ok || !slices.ContainsFunc(gs, func(g finance.Grant) bool { return g.ID == grantID }) {
		return
	}
	s.publish(ctx, u, TypeSyncUpdates, u.ID+"|"+grantID, func(h envelope) any { return SyncBody{h} })
}

// ConnectionStatusChanged publishes connection.status_changed once for the
// user: a connection's status is shown to every grant (GET
// /v1/connections), whatever accounts it excludes.
func (s *Service) ConnectionStatusChanged(ctx context.Context, userID, connectionID, old, new, code string) {
	u, _, ok := s.owner(ctx, userID)
	if !ok {
		return
	}
	s.publish(ctx, u, TypeConnectionStatus, u.ID, func(h envelope) any {
		return ConnectionBody{envelope: h, ConnectionID: connectionID, OldStatus: old, NewStatus: new, ErrorCode: code}
	})
}

// RecurringDetected publishes recurring.detected for each grant that sees
// at least one of the new streams, naming only those.
func (s *Service) RecurringDetected(ctx context.Context, userID string, streams map[string]string) {
	u, gs, ok := s.owner(ctx, userID)
	if !ok {
		return
	}
	for _, g := range gs {
		var ids []string
		for id, acct := range streams {
			if !slices.Contains(g.ExcludedAccountIDs, acct) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		slices.Sort(ids)
		s.publish(ctx, u, TypeRecurring, u.ID+"|"+g.ID, func(h envelope) any {
			return RecurringBody{envelope: h, StreamIDs: ids, Count: len(ids)}
		})
	}
}
