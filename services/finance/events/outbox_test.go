package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/eventbus"
	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/events"
	"github.com/ledgerlane/platform/services/finance/memory"
)

// flaky publishes on the bus, but the first call fails before publishing
// (NATS down) and the second publishes and then fails (the acknowledgement
// lost): the relay must retry both, and the stream must hold the event
// once.
type flaky struct {
	bus   *eventbus.Publisher
	calls int
}

func (f *flaky) Publish(ctx context.Context, ev events.Event) error {
	f.calls++
	if f.calls == 1 {
		return errors.New("nats: no servers available")
	}
	err := f.bus.Publish(ctx, eventbus.Envelope{ID: ev.ID, Type: ev.Type, AccountID: ev.AccountID, Mode: ev.Mode,
		CoalesceKey: ev.CoalesceKey, Body: ev.Body})
	if err == nil && f.calls == 2 {
		return errors.New("nats: timeout waiting for the acknowledgement")
	}
	return err
}

// TestRelayRetriesAndTheEventArrivesOnce: a change's note waits in the
// outbox through a failed publish and one whose acknowledgement was lost,
// each retried after its backoff on the service clock; the retry builds
// the same event (its id derives from the note's), and JetStream holds it
// once (message id = event id).
func TestRelayRetriesAndTheEventArrivesOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	store := memory.New()
	user, grant, tenant := uuid.NewString(), uuid.NewString(), uuid.NewString()
	if err := store.CreateUser(ctx, finance.User{ID: user, OwnerAccountID: tenant, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateGrant(ctx, finance.Grant{ID: grant, UserID: user, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	_, js, err := natsconn.Connect(natsconn.TestURL(t), "outbox-test")
	if err != nil {
		t.Fatal(err)
	}
	names := eventbus.NamesWithPrefix("outbox" + uuid.NewString()[:8])
	bus := eventbus.NewPublisher(js, names, 1)
	if err := bus.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	pub := &flaky{bus: bus}
	outbox := events.NewOutbox(store, clock, nil)
	relay := events.NewRelay(outbox, events.NewService(events.Config{Store: store, Publisher: pub}))

	// A write's note, stored with its change.
	if err := store.AppendNotes(ctx, []finance.Note{finance.NewNote(finance.NoteTransactions, user, clock())}); err != nil {
		t.Fatal(err)
	}
	outbox.Written(ctx, user)
	steps := []struct {
		advance time.Duration
		want    int
	}{
		{0, 0},                      // NATS down: kept, due again in 1 s
		{500 * time.Millisecond, 0}, // not due yet: not tried
		{500 * time.Millisecond, 0}, // published, but the ack is lost: due again in 2 s
		{2 * time.Second, 1},        // published again, same id
		{time.Hour, 0},              // sent: never again
	}
	wantCalls := []int{1, 1, 2, 3, 3}
	for i, st := range steps {
		now = now.Add(st.advance)
		n, err := relay.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != st.want || pub.calls != wantCalls[i] {
			t.Fatalf("step %d: published %d (want %d) after %d calls (want %d)", i, n, st.want, pub.calls, wantCalls[i])
		}
	}
	stream, err := js.Stream(ctx, names.Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("the stream holds %d messages, want the one event", info.State.Msgs)
	}
	msg, err := stream.GetMsg(ctx, info.State.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	env, err := eventbus.Decode(msg.Data)
	if err != nil || env.Type != events.TypeSyncUpdates || env.AccountID != tenant || env.CoalesceKey == "" {
		t.Fatalf("the event: %+v %v", env, err)
	}
}

// TestEventsOfNotes: which grants a note's events go to, and that building
// a note's events twice gives the same events (what makes a republish a
// duplicate the bus and the fan-out drop).
func TestEventsOfNotes(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)
	store := memory.New()
	user, tenant, checking := uuid.NewString(), uuid.NewString(), uuid.NewString()
	open, excluding := uuid.NewString(), uuid.NewString()
	if err := store.CreateUser(ctx, finance.User{ID: user, OwnerAccountID: tenant, Mode: "test", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []finance.Grant{{ID: open, UserID: user, CreatedAt: now},
		{ID: excluding, UserID: user, ExcludedAccountIDs: []string{checking}, CreatedAt: now.Add(time.Second)}} {
		if err := store.CreateGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	orphan := uuid.NewString()
	if err := store.CreateUser(ctx, finance.User{ID: orphan, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	svc := events.NewService(events.Config{Store: store})
	note := func(kind, u string, edit func(*finance.Note)) finance.Note {
		n := finance.NewNote(kind, u, now)
		if edit != nil {
			edit(&n)
		}
		return n
	}
	tests := []struct {
		name   string
		note   finance.Note
		grants []string // "" for an event about the user as a whole
	}{
		{"rows on the excluded account", note(finance.NoteTransactions, user, func(n *finance.Note) { n.AccountIDs = []string{checking} }),
			[]string{open}},
		{"rows on unknown accounts", note(finance.NoteTransactions, user, nil), []string{open, excluding}},
		{"a grant's settings", note(finance.NoteGrant, user, func(n *finance.Note) { n.GrantID = excluding }), []string{excluding}},
		{"another user's grant", note(finance.NoteGrant, user, func(n *finance.Note) { n.GrantID = uuid.NewString() }), nil},
		{"a connection", note(finance.NoteConnection, user, func(n *finance.Note) { n.ConnectionID, n.NewStatus = uuid.NewString(), "error" }),
			[]string{""}},
		{"a stream on the excluded account", note(finance.NoteRecurring, user, func(n *finance.Note) {
			n.Streams = map[string]string{uuid.NewString(): checking}
		}), []string{open}},
		{"a user no tenant owns", note(finance.NoteTransactions, orphan, nil), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := svc.EventsOf(ctx, tc.note)
			if err != nil {
				t.Fatal(err)
			}
			again, err := svc.EventsOf(ctx, tc.note)
			if err != nil || !reflect.DeepEqual(evs, again) {
				t.Fatalf("built twice: %v %v", evs, err)
			}
			var grants []string
			for _, ev := range evs {
				var body struct {
					GrantID   string `json:"grant_id"`
					CreatedAt string `json:"created_at"`
				}
				if err := json.Unmarshal(ev.Body, &body); err != nil {
					t.Fatal(err)
				}
				if ev.AccountID != tenant || ev.Mode != "test" || body.CreatedAt != now.Format(time.RFC3339Nano) {
					t.Fatalf("event: %+v %s", ev, ev.Body)
				}
				grants = append(grants, body.GrantID)
			}
			if !slices.Equal(grants, tc.grants) {
				t.Fatalf("events for %v, want %v", grants, tc.grants)
			}
		})
	}
}
