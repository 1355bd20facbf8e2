package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/events"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// testOutbox: the finance events' outbox (events.OutboxStore). A relay
// pass publishes the due notes oldest first and marks them sent, so a later
// pass never publishes them again; a failed publish ends the pass and makes
// that note due again after its retry delay, with its attempts counted; an
// id appended twice is one note; a note reads back as stored; two passes
// running at once never publish the same note (SKIP LOCKED), and between
// them publish every note once.
func testOutbox(t *testing.T, s Store) {
	ctx := context.Background()
	user := newID()
	note := func(at time.Time) finance.Note {
		return finance.NewNote(finance.NoteTransactions, user, at)
	}
	n1, n2, n3 := note(base), note(base), note(base.Add(time.Millisecond))
	must(t, s.AppendNotes(ctx, []finance.Note{n1, n2}))
	must(t, s.AppendNotes(ctx, []finance.Note{n3, n1})) // n1 again: ignored
	retry := func(n int) time.Duration { return time.Duration(n) * time.Second }

	var log []string // "id attempts ok|fail"
	failing := map[string]bool{n2.ID: true}
	publish := func(_ context.Context, o events.OutboxNote) error {
		ok := !failing[o.ID]
		log = append(log, fmt.Sprintf("%s %d %v", o.ID, o.Attempts, ok))
		if !ok {
			return errors.New("nats down")
		}
		return nil
	}
	pass := func(at time.Time) int {
		t.Helper()
		n, err := s.RelayNotes(ctx, at, 10, time.Hour, publish, retry)
		must(t, err)
		return n
	}
	// n1 goes, n2 fails and ends the pass.
	if n := pass(base.Add(time.Second)); n != 1 {
		t.Fatalf("first pass published %d, want 1", n)
	}
	// n2 waits for its retry (1 s after the failure); n3 goes.
	if n := pass(base.Add(1500 * time.Millisecond)); n != 1 {
		t.Fatalf("second pass published %d, want 1", n)
	}
	delete(failing, n2.ID)
	if n := pass(base.Add(2 * time.Second)); n != 1 {
		t.Fatalf("the retry published %d, want 1", n)
	}
	if n := pass(base.Add(time.Hour)); n != 0 {
		t.Fatalf("a pass with nothing due published %d", n)
	}
	want := []string{n1.ID + " 0 true", n2.ID + " 0 false", n3.ID + " 0 true", n2.ID + " 1 true"}
	if !slices.Equal(log, want) {
		t.Fatalf("publishes:\n got %v\nwant %v", log, want)
	}

	// A note reads back as stored; one not yet due waits.
	at := base.Add(2 * time.Hour)
	full := finance.NewNote(finance.NoteRecurring, user, at)
	full.AccountIDs, full.GrantID, full.Streams = []string{newID()}, newID(), map[string]string{newID(): newID()}
	full.ConnectionID, full.OldStatus, full.NewStatus, full.ErrorCode = newID(), "active", "error", "login_required"
	later := finance.NewNote(finance.NoteGrant, user, at.Add(time.Minute))
	must(t, s.AppendNotes(ctx, []finance.Note{full, later}))
	var got []events.OutboxNote
	_, err := s.RelayNotes(ctx, at, 10, time.Hour, func(_ context.Context, o events.OutboxNote) error {
		got = append(got, o)
		return nil
	}, retry)
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("round trip: %d notes", len(got))
	}
	diff(t, "note", events.OutboxNote{Note: full}, got[0])

	// Two passes at once: B runs while A holds its claim (inside A's first
	// publish), so B must skip A's notes.
	at = base.Add(3 * time.Hour)
	var batch []finance.Note
	for range 20 {
		batch = append(batch, note(at))
	}
	must(t, s.AppendNotes(ctx, batch))
	var mu sync.Mutex
	count := map[string]int{}
	record := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		count[id]++
	}
	ranB := false
	var nB int
	nA, err := s.RelayNotes(ctx, at, 5, time.Hour, func(ctx context.Context, o events.OutboxNote) error {
		if !ranB {
			ranB = true
			var err error
			nB, err = s.RelayNotes(ctx, at, 100, time.Hour, func(_ context.Context, o events.OutboxNote) error {
				record(o.ID)
				return nil
			}, retry)
			must(t, err)
		}
		record(o.ID)
		return nil
	}, retry)
	must(t, err)
	if nA != 5 || nB != 16 { // B also takes the later note, due by now
		t.Fatalf("A published %d, B %d: want 5 and 16", nA, nB)
	}
	for _, n := range batch {
		if count[n.ID] != 1 {
			t.Fatalf("note %s published %d times", n.ID, count[n.ID])
		}
	}
}

// testOutboxWithWrites: a transaction update, a grant update, an import, a
// category merge, a bank sync, a connection status and a recurring
// detection store their notes in
// their own transaction: a committed write's notes are in the outbox, a
// refused one's are not.
func testOutboxWithWrites(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	at := base.Add(time.Hour)
	tx := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-1.00", "USD"),
		Date: day(0), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
	must(t, s.InsertTransactions(ctx, []finance.Transaction{tx}))
	g := finance.Grant{ID: newID(), UserID: f.user, Version: 1, CreatedAt: base}
	must(t, s.CreateGrant(ctx, g))

	note := func(kind string) finance.Note { return finance.NewNote(kind, f.user, at) }
	refusedTx, refusedGrant := note(finance.NoteTransactions), note(finance.NoteGrant)
	okTx, okGrant := note(finance.NoteTransactions), note(finance.NoteGrant)
	stale := tx
	stale.Version = 3
	if err := s.UpdateTransaction(ctx, stale, 2, refusedTx); !errors.Is(err, finance.ErrVersionConflict) {
		t.Fatalf("stale update: %v", err)
	}
	g2 := g
	g2.Version, g2.WritesEnabled = 3, true
	if err := s.UpdateGrant(ctx, g2, 2, refusedGrant); !errors.Is(err, finance.ErrVersionConflict) {
		t.Fatalf("stale grant update: %v", err)
	}
	// An import matching a row that is gone is refused whole.
	refusedImport := note(finance.NoteTransactions)
	if _, err := s.ApplyImport(ctx, imports.ImportWrite{UserID: f.user, AccountID: f.account,
		Rows: []imports.ImportRow{{Key: "k0", MatchID: newID()}}, Notes: []finance.Note{refusedImport}}); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("an import matching no row: %v", err)
	}
	tx.Version, tx.Memo = 2, "edited"
	must(t, s.UpdateTransaction(ctx, tx, 1, okTx))
	g2.Version = 2
	must(t, s.UpdateGrant(ctx, g2, 1, okGrant))
	imported := tx
	imported.ID, imported.Source, imported.Version = newID(), finance.SourceImport, 1
	okImport := note(finance.NoteTransactions)
	_, err := s.ApplyImport(ctx, imports.ImportWrite{UserID: f.user, AccountID: f.account,
		Rows: []imports.ImportRow{{Key: "k1", Insert: &imported}}, Notes: []finance.Note{okImport}})
	must(t, err)
	// A category merge: its note gets the moved rows' accounts; deleting
	// a category no row is in stores none.
	mk := func() string {
		c := finance.Category{ID: newID(), UserID: f.user, Name: "Temp " + newID()[:6], TypeTag: finance.CategoryExpense,
			CreatedAt: base, UpdatedAt: base}
		must(t, s.CreateCategory(ctx, c))
		return c.ID
	}
	full, empty := mk(), mk()
	tx.CategoryID, tx.Version = full, 3
	must(t, s.UpdateTransaction(ctx, tx, 2))
	emptyNote, mergeNote := note(finance.NoteTransactions), note(finance.NoteTransactions)
	_, err = s.DeleteCategory(ctx, f.user, empty, "", at, emptyNote)
	must(t, err)
	_, err = s.DeleteCategory(ctx, f.user, full, "", at, mergeNote)
	must(t, err)
	// A bank sync refused whole (a stale update) stores none; one that
	// commits stores its notes with the rows; so does a connection status.
	synced := tx
	synced.ID, synced.ExternalRef, synced.Source, synced.Version = newID(), "ext-"+newID()[:8], finance.SourceBankSync, 1
	synced.CategoryID = "" // its category was deleted above
	refusedSync := note(finance.NoteTransactions)
	staleRow := tx
	staleRow.Version, staleRow.CategoryID = 9, ""
	if err := s.ApplySync(ctx, banksync.Write{UserID: f.user, Inserts: []finance.Transaction{synced},
		Updates: []finance.Transaction{staleRow}, Connection: banksync.ConnectionState{ID: f.conn,
			Status: finance.ConnectionActive, UpdatedAt: at, Notes: []finance.Note{refusedSync}}}); !errors.Is(err, finance.ErrVersionConflict) {
		t.Fatalf("a sync with a stale update: %v", err)
	}
	okSync, okStatus := note(finance.NoteTransactions), note(finance.NoteConnection)
	okSync.AccountIDs = []string{f.account}
	must(t, s.ApplySync(ctx, banksync.Write{UserID: f.user, Inserts: []finance.Transaction{synced},
		Connection: banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionActive, UpdatedAt: at,
			Notes: []finance.Note{okSync}}}))
	refusedStatus := note(finance.NoteConnection)
	if err := s.RecordConnectionSync(ctx, banksync.ConnectionState{ID: newID(), Status: finance.ConnectionError,
		UpdatedAt: at, Notes: []finance.Note{refusedStatus}}); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("the status of no connection: %v", err)
	}
	must(t, s.RecordConnectionSync(ctx, banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionError,
		ErrorCode: "ITEM_ERROR", UpdatedAt: at, Notes: []finance.Note{okStatus}}))
	// A detection that finds a new stream stores its note with the streams.
	stream := recurring.Rule{ID: newID(), UserID: f.user, AccountID: f.account, Merchant: "Netflix",
		ExpectedAmount: money("-15.49", "USD"), Frequency: finance.FrequencyMonthly, StreamType: recurring.StreamOutflow,
		NextExpectedDate: day(5), IsActive: true, CreatedAt: base, UpdatedAt: base}
	okStreams := note(finance.NoteRecurring)
	okStreams.Streams = map[string]string{stream.ID: f.account}
	must(t, s.SaveRecurringStreams(ctx, f.user, []recurring.Rule{stream}, map[string][]string{stream.ID: {tx.ID}}, okStreams))
	var got []string
	var merged, detected events.OutboxNote
	_, err = s.RelayNotes(ctx, at, 10, time.Hour, func(_ context.Context, o events.OutboxNote) error {
		got = append(got, o.ID)
		switch o.ID {
		case mergeNote.ID:
			merged = o
		case okStreams.ID:
			detected = o
		}
		return nil
	}, func(int) time.Duration { return time.Second })
	must(t, err)
	if want := []string{okTx.ID, okGrant.ID, okImport.ID, mergeNote.ID, okSync.ID, okStatus.ID, okStreams.ID}; !slices.Equal(got, want) {
		t.Fatalf("outbox after the writes: %v, want %v (refused: %s, %s, %s, %s, %s, %s)", got, want, refusedTx.ID,
			refusedGrant.ID, refusedImport.ID, emptyNote.ID, refusedSync.ID, refusedStatus.ID)
	}
	if !slices.Equal(merged.AccountIDs, []string{f.account}) {
		t.Fatalf("the merge's note names %v, want the moved row's account", merged.AccountIDs)
	}
	if len(detected.Streams) != 1 || detected.Streams[stream.ID] != f.account {
		t.Fatalf("the detection's note names streams %v, want %s on %s", detected.Streams, stream.ID, f.account)
	}
}
