package finance

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// Note is one committed change the finance events announce (docs/webhooks.md,
// "Transport"): what a Notifier call says, as a value the outbox keeps until
// the relay has published its events. A write that can store its note in
// its own transaction (Store.UpdateTransaction, ChangeStore.UpdateGrant)
// does, so the change and its announcement commit together; the others
// hand it to the Notifier once they have committed.
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

// Note kinds, one per Notifier method.
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

// NewNote is a note of kind about userID at at, with a fresh id.
func NewNote(kind, userID string, at time.Time) Note {
	return Note{ID: uuid.NewString(), Kind: kind, UserID: userID, At: at.UTC()}
}
