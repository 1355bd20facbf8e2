package finance

import "context"

// Notifier is the port through which the finance service announces what
// changed, for the webhook events of docs/webhooks.md (the events package
// implements it: it keeps each announcement as a Note in the outbox, and its
// relay decides which grants may learn of it and publishes). Every method
// is called after the change committed, and never fails the write: a note
// that cannot be stored is logged, and the next change makes the next one.
// Writes that store their Note in their own transaction call only Written.
type Notifier interface {
	// TransactionsChanged: rows of userID on accountIDs changed (nil: on
	// accounts not known to the caller, which every grant may see).
	TransactionsChanged(ctx context.Context, userID string, accountIDs []string)
	// ConnectionStatusChanged: a connection's status moved from old to
	// new; code is the error code of new (empty when active).
	ConnectionStatusChanged(ctx context.Context, userID, connectionID, old, new, code string)
	// RecurringDetected: detection found streams new to userID (id →
	// the account it runs on).
	RecurringDetected(ctx context.Context, userID string, streams map[string]string)
	// GrantChanged: the exclusions or redactions of grantID, one of
	// userID's grants, changed, which moves that grant's change feed (and
	// no other grant's).
	GrantChanged(ctx context.Context, userID, grantID string)
	// Written: a write stored its Note with the change; publish soon.
	Written(ctx context.Context)
}

// nopNotifier announces nothing (no events wired: tests, tools).
type nopNotifier struct{}

func (nopNotifier) TransactionsChanged(context.Context, string, []string)                           {}
func (nopNotifier) ConnectionStatusChanged(context.Context, string, string, string, string, string) {}
func (nopNotifier) RecurringDetected(context.Context, string, map[string]string)                    {}
func (nopNotifier) GrantChanged(context.Context, string, string)                                    {}
func (nopNotifier) Written(context.Context)                                                         {}

// Notify is the notifier changes are announced to.
func (s *Service) Notify() Notifier { return s.notifier }
