package finance

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Store keeps the finance data. Callers assign ids (UUID strings, lower case)
// and timestamps; a Store keeps what it is given. Creating an id that exists
// returns ErrAlreadyExists; reading a missing row, or an id that is not a
// UUID, returns ErrNotFound. Implementations are safe for concurrent use, and
// the conformance package checks that they behave alike. A list limit of
// zero or less means no limit.
type Store interface {
	CreateUser(ctx context.Context, u User) error
	GetUser(ctx context.Context, id string) (User, error)
	CreateGrant(ctx context.Context, g Grant) error
	GetGrant(ctx context.Context, id string) (Grant, error)

	CreateConnection(ctx context.Context, c Connection) error
	// ListConnections returns up to limit of the user's connections after the
	// position (nil: from the start), by creation time then id.
	ListConnections(ctx context.Context, userID string, after *ConnectionPosition, limit int) ([]Connection, error)

	CreateAccount(ctx context.Context, a Account) error
	GetAccount(ctx context.Context, userID, id string) (Account, error)
	// ListAccounts returns all of the user's accounts by creation time then id.
	ListAccounts(ctx context.Context, userID string) ([]Account, error)

	CreateCategory(ctx context.Context, c Category) error
	// CreateCustomCategory creates the user's category c unless the user
	// already has limit custom categories (ErrLimitReached). The count and
	// the insert are one atomic step, so concurrent creates cannot overshoot.
	CreateCustomCategory(ctx context.Context, c Category, limit int) error
	// GetCategory reads a system category or one of the user's own.
	GetCategory(ctx context.Context, userID, id string) (Category, error)
	// UpdateCategory rewrites the mutable fields (parent, name, icon, color,
	// sort order, updated_at) of the user's custom category c.
	UpdateCategory(ctx context.Context, c Category) error
	// DeleteCategory deletes the user's custom category id in one atomic
	// step: ErrHasChildren if it has subcategories; its transactions move to
	// mergeInto (empty: uncategorized), each getting a new version and
	// updated_at = at; recurring rules follow. It returns the account ids of
	// the moved rows, one per row. When rows moved, the notes are stored in
	// the outbox in the same step, each with AccountIDs set to the moved
	// rows' accounts (once each, sorted); when none moved, none are.
	DeleteCategory(ctx context.Context, userID, id, mergeInto string, at time.Time, notes ...Note) ([]string, error)
	// ListCategories returns the system categories and the user's own, by
	// sort order, then name, then id.
	ListCategories(ctx context.Context, userID string) ([]Category, error)

	// InsertTransactions inserts all rows or none.
	InsertTransactions(ctx context.Context, txs []Transaction) error
	GetTransaction(ctx context.Context, userID, id string) (Transaction, error)
	// UpdateTransaction is a compare-and-swap: it writes every mutable field
	// of t (all but id, user, account, source, external_ref, split parent,
	// created_at; LastWrite included) only if the stored row's version is
	// expectedVersion.
	// ErrNotFound if the user has no such row, ErrVersionConflict if the
	// version differs. The notes are stored in the outbox in the same
	// transaction (none when the write is refused).
	UpdateTransaction(ctx context.Context, t Transaction, expectedVersion int64, notes ...Note) error
	// IsSplitParent reports whether any row names id as its split parent.
	IsSplitParent(ctx context.Context, userID, id string) (bool, error)
	// ListTransactions returns up to limit of the user's transactions matching
	// f, strictly after the position (nil: from the start), ordered by date
	// descending, then id descending.
	ListTransactions(ctx context.Context, userID string, f TransactionFilter, after *TxPosition, limit int) ([]Transaction, error)
	// SearchTransactions is ListTransactions restricted to rows whose search
	// text (merchant, display name, description, memo, tokenised by
	// SearchTokens) has, for every term, a token starting with that term.
	// Terms are lower-case letters and digits, as SearchTokens makes them.
	SearchTransactions(ctx context.Context, userID string, terms []string, f TransactionFilter, after *TxPosition, limit int) ([]Transaction, error)

	FlowStore   // flows.go
	ChangeStore // sync.go
}

// Notifier is the port through which the finance service announces what
// changed, for the webhook events of docs/webhooks.md (the events package
// implements it: it keeps each announcement as a Note in the outbox, and its
// relay decides which grants may learn of it and publishes). Every method
// is called after the change committed, and never fails the write.
//
// Every write stores its Note in its own transaction (Service.Note) and
// then calls Written: transaction edits, bulk recategorises, category
// deletes, imports, grant changes, bank syncs, connection statuses and
// recurring detections that find new streams.
type Notifier interface {
	// Written: a write of userID's data stored its Note with the change
	// (in its own transaction); publish soon.
	Written(ctx context.Context, userID string)
}

// nopNotifier announces nothing (no events wired: tests, tools).
type nopNotifier struct{}

func (nopNotifier) Written(context.Context, string) {}

// Notify is the notifier changes are announced to.
func (s *Service) Notify() Notifier { return s.notifier }

// Note is one committed change the finance events announce (docs/webhooks.md,
// "Transport"), as a value the outbox keeps until the relay has published
// its events. Every write stores its notes in its own
// transaction (Store.UpdateTransaction, ChangeStore.UpdateGrant, …), so the
// change and its announcement commit together.
type Note struct {
	// ID names the note; the ids of its events derive from it, so a
	// relay that publishes it again publishes the same events.
	ID     string
	Kind   string
	UserID string
	// At is when the change committed (the service clock).
	At time.Time
	// AccountIDs are the accounts whose rows changed (NoteTransactions;
	// nil: not known, which every grant may see).
	AccountIDs []string `json:",omitempty"`
	// GrantID is the grant whose settings changed (NoteGrant).
	GrantID string `json:",omitempty"`
	// The connection and its statuses (NoteConnection).
	ConnectionID string `json:",omitempty"`
	OldStatus    string `json:",omitempty"`
	NewStatus    string `json:",omitempty"`
	ErrorCode    string `json:",omitempty"`
	// Streams are the new recurring streams, id → account (NoteRecurring).
	Streams map[string]string `json:",omitempty"`
}

// Note kinds.
const (
	NoteTransactions = "transactions_changed"
	NoteConnection   = "connection_status_changed"
	NoteRecurring    = "recurring_detected"
	NoteGrant        = "grant_changed"
)

// WithAccounts returns notes, each with AccountIDs set to the distinct
// accounts of accountIDs, sorted: what a store learns inside a write
// (DeleteCategory) fills the notes it stores with the write.
func WithAccounts(notes []Note, accountIDs []string) []Note {
	ids := slices.Clone(accountIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]Note, len(notes))
	for i, n := range notes {
		n.AccountIDs = ids
		out[i] = n
	}
	return out
}

// Note is a note of kind about userID, now, for a write to store in its
// own transaction. ok is false when no events are wired: no relay would
// ever publish the note, so the write stores none (the outbox would only
// grow).
func (s *Service) Note(kind, userID string) (n Note, ok bool) {
	if _, off := s.notifier.(nopNotifier); off {
		return Note{}, false
	}
	return NewNote(kind, userID, s.now()), true
}

// NewNote is a note of kind about userID at at, with a fresh id.
func NewNote(kind, userID string, at time.Time) Note {
	return Note{ID: uuid.NewString(), Kind: kind, UserID: userID, At: at.UTC()}
}
