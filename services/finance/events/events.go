// Package events turns the finance service's committed changes into the
// webhook events of docs/webhooks.md (transactions.sync_updates_available,
// connection.status_changed, recurring.detected, and
// budget.threshold_reached for the budgets package) and publishes them
// through a Publisher port (NATS JetStream in production: pkg/eventbus).
// It implements finance.Notifier, and budgets.AlertPublisher (so it may
// import budgets, for the alert's type; budgets never imports it). Plain
// Go, like the root.
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

var (
	_ finance.Notifier       = (*Service)(nil)
	_ budgets.AlertPublisher = (*Service)(nil)
)

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
	if err := s.send(ctx, u, uuid.NewString(), typ, key, body); err != nil {
		s.log.WarnContext(ctx, "finance events: publish", "event", typ, "user_id", u.ID, "err", err)
	}
}

// send publishes one event with id.
func (s *Service) send(ctx context.Context, u finance.User, id, typ, key string, body func(envelope) any) error {
	now := s.now().UTC()
	head := envelope{Type: typ, ID: id, CreatedAt: now.Format(time.RFC3339Nano), UserID: u.ID}
	if g, ok := strings.CutPrefix(key, u.ID+"|"); ok {
		head.GrantID = g
	}
	b, err := json.Marshal(body(head))
	if err != nil {
		return err
	}
	return s.pub.Publish(ctx, Event{ID: head.ID, Type: typ, AccountID: u.OwnerAccountID, Mode: finance.ModeOf(u.Mode),
		CoalesceKey: coalesceKey(typ, key), Body: b})
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
	return s.send(ctx, u, id, TypeBudgetThreshold, u.ID+"|"+a.GrantID, func(h envelope) any {
		return BudgetThresholdBody{envelope: h, BudgetID: a.BudgetID, GroupID: a.GroupID, Threshold: a.Threshold,
			PeriodStart: start, PeriodEnd: end}
	})
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
