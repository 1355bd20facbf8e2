package events_test

import (
	"context"
	"errors"
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

// TestRelayRetriesAndTheEventArrivesOnce: a change's event waits in the
// outbox through a failed publish and one whose acknowledgement was lost,
// each retried after its backoff on the service clock, and JetStream holds
// it once (message id = event id).
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
	outbox := events.NewOutbox(store, clock)
	relay := events.NewRelay(outbox, pub, nil)
	svc := events.NewService(events.Config{Store: store, Publisher: outbox, Clock: clock})

	svc.TransactionsChanged(ctx, user, nil)
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
