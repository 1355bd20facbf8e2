package conformance

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/jobs"
)

// The store behaviour behind operable endpoints: settings, rotation,
// enabling, the deliveries page with attempts, resends and test events.

// testEndpointSettings: description and event types round-trip; an update
// changes only what it names, for the owner only.
func testEndpointSettings(t *testing.T, s Store) {
	acct := uuid.NewString()
	e := newEndpoint(acct, t0)
	e.Description, e.EventTypes = "billing system", []string{jobs.EventJobCompleted}
	all := newEndpoint(acct, t0.Add(time.Second)) // every type
	for _, x := range []jobs.Endpoint{e, all} {
		if err := s.CreateEndpoint(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.EndpointByID(ctx, e.ID)
	if err != nil || got.Description != "billing system" || !slices.Equal(got.EventTypes, e.EventTypes) || got.PrevSecret != nil || !got.PrevSecretUntil.IsZero() {
		t.Fatalf("created: %v %+v", err, got)
	}
	if got, _ := s.EndpointByID(ctx, all.ID); got.EventTypes == nil || len(got.EventTypes) != 0 {
		t.Fatalf("every type reads back as an empty list, got %#v", got.EventTypes)
	}
	if _, err := s.UpdateEndpoint(ctx, uuid.NewString(), e.ID, jobs.EndpointUpdate{}); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("another tenant's update: %v", err)
	}
	url := "https://example.com/other"
	got, err = s.UpdateEndpoint(ctx, acct, e.ID, jobs.EndpointUpdate{URL: &url})
	if err != nil || got.URL != url || got.Description != "billing system" || !slices.Equal(got.EventTypes, e.EventTypes) {
		t.Fatalf("url only: %v %+v", err, got)
	}
	none, types := "", []string{"recurring.detected", jobs.EventJobCompleted}
	got, err = s.UpdateEndpoint(ctx, acct, e.ID, jobs.EndpointUpdate{Description: &none, EventTypes: &types})
	if err != nil || got.URL != url || got.Description != "" || !slices.Equal(got.EventTypes, types) {
		t.Fatalf("description and types: %v %+v", err, got)
	}
	empty := []string{}
	if got, err = s.UpdateEndpoint(ctx, acct, e.ID, jobs.EndpointUpdate{EventTypes: &empty}); err != nil || len(got.EventTypes) != 0 {
		t.Fatalf("back to every type: %v %+v", err, got)
	}
	if got, _ = s.EndpointByID(ctx, e.ID); got.URL != url || len(got.EventTypes) != 0 || string(got.Secret) != string(e.Secret) {
		t.Fatalf("stored: %+v", got)
	}
}

// testRotateAndEnable: a rotation moves the secret to PrevSecret with its
// deadline; enabling resets the failures; both for the owner only.
func testRotateAndEnable(t *testing.T, s Store) {
	acct := uuid.NewString()
	e := newEndpoint(acct, t0)
	e.Status, e.ConsecutiveFailures = jobs.EndpointDisabled, jobs.DisableAfter
	if err := s.CreateEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	until := t0.Add(24 * time.Hour)
	if _, err := s.RotateSecret(ctx, uuid.NewString(), e.ID, []byte{9}, until); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("another tenant's rotation: %v", err)
	}
	got, err := s.RotateSecret(ctx, acct, e.ID, []byte{4, 5, 6}, until)
	if err != nil || string(got.Secret) != "\x04\x05\x06" || string(got.PrevSecret) != string(e.Secret) || !got.PrevSecretUntil.Equal(until) {
		t.Fatalf("rotated: %v %+v", err, got)
	}
	// A second rotation keeps only the secret it replaced.
	got, err = s.RotateSecret(ctx, acct, e.ID, []byte{7}, until.Add(time.Hour))
	if err != nil || string(got.Secret) != "\x07" || string(got.PrevSecret) != "\x04\x05\x06" || !got.PrevSecretUntil.Equal(until.Add(time.Hour)) {
		t.Fatalf("rotated twice: %v %+v", err, got)
	}
	if got, _ = s.EndpointByID(ctx, e.ID); string(got.PrevSecret) != "\x04\x05\x06" {
		t.Fatalf("stored: %+v", got)
	}
	if _, err := s.EnableEndpoint(ctx, uuid.NewString(), e.ID); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("another tenant's enable: %v", err)
	}
	got, err = s.EnableEndpoint(ctx, acct, e.ID)
	if err != nil || got.Status != jobs.EndpointActive || got.ConsecutiveFailures != 0 {
		t.Fatalf("enabled: %v %+v", err, got)
	}
	if n, _ := s.CountDisabledEndpoints(ctx); n != 0 {
		t.Fatalf("disabled count %d", n)
	}
	// The previous secret is a sealed blob too: a purge must find it.
	blobs, _ := s.Blobs(ctx)
	if !slices.ContainsFunc(blobs, func(b []byte) bool { return string(b) == "\x04\x05\x06" }) {
		t.Fatal("the previous secret is not among the blobs")
	}
}

// testDeliveryPages: an endpoint's deliveries, newest first, filtered by
// status, paged by position, never another endpoint's or tenant's.
func testDeliveryPages(t *testing.T, s Store) {
	acct := uuid.NewString()
	e, other := newEndpoint(acct, t0), newEndpoint(acct, t0)
	for _, x := range []jobs.Endpoint{e, other} {
		if err := s.CreateEndpoint(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	var ds []jobs.Delivery
	for i := range 5 {
		d := newDelivery(e, uuid.NewString(), t0.Add(time.Duration(i)*time.Minute))
		d.EventID = uuid.NewString()
		ds = append(ds, d)
		if _, err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateDelivery(ctx, newDelivery(other, uuid.NewString(), t0)); err != nil {
		t.Fatal(err)
	}
	// Two at the same instant are ordered by id.
	twin := newDelivery(e, uuid.NewString(), ds[4].CreatedAt)
	if _, err := s.CreateDelivery(ctx, twin); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAttempt(ctx, ds[1].ID, jobs.Attempt{At: t0, Succeeded: true, StatusCode: 204, Duration: 1500 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	ids := func(got []jobs.Delivery) []string {
		var out []string
		for _, d := range got {
			out = append(out, d.ID)
		}
		return out
	}
	first, second := ds[4].ID, twin.ID
	if twin.ID > ds[4].ID {
		first, second = twin.ID, ds[4].ID
	}
	all, err := s.ListDeliveries(ctx, jobs.DeliveryFilter{AccountID: acct, EndpointID: e.ID}, 10)
	want := []string{first, second, ds[3].ID, ds[2].ID, ds[1].ID, ds[0].ID}
	if err != nil || !slices.Equal(ids(all), want) {
		t.Fatalf("all: %v\n got %v\nwant %v", err, ids(all), want)
	}
	if all[2].EventID != ds[3].EventID || all[2].Origin != jobs.OriginEvent {
		t.Fatalf("read back: %+v", all[2])
	}
	page, _ := s.ListDeliveries(ctx, jobs.DeliveryFilter{AccountID: acct, EndpointID: e.ID}, 2)
	last := page[len(page)-1]
	next, _ := s.ListDeliveries(ctx, jobs.DeliveryFilter{AccountID: acct, EndpointID: e.ID,
		Before: &jobs.Position{CreatedAt: last.CreatedAt, ID: last.ID}}, 10)
	if !slices.Equal(append(ids(page), ids(next)...), want) {
		t.Fatalf("pages: %v then %v", ids(page), ids(next))
	}
	done, _ := s.ListDeliveries(ctx, jobs.DeliveryFilter{AccountID: acct, EndpointID: e.ID, Status: jobs.DeliverySucceeded}, 10)
	if !slices.Equal(ids(done), []string{ds[1].ID}) {
		t.Fatalf("succeeded: %v", ids(done))
	}
	if got, _ := s.ListDeliveries(ctx, jobs.DeliveryFilter{AccountID: uuid.NewString(), EndpointID: e.ID}, 10); len(got) != 0 {
		t.Fatalf("another tenant's list: %v", ids(got))
	}
}

// testAttempts: each attempt is stored with its outcome; an abandonment is
// none; attempts go with their delivery when it is swept.
func testAttempts(t *testing.T, s Store) {
	e := newEndpoint(uuid.NewString(), t0)
	if err := s.CreateEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	d := newDelivery(e, uuid.NewString(), t0)
	if _, err := s.CreateDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	steps := []jobs.Attempt{
		{At: t0, StatusCode: 503, Duration: 20 * time.Millisecond, NextAttemptAt: t0.Add(time.Minute)},
		{At: t0.Add(time.Minute), Failure: "timeout", Duration: 10 * time.Second, NextAttemptAt: t0.Add(5 * time.Minute)},
		{At: t0.Add(5 * time.Minute), Succeeded: true, StatusCode: 200, Duration: 3 * time.Millisecond},
	}
	for _, a := range steps {
		if _, err := s.RecordAttempt(ctx, d.ID, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.DeliveryAttempts(ctx, d.ID)
	if err != nil || len(got) != 3 {
		t.Fatalf("attempts: %v %+v", err, got)
	}
	for i, a := range steps {
		g := got[i]
		if g.N != i+1 || !g.At.Equal(a.At) || g.Succeeded != a.Succeeded || g.StatusCode != a.StatusCode || g.Failure != a.Failure ||
			g.Duration != a.Duration || !g.NextAttemptAt.Equal(a.NextAttemptAt) {
			t.Fatalf("attempt %d: got %+v, want %+v", i+1, g, a)
		}
	}
	gone := newDelivery(e, uuid.NewString(), t0)
	_, _ = s.CreateDelivery(ctx, gone)
	_, _ = s.RecordAttempt(ctx, gone.ID, jobs.Attempt{At: t0, Abandoned: true})
	if got, err := s.DeliveryAttempts(ctx, gone.ID); err != nil || len(got) != 0 {
		t.Fatalf("abandoned: %v %+v", err, got)
	}
	if got, err := s.DeliveryAttempts(ctx, uuid.NewString()); err != nil || len(got) != 0 {
		t.Fatalf("unknown delivery: %v %+v", err, got)
	}
	_, _ = s.SweepExpired(ctx, t0.Add(jobs.DeliveryRetention))
	if got, _ := s.DeliveryAttempts(ctx, d.ID); len(got) != 0 {
		t.Fatalf("attempts outlived their delivery: %+v", got)
	}
}

// testManualDeliveries: resends and tests stand beside the event's own
// delivery (same job, endpoint and event), at most maxPending pending per
// endpoint; finished ones free a place.
func testManualDeliveries(t *testing.T, s Store) {
	e, other := newEndpoint(uuid.NewString(), t0), newEndpoint(uuid.NewString(), t0)
	for _, x := range []jobs.Endpoint{e, other} {
		if err := s.CreateEndpoint(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	orig := newDelivery(e, uuid.NewString(), t0)
	orig.EventID = uuid.NewString()
	if _, err := s.CreateDelivery(ctx, orig); err != nil {
		t.Fatal(err)
	}
	resend := func(at time.Time) jobs.Delivery {
		d := orig
		d.ID, d.Origin, d.ResendOf, d.CreatedAt, d.NextAttemptAt = uuid.NewString(), jobs.OriginResend, orig.ID, at, at
		return d
	}
	r1 := resend(t0.Add(time.Second))
	if err := s.CreateManualDelivery(ctx, r1, 2); err != nil {
		t.Fatal(err)
	}
	test := jobs.Delivery{ID: uuid.NewString(), AccountID: e.AccountID, EndpointID: e.ID, Event: jobs.EventWebhookTest, EventID: uuid.NewString(),
		Origin: jobs.OriginTest, Body: []byte(`{"event":"webhook.test"}`), Status: jobs.DeliveryPending, NextAttemptAt: t0, CreatedAt: t0.Add(2 * time.Second)}
	if err := s.CreateManualDelivery(ctx, test, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateManualDelivery(ctx, resend(t0.Add(3*time.Second)), 2); !errors.Is(err, jobs.ErrLimit) {
		t.Fatalf("third pending: %v", err)
	}
	// Another endpoint's count is its own.
	otherTest := test
	otherTest.ID, otherTest.AccountID, otherTest.EndpointID = uuid.NewString(), other.AccountID, other.ID
	if err := s.CreateManualDelivery(ctx, otherTest, 2); err != nil {
		t.Fatalf("other endpoint: %v", err)
	}
	if _, err := s.RecordAttempt(ctx, r1.ID, jobs.Attempt{At: t0, Succeeded: true, StatusCode: 200}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateManualDelivery(ctx, resend(t0.Add(4*time.Second)), 2); err != nil {
		t.Fatalf("after one finished: %v", err)
	}
	got, err := s.Delivery(ctx, r1.ID)
	if err != nil || got.Origin != jobs.OriginResend || got.ResendOf != orig.ID || got.EventID != orig.EventID || got.JobID != orig.JobID {
		t.Fatalf("resend read back: %v %+v", err, got)
	}
	if got, err := s.Delivery(ctx, test.ID); err != nil || got.JobID != "" || got.Origin != jobs.OriginTest || got.Event != jobs.EventWebhookTest {
		t.Fatalf("test read back: %v %+v", err, got)
	}
	claimed, err := s.ClaimDue(ctx, t0.Add(time.Hour), time.Minute, 10)
	if err != nil || !slices.ContainsFunc(claimed, func(d jobs.Delivery) bool {
		return d.ID == test.ID && d.Origin == jobs.OriginTest && d.EventID == test.EventID
	}) {
		t.Fatalf("claim: %v %+v", err, claimed)
	}
	// The event's own delivery is still created once.
	if created, err := s.CreateDelivery(ctx, newDelivery(e, orig.JobID, t0)); err != nil || created {
		t.Fatalf("fan-out again: %v %v", err, created)
	}
}
