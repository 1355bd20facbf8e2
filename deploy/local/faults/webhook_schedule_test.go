package faults

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ledgerlane/platform/services/jobs"
)

// scheduleLate is how late an attempt may arrive after it was due: the jobs
// replicas claim due deliveries once a second (docs/jobs.md), and the box is
// shared.
const scheduleLate = 2 * time.Second

// webhookSchedule: the receiver fails every attempt for one tenant. Each of
// its jobs' deliveries is attempted exactly len(schedule) times, at its
// offsets from the delivery's creation (never early, at most scheduleLate
// late), then exhausted; the DisableAfter-th exhausted delivery disables
// the endpoint (GET /v1/webhooks shows it), after which a completed job
// gets no delivery and no attempt arrives. Deleting and re-creating the
// endpoint (the spec's re-enable) while the receiver answers again resumes
// deliveries: the next job's arrives at its first attempt.
func webhookSchedule(e *env) string {
	const name = "webhook-schedule"
	sched := e.c.retrySchedule
	last := sched[len(sched)-1]
	tn := e.tenant(name)
	e.recv.setFailAll(name, true)
	accepted := map[string]int{}
	submit := func(key string) string {
		e.t.Helper()
		id, _ := e.submit(tn, 1, key, time.Minute)
		if id == "" {
			e.t.Fatalf("batch %s was not accepted", key)
		}
		accepted[id] = 1
		return id
	}

	// DisableAfter jobs at once: their deliveries fail side by side, and the
	// last to be exhausted disables the endpoint.
	began := time.Now()
	for i := range jobs.DisableAfter {
		submit(fmt.Sprintf("%s-%d", name, i))
	}
	var eps []endpoint
	disabled := waitFor(last+2*time.Minute, 200*time.Millisecond, func() bool {
		var err error
		eps, err = tn.webhooks()
		return err == nil && len(eps) == 1 && eps[0].Status == "disabled"
	})
	disabledAfter := time.Since(began)
	if !disabled {
		e.t.Fatalf("the endpoint is not disabled %s after %d failing jobs: %+v", last+2*time.Minute, jobs.DisableAfter, eps)
	}
	if eps[0].ConsecutiveFailures != jobs.DisableAfter {
		e.t.Errorf("disabled endpoint: consecutive_failures %d, want %d", eps[0].ConsecutiveFailures, jobs.DisableAfter)
	}
	old := eps[0]

	// Every delivery as stored and as received: len(sched) attempts, each
	// at its offset from the delivery's creation.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := e.c.deliveriesOf(ctx, tn.account)
	if err != nil {
		e.t.Fatal(err)
	}
	seen, attemptsAtDisable := e.recv.tenantAttempts(name)
	byID := map[string]attemptRecord{}
	for _, a := range seen {
		byID[a.id] = a
	}
	var worst time.Duration
	exhausted := 0
	for _, d := range rows {
		a := byID[d.id]
		if d.status == "failed" && d.attempts == len(sched) {
			exhausted++
		} else {
			e.t.Errorf("delivery %s of job %s: %s after %d attempts, want failed after %d", d.id, d.job, d.status, d.attempts, len(sched))
		}
		if len(a.arrivals) != len(sched) {
			e.t.Errorf("delivery %s of job %s: %d attempts arrived, want %d", d.id, d.job, len(a.arrivals), len(sched))
		}
		for i, at := range a.arrivals[:min(len(a.arrivals), len(sched))] {
			// created_at is truncated to the microsecond, never later
			// than the delivery's creation: an attempt is never early.
			late := at.Sub(d.createdAt) - sched[i]
			worst = max(worst, late)
			if late < 0 || late > scheduleLate {
				e.t.Errorf("delivery %s attempt %d arrived %s after its creation, due at %s (tolerance +%s)",
					d.id, i+1, at.Sub(d.createdAt).Round(time.Millisecond), sched[i], scheduleLate)
			}
		}
	}
	if len(rows) != jobs.DisableAfter || len(seen) != jobs.DisableAfter {
		e.t.Errorf("%d deliveries stored and %d received, want one per job: %d", len(rows), len(seen), jobs.DisableAfter)
	}

	// Disabled: a job that completes now gets no delivery, and no attempt
	// arrives for the schedule's whole span and a little more.
	quiet := submit(name + "-disabled")
	if _, done := e.c.waitJobsDone(tn.account, 2*time.Minute); !done {
		e.t.Fatalf("job %s did not complete", quiet)
	}
	time.Sleep(last + 3*time.Second)
	if _, n := e.recv.tenantAttempts(name); n != attemptsAtDisable {
		e.t.Errorf("%d attempts arrived after the endpoint was disabled", n-attemptsAtDisable)
	}
	rows, err = e.c.deliveriesOf(ctx, tn.account)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range rows {
		if d.job == quiet {
			e.t.Errorf("a delivery (%s, %d attempts) was created for job %s after the endpoint was disabled", d.status, d.attempts, quiet)
		}
	}

	// Re-enable (delete and re-create, as the spec says) with the receiver
	// answering again.
	if r := tn.do(http.MethodDelete, "/v1/webhooks/"+old.ID, "", nil); r.status != http.StatusOK {
		e.t.Fatalf("DELETE /v1/webhooks/%s: %d %s", old.ID, r.status, r.body)
	}
	r := tn.do(http.MethodPost, "/v1/webhooks", "", []byte(`{"url":"`+tn.hookURL+`"}`))
	if r.status != http.StatusOK {
		e.t.Fatalf("re-create the webhook: %d %s", r.status, r.body)
	}
	secret, _ := r.json["secret"].(string)
	e.recv.addSecret(name, secret)
	e.recv.setFailAll(name, false)
	resumed := submit(name + "-resumed")
	counts := e.verifyHooked(tn, accepted, []string{resumed}, 0, 2*time.Minute)
	if _, attempts := e.recv.deliveries(resumed); len(attempts) != 1 || attempts[0] != 1 {
		e.t.Errorf("job %s after the re-creation: attempts %v, want one delivery at its first attempt", resumed, attempts)
	}
	if eps, err = tn.webhooks(); err != nil || len(eps) != 1 || eps[0].Status != "active" || eps[0].ConsecutiveFailures != 0 || eps[0].ID == old.ID {
		e.t.Errorf("after the re-creation: endpoints %+v (%v), want one new active endpoint", eps, err)
	}
	return fmt.Sprintf("schedule %s: %d deliveries exhausted after %d attempts each, latest attempt +%s late; endpoint disabled %s after the first submission (consecutive_failures %d), then 0 attempts in %s; re-created: delivered at attempt 1; %s",
		suiteRetrySchedule, exhausted, len(sched), worst.Round(time.Millisecond), disabledAfter.Round(time.Second),
		old.ConsecutiveFailures, last+3*time.Second, counts)
}
