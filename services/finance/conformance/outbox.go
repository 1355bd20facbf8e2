package conformance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance/events"
)

// testOutbox: the finance events' outbox (events.OutboxStore). A relay
// pass publishes the due events oldest first and marks them sent, so a
// later pass never publishes them again; a failed publish ends the pass
// and makes that event due again after its retry delay, with its attempts
// counted; an id appended twice is one event; two passes running at once
// never publish the same event (SKIP LOCKED), and between them publish
// every event once.
func testOutbox(t *testing.T, s Store) {
	ctx := context.Background()
	ev := func(n int) events.Event {
		return events.Event{ID: newID(), Type: events.TypeSyncUpdates, AccountID: newID(), Mode: "live",
			CoalesceKey: "k", Body: []byte(`{"n":` + string(rune('0'+n)) + `}`)}
	}
	e1, e2, e3 := ev(1), ev(2), ev(3)
	must(t, s.AppendOutbox(ctx, []events.Event{e1, e2}, base))
	must(t, s.AppendOutbox(ctx, []events.Event{e3, e1}, base.Add(time.Millisecond))) // e1 again: ignored
	retry := func(n int) time.Duration { return time.Duration(n) * time.Second }

	var log []string // "id attempts ok|fail"
	failing := map[string]bool{e2.ID: true}
	publish := func(_ context.Context, o events.OutboxEvent) error {
		ok := !failing[o.ID]
		log = append(log, o.ID+" "+string(rune('0'+o.Attempts))+" "+map[bool]string{true: "ok", false: "fail"}[ok])
		if !ok {
			return errors.New("nats down")
		}
		return nil
	}
	pass := func(at time.Time) int {
		t.Helper()
		n, err := s.RelayOutbox(ctx, at, 10, time.Hour, publish, retry)
		must(t, err)
		return n
	}
	// e1 goes, e2 fails and ends the pass.
	if n := pass(base.Add(time.Second)); n != 1 {
		t.Fatalf("first pass published %d, want 1", n)
	}
	// e2 waits for its retry (1 s after the failure); e3 goes.
	if n := pass(base.Add(1500 * time.Millisecond)); n != 1 {
		t.Fatalf("second pass published %d, want 1", n)
	}
	delete(failing, e2.ID)
	if n := pass(base.Add(2 * time.Second)); n != 1 {
		t.Fatalf("the retry published %d, want 1", n)
	}
	if n := pass(base.Add(time.Hour)); n != 0 {
		t.Fatalf("a pass with nothing due published %d", n)
	}
	want := []string{e1.ID + " 0 ok", e2.ID + " 0 fail", e3.ID + " 0 ok", e2.ID + " 1 ok"}
	if !slices.Equal(log, want) {
		t.Fatalf("publishes:\n got %v\nwant %v", log, want)
	}
	// What a pass hands over is the event as appended.
	got := map[string]events.OutboxEvent{}
	must(t, s.AppendOutbox(ctx, []events.Event{ev(4)}, base.Add(2*time.Hour)))
	_, err := s.RelayOutbox(ctx, base.Add(2*time.Hour), 10, time.Hour, func(_ context.Context, o events.OutboxEvent) error {
		got[o.ID] = o
		return nil
	}, retry)
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("round trip: %d events", len(got))
	}
	for _, o := range got {
		if o.Type != events.TypeSyncUpdates || o.Mode != "live" || o.CoalesceKey != "k" || string(o.Body) != `{"n":4}` ||
			!o.CreatedAt.Equal(base.Add(2*time.Hour)) || o.Attempts != 0 {
			t.Fatalf("round trip: %+v", o)
		}
	}

	// Two passes at once: B runs while A holds its claim (inside A's first
	// publish), so B must skip A's events.
	at := base.Add(3 * time.Hour)
	var batch []events.Event
	for i := range 20 {
		batch = append(batch, ev(i%10))
	}
	must(t, s.AppendOutbox(ctx, batch, at))
	var mu sync.Mutex
	count := map[string]int{}
	record := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		count[id]++
	}
	ranB := false
	var nB int
	nA, err := s.RelayOutbox(ctx, at, 5, time.Hour, func(ctx context.Context, o events.OutboxEvent) error {
		if !ranB {
			ranB = true
			var err error
			nB, err = s.RelayOutbox(ctx, at, 100, time.Hour, func(_ context.Context, o events.OutboxEvent) error {
				record(o.ID)
				return nil
			}, retry)
			must(t, err)
		}
		record(o.ID)
		return nil
	}, retry)
	must(t, err)
	if nA != 5 || nB != 15 {
		t.Fatalf("A published %d, B %d: want 5 and 15", nA, nB)
	}
	for _, e := range batch {
		if count[e.ID] != 1 {
			t.Fatalf("event %s published %d times", e.ID, count[e.ID])
		}
	}
}
