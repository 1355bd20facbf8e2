package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

const jobA = "0e8a3c6e-2f4b-4f54-9f53-00000000a001"

var aliceTest = jobs.Caller{AccountID: alice.AccountID, Mode: "test"}

func mustCreate(t *testing.T, svc *jobs.Service, c jobs.Caller, in jobs.WebhookSettings) jobs.EndpointCreated {
	t.Helper()
	out, err := svc.CreateWebhook(context.Background(), c, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEventTypeFiltering(t *testing.T) { eachStore(t, eventTypeFiltering) }

// eventTypeFiltering: an endpoint gets job.completed when it subscribes to
// it or to every type (the default, as every endpoint made before types
// existed), not when it chose other types.
func eventTypeFiltering(t *testing.T, e *env) {
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	jobsOnly, recurringOnly, all := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
	c1 := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: jobsOnly.srv.URL, EventTypes: []string{jobs.EventJobCompleted}, Description: "jobs"})
	mustCreate(t, svc, alice, jobs.WebhookSettings{URL: recurringOnly.srv.URL, EventTypes: []string{"recurring.detected"}})
	c3 := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: all.srv.URL, EventTypes: []string{"*"}})
	if !slices.Equal(jobs.EventTypesOf(c1.Endpoint), []string{jobs.EventJobCompleted}) || c1.Endpoint.Description != "jobs" ||
		!slices.Equal(jobs.EventTypesOf(c3.Endpoint), []string{"*"}) || c1.Endpoint.Secret != nil {
		t.Fatalf("created: %+v %+v", c1.Endpoint, c3.Endpoint)
	}
	if err := svc.Fanout(ctx, alice.AccountID, alice.Mode, jobA, []byte(`{"event":"job.completed"}`)); err != nil {
		t.Fatal(err)
	}
	if n := svc.DeliverDue(ctx); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
	if len(jobsOnly.deliveries()) != 1 || len(all.deliveries()) != 1 || len(recurringOnly.deliveries()) != 0 {
		t.Fatalf("deliveries: %d %d %d", len(jobsOnly.deliveries()), len(all.deliveries()), len(recurringOnly.deliveries()))
	}
	// Both deliveries of the one event carry its id, derived from the job.
	id1, id3 := jobsOnly.deliveries()[0].header.Get(webhook.EventIDHeader), all.deliveries()[0].header.Get(webhook.EventIDHeader)
	if id1 == "" || id1 != id3 {
		t.Fatalf("event ids %q and %q", id1, id3)
	}
	// Narrowing the third to recurring.detected stops its job events.
	if _, err := svc.UpdateWebhook(ctx, alice, c3.Endpoint.ID, jobs.WebhookUpdate{SetEventTypes: true, EventTypes: []string{"recurring.detected"}}); err != nil {
		t.Fatal(err)
	}
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000a002", []byte(`{}`))
	svc.DeliverDue(ctx)
	if len(all.deliveries()) != 1 || len(jobsOnly.deliveries()) != 2 {
		t.Fatalf("after narrowing: %d %d", len(all.deliveries()), len(jobsOnly.deliveries()))
	}
}

func TestWebhookSettingsValidation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	c := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: "http://127.0.0.1:9/x"})
	id := c.Endpoint.ID
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		create *jobs.WebhookSettings
		update *jobs.WebhookUpdate
		field  string
	}{
		{"unknown type", &jobs.WebhookSettings{URL: "http://127.0.0.1:9/", EventTypes: []string{"job.done"}}, nil, "event_types[0]"},
		{"star among others", &jobs.WebhookSettings{URL: "http://127.0.0.1:9/", EventTypes: []string{jobs.EventJobCompleted, "*"}}, nil, "event_types[1]"},
		{"test type is not subscribable", &jobs.WebhookSettings{URL: "http://127.0.0.1:9/", EventTypes: []string{jobs.EventWebhookTest}}, nil, "event_types[0]"},
		{"long description", &jobs.WebhookSettings{URL: "http://127.0.0.1:9/", Description: strings.Repeat("é", 201)}, nil, "description"},
		{"control in description", &jobs.WebhookSettings{URL: "http://127.0.0.1:9/", Description: "a\nb"}, nil, "description"},
		{"patch unknown type", nil, &jobs.WebhookUpdate{SetEventTypes: true, EventTypes: []string{"nope"}}, "event_types[0]"},
		{"patch empty types", nil, &jobs.WebhookUpdate{SetEventTypes: true}, "event_types"},
		{"patch bad url", nil, &jobs.WebhookUpdate{URL: str("ftp://x/")}, "url"},
		{"patch empty url", nil, &jobs.WebhookUpdate{URL: str("")}, "url"},
		{"patch description", nil, &jobs.WebhookUpdate{Description: str(strings.Repeat("x", 201))}, "description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.create != nil {
				_, err = svc.CreateWebhook(ctx, alice, *tc.create)
			} else {
				_, err = svc.UpdateWebhook(ctx, alice, id, *tc.update)
			}
			wantProblem(t, err, problem.InvalidInput, tc.field)
		})
	}
	// Any registered types can be chosen; duplicates collapse.
	got, err := svc.UpdateWebhook(ctx, alice, id, jobs.WebhookUpdate{Description: str("ok"),
		SetEventTypes: true, EventTypes: []string{"budget.threshold_reached", "connection.status_changed", "budget.threshold_reached"}})
	if err != nil || got.Description != "ok" || got.URL != "http://127.0.0.1:9/x" ||
		!slices.Equal(got.EventTypes, []string{"budget.threshold_reached", "connection.status_changed"}) {
		t.Fatalf("update: %v %+v", err, got)
	}
	// The URL rules of creation hold on PATCH, address check included.
	public := e.service(t, &fakeConverter{}, func(c *jobs.Config) {
		c.AllowPrivate = false
		c.Resolver = fixedResolver{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.1")}
	})
	for _, u := range []string{"http://127.0.0.1/", "http://169.254.169.254/", "https://rebinding.example.com/"} {
		_, err := public.UpdateWebhook(ctx, alice, id, jobs.WebhookUpdate{URL: str(u)})
		wantProblem(t, err, problem.InvalidInput, "url")
	}
}

func TestWebhookOtherTenantAndMode(t *testing.T) { eachStore(t, webhookOtherTenantAndMode) }

// webhookOtherTenantAndMode: every route answers 404 for another tenant's
// or another mode's endpoint, and for a delivery of another endpoint.
func webhookOtherTenantAndMode(t *testing.T, e *env) {
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	rec := newReceiver(t, 200)
	c := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: rec.srv.URL})
	sibling := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: rec.srv.URL})
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, jobA, []byte(`{}`))
	svc.DeliverDue(ctx)
	page, err := svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", "", nil)
	if err != nil || len(page.Deliveries) != 1 {
		t.Fatalf("alice's deliveries: %v %+v", err, page)
	}
	did := page.Deliveries[0].ID
	id := c.Endpoint.ID
	str := "http://127.0.0.1:9/"
	for _, who := range []struct {
		name     string
		c        jobs.Caller
		endpoint string
	}{
		{"another tenant", bob, id},
		{"another mode", aliceTest, id},
		{"not a uuid", alice, "x'; --"},
		{"unknown", alice, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff"},
	} {
		t.Run(who.name, func(t *testing.T) {
			for name, err := range map[string]error{
				"update":     second(svc.UpdateWebhook(ctx, who.c, who.endpoint, jobs.WebhookUpdate{URL: &str})),
				"delete":     svc.DeleteWebhook(ctx, who.c, who.endpoint),
				"deliveries": second(svc.ListDeliveries(ctx, who.c, who.endpoint, "", "", nil)),
				"delivery":   second(svc.GetDelivery(ctx, who.c, who.endpoint, did)),
				"resend":     second(svc.ResendDelivery(ctx, who.c, who.endpoint, did)),
				"test":       second(svc.SendTestEvent(ctx, who.c, who.endpoint)),
				"rotate":     second(svc.RotateWebhookSecret(ctx, who.c, who.endpoint)),
				"enable":     second(svc.EnableWebhook(ctx, who.c, who.endpoint)),
			} {
				if rpc.Problem(err).Type != problem.NotFound {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
	// A delivery id through another of the owner's endpoints, or made up.
	for _, tc := range [][2]string{{sibling.Endpoint.ID, did}, {id, "0e8a3c6e-2f4b-4f54-9f53-0000000000ff"}, {id, "nope"}} {
		if _, err := svc.GetDelivery(ctx, alice, tc[0], tc[1]); rpc.Problem(err).Type != problem.NotFound {
			t.Errorf("delivery %s via %s: %v", tc[1], tc[0], err)
		}
		if _, err := svc.ResendDelivery(ctx, alice, tc[0], tc[1]); rpc.Problem(err).Type != problem.NotFound {
			t.Errorf("resend %s via %s: %v", tc[1], tc[0], err)
		}
	}
	if got, _ := svc.ListWebhooks(ctx, alice); len(got) != 2 || got[0].URL != rec.srv.URL {
		t.Fatalf("alice's endpoints changed: %+v", got)
	}
}

func second[T any](_ T, err error) error { return err }

func TestDeliveriesWithAttempts(t *testing.T) { eachStore(t, deliveriesWithAttempts) }

// deliveriesWithAttempts: each attempt shows its time, status or failure
// class and the retry it scheduled; pages run newest first, filtered by
// status.
func deliveriesWithAttempts(t *testing.T, e *env) {
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	rec := newReceiver(t, http.StatusServiceUnavailable)
	c := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: rec.srv.URL})
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, jobA, []byte(`{"event":"job.completed"}`))
	svc.DeliverDue(ctx) // 503
	e.clock.Add(time.Minute)
	rec.status.Store(http.StatusOK)
	svc.DeliverDue(ctx) // 200
	page, err := svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", "", nil)
	if err != nil || len(page.Deliveries) != 1 || page.NextCursor != "" {
		t.Fatalf("list: %v %+v", err, page)
	}
	d := page.Deliveries[0]
	if d.Status != jobs.DeliverySucceeded || d.Event != jobs.EventJobCompleted || d.EventID == "" || d.JobID != jobA ||
		d.Origin != jobs.OriginEvent || d.Body != nil || len(d.Attempts) != 2 {
		t.Fatalf("delivery: %+v", d)
	}
	a1, a2 := d.Attempts[0], d.Attempts[1]
	if a1.N != 1 || !a1.At.Equal(t0) || a1.Succeeded || a1.StatusCode != 503 || a1.Failure != "" || !a1.NextAttemptAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("first attempt: %+v", a1)
	}
	if a2.N != 2 || !a2.At.Equal(t0.Add(time.Minute)) || !a2.Succeeded || a2.StatusCode != 200 || !a2.NextAttemptAt.IsZero() {
		t.Fatalf("second attempt: %+v", a2)
	}
	if got, err := svc.GetDelivery(ctx, alice, c.Endpoint.ID, d.ID); err != nil || len(got.Attempts) != 2 || got.EventID != d.EventID {
		t.Fatalf("get: %v %+v", err, got)
	}

	// A receiver that is gone: no status, the failure's class.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	g := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: gone.URL})
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000a003", []byte(`{}`))
	svc.DeliverDue(ctx)
	gp, _ := svc.ListDeliveries(ctx, alice, g.Endpoint.ID, jobs.DeliveryPending, "", nil)
	if len(gp.Deliveries) != 1 || len(gp.Deliveries[0].Attempts) != 1 {
		t.Fatalf("gone: %+v", gp)
	}
	if a := gp.Deliveries[0].Attempts[0]; a.StatusCode != 0 || a.Failure != "connection refused" || a.NextAttemptAt.IsZero() {
		t.Fatalf("gone attempt: %+v", a)
	}

	// Pages of two, newest first, and the status filter.
	for i := range 4 {
		e.clock.Add(time.Second)
		_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000b00"+string(rune('0'+i)), []byte(`{}`))
	}
	size := int32(2)
	var all []string
	cur := ""
	for {
		p, err := svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", cur, &size)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range p.Deliveries {
			all = append(all, d.JobID)
		}
		if cur = p.NextCursor; cur == "" {
			break
		}
	}
	want := []string{"0e8a3c6e-2f4b-4f54-9f53-00000000b003", "0e8a3c6e-2f4b-4f54-9f53-00000000b002",
		"0e8a3c6e-2f4b-4f54-9f53-00000000b001", "0e8a3c6e-2f4b-4f54-9f53-00000000b000", "0e8a3c6e-2f4b-4f54-9f53-00000000a003", jobA}
	if !slices.Equal(all, want) {
		t.Fatalf("pages: %v", all)
	}
	if p, _ := svc.ListDeliveries(ctx, alice, c.Endpoint.ID, jobs.DeliverySucceeded, "", nil); len(p.Deliveries) != 2 {
		t.Fatalf("succeeded only: %d", len(p.Deliveries))
	}
	first, _ := svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", "", &size)
	big, zero := int32(101), int32(0)
	for name, err := range map[string]error{
		"status":            second(svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "done", "", nil)),
		"page_size":         second(svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", "", &big)),
		"page_size zero":    second(svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", "", &zero)),
		"cursor":            second(svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", "forged.cursor", nil)),
		"cursor of filter":  second(svc.ListDeliveries(ctx, alice, c.Endpoint.ID, jobs.DeliveryPending, first.NextCursor, nil)),
		"cursor of another": second(svc.ListDeliveries(ctx, alice, g.Endpoint.ID, "", first.NextCursor, nil)),
	} {
		field := "cursor"
		if name == "status" || strings.HasPrefix(name, "page_size") {
			field = strings.Fields(name)[0]
		}
		t.Run(name, func(t *testing.T) { wantProblem(t, err, problem.InvalidInput, field) })
	}
}

func TestResendAndTestEvent(t *testing.T) { eachStore(t, resendAndTestEvent) }

// resendAndTestEvent: a resend is a new delivery of the same event (same
// event id and body, new delivery id); a test event reaches an endpoint
// whatever it subscribes to; at most MaxPendingManual wait per endpoint;
// a disabled endpoint refuses both.
func resendAndTestEvent(t *testing.T, e *env) {
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	rec := newReceiver(t, http.StatusOK)
	c := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: rec.srv.URL, EventTypes: []string{jobs.EventJobCompleted}})
	body := []byte(`{"event":"job.completed","id":"` + jobA + `"}`)
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, jobA, body)
	svc.DeliverDue(ctx)
	orig := rec.deliveries()[0]
	page, _ := svc.ListDeliveries(ctx, alice, c.Endpoint.ID, "", "", nil)
	origID := page.Deliveries[0].ID

	e.clock.Add(time.Hour)
	r, err := svc.ResendDelivery(ctx, alice, c.Endpoint.ID, origID)
	if err != nil || r.ID == origID || r.Status != jobs.DeliveryPending || r.Origin != jobs.OriginResend || r.ResendOf != origID ||
		r.EventID != page.Deliveries[0].EventID || r.JobID != jobA {
		t.Fatalf("resend: %v %+v", err, r)
	}
	if n := svc.DeliverDue(ctx); n != 1 {
		t.Fatalf("%d attempts", n)
	}
	again := rec.deliveries()[1]
	if again.header.Get(webhook.DeliveryHeader) != r.ID || again.header.Get(webhook.EventIDHeader) != orig.header.Get(webhook.EventIDHeader) ||
		string(again.body) != string(body) {
		t.Fatalf("resent: %v %s", again.header, again.body)
	}
	if err := webhook.Verify(c.Secret, again.header.Get(webhook.SignatureHeader), again.body, e.clock.Now()); err != nil {
		t.Fatalf("resend signature: %v", err)
	}

	tv, err := svc.SendTestEvent(ctx, alice, c.Endpoint.ID)
	if err != nil || tv.Event != jobs.EventWebhookTest || tv.Origin != jobs.OriginTest || tv.JobID != "" {
		t.Fatalf("test: %v %+v", err, tv)
	}
	svc.DeliverDue(ctx)
	td := rec.deliveries()[2]
	var tb struct {
		Event, ID, Message, EndpointID string
		Test                           bool
	}
	_ = json.Unmarshal(td.body, &tb)
	if td.header.Get(webhook.EventHeader) != jobs.EventWebhookTest || tb.Event != jobs.EventWebhookTest || !tb.Test ||
		tb.ID != td.header.Get(webhook.EventIDHeader) || !strings.Contains(tb.Message, "test") {
		t.Fatalf("test delivery: %v %s", td.header, td.body)
	}
	if err := webhook.Verify(c.Secret, td.header.Get(webhook.SignatureHeader), td.body, e.clock.Now()); err != nil {
		t.Fatalf("test signature: %v", err)
	}

	// Five pending at most: the sixth is refused cheaply, with a wait.
	rec.status.Store(http.StatusServiceUnavailable)
	for i := range jobs.MaxPendingManual {
		if _, err := svc.SendTestEvent(ctx, alice, c.Endpoint.ID); err != nil {
			t.Fatalf("test %d: %v", i, err)
		}
	}
	_, err = svc.ResendDelivery(ctx, alice, c.Endpoint.ID, origID)
	if p := rpc.Problem(err); p.Type != problem.RateLimited || p.RetryAfter <= 0 {
		t.Fatalf("sixth: %v %+v", err, p)
	}
	if _, err := svc.SendTestEvent(ctx, alice, c.Endpoint.ID); rpc.Problem(err).Type != problem.RateLimited {
		t.Fatalf("seventh: %v", err)
	}

	// Disabled: enabling comes first.
	e.disable(t, c.Endpoint.ID)
	if _, err := svc.SendTestEvent(ctx, alice, c.Endpoint.ID); rpc.Problem(err).Type != problem.Conflict {
		t.Fatalf("test to a disabled endpoint: %v", err)
	}
}

// disable makes an endpoint disabled as DisableAfter exhausted deliveries
// would, through the store.
func (e *env) disable(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	ep, err := e.store.EndpointByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for range jobs.DisableAfter {
		d := jobs.Delivery{ID: uuid.NewString(), AccountID: ep.AccountID, EndpointID: id, JobID: uuid.NewString(), Event: jobs.EventJobCompleted,
			Body: []byte(`{}`), Status: jobs.DeliveryPending, NextAttemptAt: t0, CreatedAt: t0}
		if _, err := e.store.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.RecordAttempt(ctx, d.ID, jobs.Attempt{At: t0, Exhausted: true, StatusCode: 500}); err != nil {
			t.Fatal(err)
		}
	}
	if ep, _ = e.store.EndpointByID(ctx, id); ep.Status != jobs.EndpointDisabled {
		t.Fatalf("not disabled: %+v", ep)
	}
}

func TestRotationOverlap(t *testing.T) { eachStore(t, rotationOverlap) }

// rotationOverlap: after a rotation, deliveries carry a signature with
// each secret until RotationOverlap has passed, then the new one's only;
// the clock moves, nothing sleeps.
func rotationOverlap(t *testing.T, e *env) {
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	rec := newReceiver(t, http.StatusOK)
	c := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: rec.srv.URL})
	old := c.Secret
	r, err := svc.RotateWebhookSecret(ctx, alice, c.Endpoint.ID)
	if err != nil || r.Secret == old || !strings.HasPrefix(r.Secret, "whsec_") || !r.Endpoint.PrevSecretUntil.Equal(t0.Add(jobs.RotationOverlap)) {
		t.Fatalf("rotate: %v %+v", err, r)
	}
	if es, _ := svc.ListWebhooks(ctx, alice); !es[0].PrevSecretUntil.Equal(t0.Add(jobs.RotationOverlap)) || es[0].Secret != nil || es[0].PrevSecret != nil {
		t.Fatalf("listed during the overlap: %+v", es[0])
	}
	send := func(job string) delivery {
		t.Helper()
		_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, job, []byte(`{"id":"`+job+`"}`))
		svc.DeliverDue(ctx)
		got := rec.deliveries()
		return got[len(got)-1]
	}
	for _, at := range []time.Duration{0, jobs.RotationOverlap - time.Second} {
		e.clock.Add(at)
		d := send(uuid.NewString())
		h := d.header.Get(webhook.SignatureHeader)
		if strings.Count(h, "v1=") != 2 {
			t.Fatalf("at +%v: header %q", at, h)
		}
		for _, sec := range []string{r.Secret, old} {
			if err := webhook.Verify(sec, h, d.body, e.clock.Now()); err != nil {
				t.Fatalf("at +%v: %v", at, err)
			}
		}
	}
	e.clock.Add(time.Second) // the overlap is over
	d := send(uuid.NewString())
	h := d.header.Get(webhook.SignatureHeader)
	if strings.Count(h, "v1=") != 1 || webhook.Verify(r.Secret, h, d.body, e.clock.Now()) != nil {
		t.Fatalf("after the overlap: %q", h)
	}
	if err := webhook.Verify(old, h, d.body, e.clock.Now()); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("old secret after the overlap: %v", err)
	}
	if es, _ := svc.ListWebhooks(ctx, alice); !es[0].PrevSecretUntil.IsZero() {
		t.Fatalf("listed after the overlap: %+v", es[0])
	}
}

func TestEnableWebhook(t *testing.T) { eachStore(t, enableWebhook) }

// enableWebhook: a disabled endpoint gets nothing; enabled, its failures
// are reset and new events reach it.
func enableWebhook(t *testing.T, e *env) {
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	rec := newReceiver(t, http.StatusOK)
	c := mustCreate(t, svc, alice, jobs.WebhookSettings{URL: rec.srv.URL})
	e.disable(t, c.Endpoint.ID)
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, jobA, []byte(`{}`))
	svc.DeliverDue(ctx)
	if len(rec.deliveries()) != 0 {
		t.Fatal("a disabled endpoint got a delivery")
	}
	got, err := svc.EnableWebhook(ctx, alice, c.Endpoint.ID)
	if err != nil || got.Status != jobs.EndpointActive || got.ConsecutiveFailures != 0 || got.Secret != nil {
		t.Fatalf("enable: %v %+v", err, got)
	}
	if again, err := svc.EnableWebhook(ctx, alice, c.Endpoint.ID); err != nil || again.Status != jobs.EndpointActive {
		t.Fatalf("enable twice: %v %+v", err, again)
	}
	_ = svc.Fanout(ctx, alice.AccountID, alice.Mode, "0e8a3c6e-2f4b-4f54-9f53-00000000a009", []byte(`{}`))
	svc.DeliverDue(ctx)
	if len(rec.deliveries()) != 1 {
		t.Fatalf("%d deliveries after enabling", len(rec.deliveries()))
	}
}

func TestFinanceEventCoalescing(t *testing.T) { eachStore(t, financeEventCoalescing) }

// financeEventCoalescing: a burst of 50 sync_updates_available events for
// one user and grant yields one delivery per subscribed endpoint; once it
// is delivered the next event yields the next; an endpoint subscribed only
// to job.completed and one of the other mode get none.
func financeEventCoalescing(t *testing.T, e *env) {
	ctx := context.Background()
	svc := e.service(t, &fakeConverter{}, nil)
	fin, jobsOnly, testMode := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
	mustCreate(t, svc, alice, jobs.WebhookSettings{URL: fin.srv.URL, EventTypes: []string{"transactions.sync_updates_available"}})
	mustCreate(t, svc, alice, jobs.WebhookSettings{URL: jobsOnly.srv.URL, EventTypes: []string{jobs.EventJobCompleted}})
	mustCreate(t, svc, aliceTest, jobs.WebhookSettings{URL: testMode.srv.URL})
	event := func() jobs.Event {
		id := uuid.NewString()
		return jobs.Event{AccountID: alice.AccountID, Mode: "live", Type: "transactions.sync_updates_available", ID: id,
			CoalesceKey: "user-1|grant-1", Body: []byte(`{"id":"` + id + `"}`)}
	}
	burst := func() string {
		first := event()
		for i := range 50 {
			ev := event()
			if i == 0 {
				ev = first
			}
			if err := svc.FanoutEvent(ctx, ev); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(time.Millisecond)
		}
		return first.ID
	}
	id1 := burst()
	if n := svc.DeliverDue(ctx); n != 1 {
		t.Fatalf("%d attempts for a burst, want 1", n)
	}
	id2 := burst()
	if n := svc.DeliverDue(ctx); n != 1 {
		t.Fatalf("%d attempts for the second burst, want 1", n)
	}
	got := fin.deliveries()
	if len(got) != 2 || got[0].header.Get(webhook.EventIDHeader) != id1 || got[1].header.Get(webhook.EventIDHeader) != id2 {
		t.Fatalf("deliveries: %d", len(got))
	}
	if len(jobsOnly.deliveries()) != 0 || len(testMode.deliveries()) != 0 {
		t.Fatalf("job-only endpoint got %d, test endpoint %d", len(jobsOnly.deliveries()), len(testMode.deliveries()))
	}
	// A redelivered event (the same id) adds nothing either.
	if err := svc.FanoutEvent(ctx, jobs.Event{AccountID: alice.AccountID, Mode: "live", Type: "transactions.sync_updates_available",
		ID: id2, Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if n := svc.DeliverDue(ctx); n != 0 {
		t.Fatalf("redelivered event: %d attempts", n)
	}
}
