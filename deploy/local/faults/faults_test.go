package faults

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// scenario is one fault injected while work flows. run returns the counts
// printed in the suite's table; it fails t when an assertion does not hold.
type scenario struct {
	name  string
	quick bool // part of FAULTS=quick, the bounded subset CI runs
	run   func(e *env) string
}

// env is what a scenario works with.
type env struct {
	t     *testing.T
	c     *cluster
	recv  *receiver
	msg   []byte
	quick bool
}

// size picks the full or the quick figure.
func (e *env) size(full, quick int) int {
	if e.quick {
		return quick
	}
	return full
}

func (e *env) dur(full, quick time.Duration) time.Duration {
	if e.quick {
		return quick
	}
	return full
}

func (e *env) tenant(name string) *tenant {
	e.t.Helper()
	tn, err := e.c.newTenant(name, e.recv)
	if err != nil {
		e.t.Fatalf("provision %s: %v", name, err)
	}
	return tn
}

// submit submits a batch of n items with key, retrying with the same key
// (transport errors, 5xx, 409 in-flight) until it is answered 202 or timeout
// passes, as a careful client does. It returns the job id ("" on timeout) and
// every status seen (0 for no answer).
func (e *env) submit(tn *tenant, n int, key string, timeout time.Duration) (string, []int) {
	body := batchBody(e.msg, n)
	var seen []int
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		r := tn.do(http.MethodPost, "/v1/convert/batch", key, body)
		seen = append(seen, r.status)
		switch {
		case r.err == nil && r.status == http.StatusAccepted:
			id, _ := r.json["id"].(string)
			return id, seen
		case r.err == nil && r.status == http.StatusInternalServerError:
			e.t.Errorf("batch submission answered 500: %s", r.body)
		case r.err == nil && r.status < 500 && r.problemType() != "idempotency-in-flight":
			e.t.Errorf("batch submission answered %d: %s", r.status, r.body)
			return "", seen
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "", seen
}

// waitProgress waits until the job of n items has stored at least min
// outcomes and returns how many it had. A job already finished fails the
// scenario: its fault would have hit no batch.
func (e *env) waitProgress(tn *tenant, job string, min, n int) int {
	e.t.Helper()
	done := 0
	if !waitFor(2*time.Minute, 50*time.Millisecond, func() bool {
		rows, err := e.c.jobsOf(context.Background(), tn.account)
		if err != nil {
			return false
		}
		for _, r := range rows {
			if r.id == job {
				done = r.succeeded + r.failed
				return done >= min
			}
		}
		return false
	}) {
		e.t.Fatalf("job %s did not reach %d items", job, min)
	}
	if done >= n {
		e.t.Fatalf("job %s finished (%d items) before the fault: the batch is too small for this machine", job, n)
	}
	return done
}

// verify is the common verdict of a scenario with batches: the jobs stored
// for the tenant are exactly those answered 202 (accepted: id → items), each
// completed with every item ok once (the store's counters, its item rows and
// the API agree), one job.completed delivery id per job, and the account's
// usage equals the units of every 2xx answer (extra: synchronous 2xx).
func (e *env) verify(tn *tenant, accepted map[string]int, extra int64, timeout time.Duration) string {
	e.t.Helper()
	return e.verifyHooked(tn, accepted, slices.Sorted(maps.Keys(accepted)), extra, timeout)
}

// verifyHooked is verify where only the jobs hooked must have their
// job.completed delivered (the others' endpoint failed or was disabled).
func (e *env) verifyHooked(tn *tenant, accepted map[string]int, hooked []string, extra int64, timeout time.Duration) string {
	t := e.t
	t.Helper()
	rows, done := e.c.waitJobsDone(tn.account, timeout)
	if !done {
		var open []string
		for _, r := range rows {
			if r.status != "completed" {
				open = append(open, fmt.Sprintf("%s %s %d/%d pending %d", r.id, r.status, r.succeeded+r.failed, r.items, r.pending))
			}
		}
		t.Errorf("not every job completed within %s: %s", timeout, strings.Join(open, "; "))
	}
	stored := map[string]jobRow{}
	var items, ok, failed, orphans int
	for _, r := range rows {
		stored[r.id] = r
		if _, yes := accepted[r.id]; !yes {
			orphans++
			t.Errorf("job %s (%d items) exists but its client never got a 202 for it", r.id, r.items)
		}
		items += r.items
		ok += r.itemsOK
		failed += r.itemsFailed
		if r.succeeded != r.items || r.failed != 0 || r.pending != 0 || r.itemsOK != r.items || r.itemsFailed+r.itemsPending != 0 {
			t.Errorf("job %s: %d items; counters ok %d failed %d pending %d; item rows ok %d failed %d pending %d",
				r.id, r.items, r.succeeded, r.failed, r.pending, r.itemsOK, r.itemsFailed, r.itemsPending)
		}
	}
	var units int64
	for id, n := range accepted {
		units += int64(n)
		if _, yes := stored[id]; !yes {
			t.Errorf("job %s was answered 202 but is not stored", id)
		}
	}
	// The client's view of a few jobs (each GET carries every result).
	ids := slices.Sorted(maps.Keys(accepted))
	for _, id := range ids[:min(len(ids), 3)] {
		if err := tn.checkJobThroughAPI(id, accepted[id]); err != nil {
			t.Error(err)
		}
	}
	retried, err := e.recv.waitWebhooks(hooked, 3*time.Minute)
	if err != nil {
		t.Error(err)
	}
	used, exact := tn.waitUsage(units+extra, time.Minute)
	if !exact {
		t.Errorf("usage %d, want %d (the 2xx answered)", used, units+extra)
	}
	// Every job is complete, so the work stream must empty: a message a
	// crash left behind is discarded within the jobs' leftover pass (5 s).
	var left uint64
	var state string
	var werr error
	if !waitFor(30*time.Second, 250*time.Millisecond, func() bool { left, state, werr = e.c.workStream(); return werr == nil && left == 0 }) {
		t.Errorf("the work stream still holds %d messages with every job complete: %s (%v)", left, state, werr)
	}
	return fmt.Sprintf("jobs %d/%d completed, items %d ok %d failed %d, orphans %d, webhooks %d (%d retried), usage %d=%d, work stream %d left",
		len(rows), len(accepted), items, ok, failed, orphans, len(hooked), retried, used, units+extra, left)
}

// unchangedServices fails when a service process was restarted since before.
func (e *env) unchangedServices(before map[string]int) {
	e.t.Helper()
	if after := e.c.serviceStarts(); !maps.Equal(before, after) {
		e.t.Errorf("a service was restarted: before %v after %v", before, after)
	}
	if err := e.c.allRunning(); err != nil {
		e.t.Error(err)
	}
}

// probe calls f every 500 ms until stop is closed and counts the statuses (0:
// no answer).
func probe(stop <-chan struct{}, f func() int) map[int]int {
	seen := map[int]int{}
	for {
		seen[f()]++
		select {
		case <-stop:
			return seen
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// load sends synchronous conversions from workers, each pausing between
// requests, until stop is closed; the function it returns waits for them and
// returns the statuses seen (0: no answer) and the first transport errors.
func (e *env) load(tn *tenant, workers int, pause time.Duration, stop <-chan struct{}) func() (map[int]int, []string) {
	var mu sync.Mutex
	statuses := map[int]int{}
	var errs []string
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := tn.convert(e.msg)
				mu.Lock()
				statuses[r.status]++
				if r.err != nil && len(errs) < 5 {
					errs = append(errs, r.err.Error())
				}
				mu.Unlock()
				time.Sleep(pause)
			}
		}()
	}
	return func() (map[int]int, []string) { wg.Wait(); return statuses, errs }
}

func statusList(m map[int]int) string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(m)) {
		name := strconv.Itoa(s)
		if s == 0 {
			name = "no answer"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, m[s]))
	}
	return strings.Join(parts, " ")
}

func twoXX(m map[int]int) int64 {
	var n int64
	for s, c := range m {
		if s >= 200 && s < 300 {
			n += int64(c)
		}
	}
	return n
}

var scenarios = []scenario{
	{name: "kill -9 jobs mid-batch", run: killJobsMidBatch},
	{name: "PostgreSQL stopped", quick: true, run: postgresStopped},
	{name: "converter down 5 s", quick: true, run: converterDown},
	{name: "finance writes, PostgreSQL stopped", run: financeWrites},
	{name: "kill -9 jobs mid-submission", run: killJobsMidSubmission},
	{name: "kill -9 jobs mid-submission, no keys", run: killJobsMidSubmissionNoKeys},
	{name: "Redis stopped", run: func(e *env) string { return redisOutage(e, false) }},
	{name: "Redis paused (SIGSTOP) 10 s", quick: true, run: func(e *env) string { return redisOutage(e, true) }},
	{name: "Redis stalls 0.3, 0.5, 0.8 s", quick: true, run: redisStalls},
	{name: "NATS restarted with its store", run: func(e *env) string { return natsRestarted(e, false) }},
	{name: "NATS kill -9", quick: true, run: func(e *env) string { return natsRestarted(e, true) }},
	{name: "SIGTERM to the gateway", quick: true, run: gatewaySIGTERM},
	{name: "50 concurrent duplicates", quick: true, run: duplicates},
	// The crash took 9 s quick, inside the quick subset's budget of 15 s a
	// scenario; the webhook scenario spans the retry schedule twice (over
	// 20 s) and runs in the full suite only.
	{name: "PostgreSQL kill -9", quick: true, run: postgresKilled},
	{name: "webhook schedule and auto-disable", run: webhookSchedule},
}

// TestFaults runs the scenarios one after the other on one cluster and prints
// one row per scenario. FAULTS=all runs every scenario, FAULTS=quick the
// bounded subset (smaller batches, shorter outages); FAULTS_RUN=<substring>
// keeps only matching scenarios.
func TestFaults(t *testing.T) {
	mode := os.Getenv("FAULTS")
	switch mode {
	case "":
		t.Skip("FAULTS is not set: `make faults` runs the fault suite (FAULTS=quick for the bounded subset)")
	case "all", "quick":
	default:
		t.Fatalf("FAULTS=%q: want all or quick", mode)
	}
	msg := []byte(sampleMessage)
	began := time.Now()
	c := startCluster(t)
	recv, err := newReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer recv.close()
	t.Logf("faults: cluster up in %s (PostgreSQL :%d, Redis :%d, NATS :%d, gateway %s)",
		time.Since(began).Round(time.Second), c.pgPort, c.redisPort, c.natsPort, c.baseURL)

	type row struct {
		name, verdict, counts string
		took                  time.Duration
	}
	var rows []row
	for i, sc := range scenarios {
		if mode == "quick" && !sc.quick {
			continue
		}
		if only := os.Getenv("FAULTS_RUN"); only != "" && !strings.Contains(strings.ToLower(sc.name), strings.ToLower(only)) {
			continue
		}
		start := time.Now()
		var counts string
		held := t.Run(fmt.Sprintf("%02d %s", i+1, sc.name), func(t *testing.T) {
			e := &env{t: t, c: c, recv: recv, msg: msg, quick: mode == "quick"}
			counts = sc.run(e)
		})
		verdict := "held"
		if !held {
			verdict = "FAILED"
			c.dumpLogs()
		}
		rows = append(rows, row{sc.name, verdict, counts, time.Since(start).Round(time.Second)})
		// The next scenario starts on a whole cluster.
		if !c.waitReady(2 * time.Minute) {
			t.Fatalf("the cluster did not become ready again after %q", sc.name)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nfault suite (FAULTS=%s), %s in all\n", mode, time.Since(began).Round(time.Second))
	fmt.Fprintf(&b, "| %-34s | %-7s | %-6s | %s\n", "scenario", "verdict", "took", "counts")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %-34s | %-7s | %-6s | %s\n", r.name, r.verdict, r.took, r.counts)
	}
	fmt.Print(b.String())
}

// killJobsMidBatch: a batch runs; each jobs replica is killed (SIGKILL) in
// turn while it works and started again a second later, as Kubernetes
// restarts a pod. The items a dead worker held come back after AckWait. The
// receiver fails each delivery's first attempt, so every webhook goes
// through the retry schedule (1 minute).
func killJobsMidBatch(e *env) string {
	n := e.size(1000, 300)
	tn := e.tenant("kill-jobs-batch")
	e.recv.setFailFirst("kill-jobs-batch")
	job, _ := e.submit(tn, n, "kill-jobs-batch-1", time.Minute)
	if job == "" {
		e.t.Fatal("the batch was not accepted")
	}
	var at []string
	for i, p := range e.c.jobs {
		at = append(at, fmt.Sprintf("%s at %d/%d", p.name, e.waitProgress(tn, job, n*(i+1)/4, n), n))
		p.kill9()
		time.Sleep(time.Second)
		if err := e.c.restart(p, portOf(p)); err != nil {
			e.t.Fatal(err)
		}
	}
	return "killed " + strings.Join(at, ", ") + "; " + e.verify(tn, map[string]int{job: n}, 0, 6*time.Minute)
}

// postgresStopped: PostgreSQL stops (fast shutdown) for 30 s (12 s quick)
// during a batch. While it is down, batch submissions and usage answer 503
// (never 500) and /v1/ready 503; afterwards the batch completes without any
// service being restarted.
func postgresStopped(e *env) string {
	n := e.size(1000, 300)
	outage := e.dur(30*time.Second, 12*time.Second)
	tn := e.tenant("postgres-stopped")
	job, _ := e.submit(tn, n, "postgres-stopped-1", time.Minute)
	if job == "" {
		e.t.Fatal("the batch was not accepted")
	}
	before := e.c.serviceStarts()
	at := e.waitProgress(tn, job, n/10, n)
	e.c.pg.stop(syscall.SIGINT, 30*time.Second)
	down := time.Now()
	stop := make(chan struct{})
	var submits, ready map[int]int
	var wg sync.WaitGroup
	var probeJobs sync.Map
	wg.Add(2)
	go func() {
		defer wg.Done()
		i := 0
		submits = probe(stop, func() int {
			i++
			r := tn.do(http.MethodPost, "/v1/convert/batch", fmt.Sprintf("pg-probe-%d", i), batchBody(e.msg, 1))
			if id, _ := r.json["id"].(string); r.status == http.StatusAccepted {
				probeJobs.Store(id, 1)
			}
			return r.status
		})
	}()
	go func() {
		defer wg.Done()
		ready = probe(stop, func() int {
			r := tn.do(http.MethodGet, "/v1/ready", "", nil)
			return r.status
		})
	}()
	time.Sleep(time.Until(down.Add(outage)))
	close(stop)
	wg.Wait()
	if err := e.c.restart(e.c.pg, e.c.pgPort); err != nil {
		e.t.Fatal(err)
	}
	if submits[http.StatusInternalServerError] > 0 || submits[http.StatusServiceUnavailable] == 0 {
		e.t.Errorf("batch submissions while PostgreSQL was down: %s (want 503, never 500)", statusList(submits))
	}
	if ready[http.StatusServiceUnavailable] == 0 || ready[http.StatusOK] > 0 {
		e.t.Errorf("/v1/ready while PostgreSQL was down: %s (want 503)", statusList(ready))
	}
	accepted := map[string]int{job: n}
	probeJobs.Range(func(k, v any) bool { accepted[k.(string)] = v.(int); return true })
	counts := e.verify(tn, accepted, 0, 5*time.Minute)
	e.unchangedServices(before)
	return fmt.Sprintf("down %s at item %d/%d; submissions meanwhile %s; %s", outage, at, n, statusList(submits), counts)
}

// converterDown: both converter replicas die (SIGKILL) during a batch and
// come back 5 s later. Synchronous conversions answer 503 meanwhile; no batch
// item fails, and nothing else restarts.
func converterDown(e *env) string {
	n := e.size(1000, 300)
	tn := e.tenant("converter-down")
	job, _ := e.submit(tn, n, "converter-down-1", time.Minute)
	if job == "" {
		e.t.Fatal("the batch was not accepted")
	}
	at := e.waitProgress(tn, job, n/10, n)
	for _, p := range e.c.converters {
		p.kill9()
	}
	down := time.Now()
	stop := make(chan struct{})
	var converts map[int]int
	done := make(chan struct{})
	go func() {
		defer close(done)
		converts = probe(stop, func() int { return tn.convert(e.msg).status })
	}()
	time.Sleep(time.Until(down.Add(5 * time.Second)))
	close(stop)
	<-done
	for _, p := range e.c.converters {
		if err := e.c.restart(p, portOf(p)); err != nil {
			e.t.Fatal(err)
		}
	}
	if converts[http.StatusServiceUnavailable] == 0 || converts[http.StatusInternalServerError] > 0 || converts[http.StatusOK] > 0 {
		e.t.Errorf("conversions while the converters were down: %s (want 503)", statusList(converts))
	}
	counts := e.verify(tn, map[string]int{job: n}, 0, 5*time.Minute)
	return fmt.Sprintf("down at item %d/%d; conversions meanwhile %s; %s", at, n, statusList(converts), counts)
}

// killJobsMidSubmission: clients submit batches, each with its own
// Idempotency-Key and retrying with it until 202, while each jobs replica is
// killed in turn. Every stored job is one a client got a 202 for, and each
// client's batch ran once: a replica killed between its commit and its answer
// leaves a job whose retry (same key) must get that job, not a second one
// (docs/jobs.md, "Submission"); the row counts those retries.
func killJobsMidSubmission(e *env) string {
	clients, perClient, n := 4, e.size(6, 3), e.size(50, 20)
	tn := e.tenant("kill-jobs-submit")
	const found = "a retried submission gets the job its Idempotency-Key committed"
	foundBefore := countLog(found, e.c.jobs...)
	var mu sync.Mutex
	accepted := map[string]int{}
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range perClient {
				id, seen := e.submit(tn, n, fmt.Sprintf("submit-%d-%d", c, b), 3*time.Minute)
				mu.Lock()
				for _, s := range seen {
					statuses[s]++
				}
				if id != "" {
					accepted[id] = n
				}
				mu.Unlock()
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(accepted) }
	for i, p := range e.c.jobs {
		waitFor(time.Minute, 20*time.Millisecond, func() bool { return count() >= (i+1)*clients*perClient/3 })
		p.kill9()
		time.Sleep(time.Second)
		if err := e.c.restart(p, portOf(p)); err != nil {
			e.t.Fatal(err)
		}
	}
	wg.Wait()
	if len(accepted) != clients*perClient {
		e.t.Errorf("%d of %d batches were accepted", len(accepted), clients*perClient)
	}
	counts := e.verify(tn, accepted, 0, 6*time.Minute)
	// Retries that found the job their key had committed before the answer
	// was lost: each would have been an orphan without the stored key.
	return fmt.Sprintf("submissions %s; found by key %d; %s", statusList(statuses), countLog(found, e.c.jobs...)-foundBefore, counts)
}

// killJobsMidSubmissionNoKeys measures the window docs/jobs.md leaves open
// to clients that send no Idempotency-Key (issue 28, item 5): clients
// submit batches without keys, each with its own reference, and resubmit on
// a 5xx or a transport error (a fresh batch: nothing else is possible
// without a key) while each jobs replica is killed in turn. A replica killed
// between its commit and its answer leaves a job its client never got a
// 202 for: the row counts them. Each must still run once, unbilled (its
// attempt was answered 5xx and refunded), and its job.completed must carry
// the reference, which is how such a client recognises it.
func killJobsMidSubmissionNoKeys(e *env) string {
	clients, perClient, n := 4, e.size(6, 3), e.size(50, 20)
	tn := e.tenant("kill-jobs-nokey")
	var mu sync.Mutex
	accepted := map[string]int{}
	refs := map[string]bool{}
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range perClient {
				ref := fmt.Sprintf("nokey-%d-%d", c, b)
				mu.Lock()
				refs[ref] = true
				mu.Unlock()
				body := batchBodyRef(e.msg, n, ref)
				for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
					r := tn.do(http.MethodPost, "/v1/convert/batch", "", body)
					mu.Lock()
					statuses[r.status]++
					mu.Unlock()
					if r.err == nil && r.status == http.StatusAccepted {
						id, _ := r.json["id"].(string)
						mu.Lock()
						accepted[id] = n
						mu.Unlock()
						break
					}
					if r.err == nil && r.status < 500 {
						e.t.Errorf("batch submission answered %d: %s", r.status, r.body)
						break
					}
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(accepted) }
	for i, p := range e.c.jobs {
		waitFor(time.Minute, 20*time.Millisecond, func() bool { return count() >= (i+1)*clients*perClient/3 })
		p.kill9()
		time.Sleep(time.Second)
		if err := e.c.restart(p, portOf(p)); err != nil {
			e.t.Fatal(err)
		}
	}
	wg.Wait()
	if len(accepted) != clients*perClient {
		e.t.Errorf("%d of %d batches were accepted", len(accepted), clients*perClient)
	}
	rows, done := e.c.waitJobsDone(tn.account, 6*time.Minute)
	if !done {
		e.t.Errorf("not every job completed")
	}
	var ids []string
	unknown, recognised, items := 0, 0, 0
	for _, r := range rows {
		ids = append(ids, r.id)
		items += r.itemsOK
		if r.itemsOK != r.items {
			e.t.Errorf("job %s: %d of %d items ok", r.id, r.itemsOK, r.items)
		}
		if _, ok := accepted[r.id]; !ok {
			unknown++
		}
	}
	if _, err := e.recv.waitWebhooks(ids, 3*time.Minute); err != nil {
		e.t.Error(err)
	}
	for _, r := range rows {
		if _, ok := accepted[r.id]; !ok && refs[e.recv.reference(r.id)] {
			recognised++
		}
	}
	if recognised != unknown {
		e.t.Errorf("%d of the %d jobs the clients never learned of carried their reference in job.completed", recognised, unknown)
	}
	units := int64(len(accepted) * n)
	used, exact := tn.waitUsage(units, time.Minute)
	if !exact {
		e.t.Errorf("usage %d, want %d (the 202s; a job whose answer was lost runs unbilled)", used, units)
	}
	return fmt.Sprintf("submissions %s; jobs %d for %d batches, %d the clients never learned of (all %d recognised by their reference in job.completed); items ok %d; usage %d=%d",
		statusList(statuses), len(rows), clients*perClient, unknown, recognised, items, used, units)
}

// redisOutage: conversions flow while Redis is stopped for 20 s (10 s quick)
// and started again from its append-only file, or paused with SIGSTOP for
// 10 s. The edge fails open (every conversion answered), /v1/ready answers
// 503 meanwhile, and once Redis answers again the account's usage equals the
// 2xx answered exactly: nothing lost, nothing counted twice.
func redisOutage(e *env, pause bool) string {
	name, outage := "redis-stopped", e.dur(20*time.Second, 10*time.Second)
	if pause {
		name, outage = "redis-paused", 10*time.Second
	}
	tn := e.tenant(name)
	before := e.c.serviceStarts()
	stop := make(chan struct{})
	wait := e.load(tn, 4, 100*time.Millisecond, stop)
	time.Sleep(3 * time.Second)
	if pause {
		e.c.redis.signal(syscall.SIGSTOP)
	} else {
		e.c.redis.stop(syscall.SIGTERM, 30*time.Second)
	}
	down := time.Now()
	stopReady := make(chan struct{})
	readyDone := make(chan map[int]int)
	go func() {
		readyDone <- probe(stopReady, func() int { return tn.do(http.MethodGet, "/v1/ready", "", nil).status })
	}()
	time.Sleep(time.Until(down.Add(outage)))
	close(stopReady)
	ready := <-readyDone
	if pause {
		e.c.redis.signal(syscall.SIGCONT)
	} else if err := e.c.restart(e.c.redis, e.c.redisPort); err != nil {
		e.t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	close(stop)
	statuses, errs := wait()
	if ready[http.StatusServiceUnavailable] == 0 {
		e.t.Errorf("/v1/ready while Redis was down: %s (want 503)", statusList(ready))
	}
	ok := twoXX(statuses)
	for s, c := range statuses {
		if s < 200 || s >= 300 {
			e.t.Errorf("%d conversions answered %d (fail open: every one is served): %v", c, s, errs)
		}
	}
	used, exact := tn.waitUsage(ok, time.Minute)
	if !exact {
		e.t.Errorf("usage %d, want %d (the 2xx answered)", used, ok)
	}
	e.unchangedServices(before)
	return fmt.Sprintf("out %s; conversions %s; usage %d=%d", outage, statusList(statuses), used, ok)
}

// redisStalls (issue 28): metered conversions with an Idempotency-Key each
// flow while Redis is paused (SIGSTOP) for 0.3, 0.5 and 0.8 s, a second
// apart: stalls past the gateway's 250 ms read timeout and around its
// script deadline. A client retries a key whose answer was not 2xx, as a
// client would, until it is. Then: no request is refused as in flight (a
// retry meeting its own first attempt), every key is charged once (usage =
// the keys answered 2xx, replays not charged), and every key answers its
// stored result again (none left in flight).
func redisStalls(e *env) string {
	tn := e.tenant("redis-stalls")
	before := e.c.serviceStarts()
	var (
		mu       sync.Mutex
		keys     []string
		statuses = map[int]int{}
		inFlight int
		n        atomic.Int64
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("stall-%d-%d", w, n.Add(1))
				for attempt := 0; ; attempt++ {
					r := tn.convertKeyed(e.msg, key)
					mu.Lock()
					statuses[r.status]++
					if r.status == http.StatusConflict && strings.Contains(string(r.body), "idempotency-in-flight") {
						inFlight++
					}
					mu.Unlock()
					if r.status >= 200 && r.status < 300 {
						mu.Lock()
						keys = append(keys, key)
						mu.Unlock()
						break
					}
					if attempt == 20 {
						e.t.Errorf("key %s never answered 2xx: last %d %s", key, r.status, r.body)
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	time.Sleep(2 * time.Second)
	stalls := []time.Duration{300 * time.Millisecond, 500 * time.Millisecond, 800 * time.Millisecond}
	for _, d := range stalls {
		e.c.redis.signal(syscall.SIGSTOP)
		time.Sleep(d)
		e.c.redis.signal(syscall.SIGCONT)
		time.Sleep(time.Second)
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	if inFlight > 0 {
		e.t.Errorf("%d answers were 409 idempotency-in-flight: a retry met its own earlier attempt", inFlight)
	}
	used, exact := tn.waitUsage(int64(len(keys)), time.Minute)
	if !exact {
		e.t.Errorf("usage %d, want %d (each key answered 2xx charged once)", used, len(keys))
	}
	// Every key again: a replay of its stored answer, or (a key whose
	// request ran while the gateway failed open, without idempotency) a
	// fresh run; never in flight. Replays are not charged, fresh runs are.
	fresh := int64(0)
	for _, k := range keys {
		r := tn.convertKeyed(e.msg, k)
		for range 10 {
			if r.status != http.StatusTooManyRequests {
				break
			}
			time.Sleep(time.Second) // the plan's rate: the sweep outruns it
			r = tn.convertKeyed(e.msg, k)
		}
		switch {
		case r.status == http.StatusOK && r.header.Get("Idempotency-Replayed") == "true":
		case r.status == http.StatusOK:
			fresh++
		default:
			e.t.Errorf("key %s after the stalls: %d %s", k, r.status, r.body)
		}
	}
	if after, exact := tn.waitUsage(used+fresh, time.Minute); !exact {
		e.t.Errorf("usage %d after the replays, want %d + %d fresh runs", after, used, fresh)
	}
	e.unchangedServices(before)
	return fmt.Sprintf("stalls %v; answers %s; keys %d, usage %d, in flight %d; again: %d fresh (failed open), the rest replayed",
		stalls, statusList(statuses), len(keys), used, inFlight, fresh)
}

// natsRestarted: NATS stops (SIGTERM, or SIGKILL when killed) during a batch
// and starts again on its store 2 s later; the batch completes, no service
// restarts, and the work stream ends empty (after a kill -9 it may keep
// messages whose acknowledgement the consumer had recorded: the jobs'
// leftover pass removes them, issue 28 item 3).
func natsRestarted(e *env, killed bool) string {
	n := e.size(1000, 300)
	name := "nats-restarted"
	if killed {
		name = "nats-killed"
	}
	tn := e.tenant(name)
	discarded := "jobs: discarded work messages of settled items the queue kept"
	discardedBefore := countLog(discarded, e.c.jobs...)
	job, _ := e.submit(tn, n, name+"-1", time.Minute)
	if job == "" {
		e.t.Fatal("the batch was not accepted")
	}
	before := e.c.serviceStarts()
	at := e.waitProgress(tn, job, n/10, n)
	how := "stopped"
	if killed {
		how = "killed"
		e.c.nats.kill9()
	} else {
		e.c.nats.stop(syscall.SIGTERM, 30*time.Second)
	}
	time.Sleep(2 * time.Second)
	if err := e.c.restart(e.c.nats, e.c.natsPort); err != nil {
		e.t.Fatal(err)
	}
	counts := e.verify(tn, map[string]int{job: n}, 0, 5*time.Minute)
	e.unchangedServices(before)
	return fmt.Sprintf("%s at item %d/%d; leftover passes that discarded messages %d; %s", how, at, n, countLog(discarded, e.c.jobs...)-discardedBefore, counts)
}

// gatewaySIGTERM: conversions flow while the gateway gets SIGTERM; it drains
// and exits, and starts again. No answer is a 5xx, usage equals the 2xx
// answered (a request either ran whole or never reached the gateway), and
// the gateway exits within a second of the last answer it gave (issue 28,
// item 4: it took 5.4 s when it waited on connections that never sent a
// request).
func gatewaySIGTERM(e *env) string {
	tn := e.tenant("gateway-sigterm")
	stop := make(chan struct{})
	wait := e.load(tn, 4, 20*time.Millisecond, stop)
	time.Sleep(2 * time.Second)
	signalled := time.Now()
	e.c.gateway.stop(syscall.SIGTERM, 30*time.Second)
	exited := time.Now()
	last := time.Unix(0, tn.lastAnswer.Load())
	// From the later of the signal and the last answer: a request in flight
	// at the signal is answered first.
	from := signalled
	if last.After(from) {
		from = last
	}
	lag := exited.Sub(from)
	if lag > time.Second {
		e.t.Errorf("the gateway exited %s after its last answer (%s after SIGTERM), want within 1 s", lag.Round(time.Millisecond), exited.Sub(signalled).Round(time.Millisecond))
	}
	if err := e.c.restart(e.c.gateway, e.c.gatewayPort); err != nil {
		e.t.Fatal(err)
	}
	if !e.c.waitReady(time.Minute) {
		e.t.Error("the gateway did not become ready again")
	}
	time.Sleep(2 * time.Second)
	close(stop)
	statuses, _ := wait()
	for s, c := range statuses {
		if s >= 500 {
			e.t.Errorf("%d conversions answered %d", c, s)
		}
	}
	ok := twoXX(statuses)
	used, exact := tn.waitUsage(ok, time.Minute)
	if !exact {
		e.t.Errorf("usage %d, want %d (the 2xx answered)", used, ok)
	}
	return fmt.Sprintf("exited %s after SIGTERM, %s after its last answer; conversions %s; usage %d=%d",
		exited.Sub(signalled).Round(time.Millisecond), lag.Round(time.Millisecond), statusList(statuses), used, ok)
}

// duplicates: 50 clients send the same batch with one Idempotency-Key at the
// same moment, each retrying while the first is in flight. One job runs; all
// 50 get its id; usage counts it once.
func duplicates(e *env) string {
	n := e.size(100, 20)
	tn := e.tenant("duplicates")
	var mu sync.Mutex
	ids := map[string]int{}
	statuses := map[int]int{}
	var replayed atomic.Int64
	body := batchBody(e.msg, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			deadline := time.Now().Add(time.Minute)
			for time.Now().Before(deadline) {
				r := tn.do(http.MethodPost, "/v1/convert/batch", "duplicates-1", body)
				mu.Lock()
				statuses[r.status]++
				mu.Unlock()
				if r.err == nil && r.status == http.StatusAccepted {
					if r.header.Get("Idempotency-Replayed") == "true" {
						replayed.Add(1)
					}
					id, _ := r.json["id"].(string)
					mu.Lock()
					ids[id]++
					mu.Unlock()
					return
				}
				if r.err == nil && r.problemType() != "idempotency-in-flight" {
					e.t.Errorf("duplicate answered %d: %s", r.status, r.body)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(ids) != 1 {
		e.t.Fatalf("50 duplicates got %d distinct job ids: %v", len(ids), ids)
	}
	var job string
	for id, c := range ids {
		job = id
		if c != 50 {
			e.t.Errorf("%d of 50 duplicates got the job id", c)
		}
	}
	counts := e.verify(tn, map[string]int{job: n}, 0, 3*time.Minute)
	return fmt.Sprintf("answers %s, %d replayed; %s", statusList(statuses), replayed.Load(), counts)
}

// financeWrites: writers edit transactions (PATCH with expected_version, each
// edit with its own Idempotency-Key, retried with it on a transport error, a
// 5xx or 409 in flight) while PostgreSQL stops for 10 s. Meanwhile writes
// answer 503, never 500; afterwards every edit was applied exactly once: each
// transaction's version advanced by the number of edits and holds the last
// one. An edit applied although it was answered 5xx would show as a 409
// version-conflict on its retry; a lost one as a version short.
func financeWrites(e *env) string {
	fw := e.financeWriters("finance-writes", 4, 20)
	before := e.c.serviceStarts()
	fw.start()
	time.Sleep(1500 * time.Millisecond)
	e.c.pg.stop(syscall.SIGINT, 30*time.Second)
	time.Sleep(10 * time.Second)
	if err := e.c.restart(e.c.pg, e.c.pgPort); err != nil {
		e.t.Fatal(err)
	}
	statuses := fw.wait()
	if statuses[http.StatusServiceUnavailable] == 0 {
		e.t.Errorf("no write answered 503 while PostgreSQL was down: %s", statusList(statuses))
	}
	applied := fw.check()
	e.unchangedServices(before)
	return fmt.Sprintf("down 10s; writes %s; edits applied %d of %d, each once", statusList(statuses), applied, fw.total())
}

// financeLoad is writers editing one transaction each of a seeded finance
// user: edits PATCHes of its memo, 300 ms apart, each with expected_version
// and its own Idempotency-Key, retried with that key on a transport error, a
// 5xx or 409 in flight, as a careful client does.
type financeLoad struct {
	e     *env
	tn    *tenant
	txns  []financeTxn
	edits int
	wg    sync.WaitGroup

	mu       sync.Mutex
	statuses map[int]int
	// noRetryAfter counts 503 answers without a Retry-After header.
	noRetryAfter int
	// appliedAnyway counts edits applied although answered 5xx (or not
	// answered): their retry with the same key met 409 version-conflict
	// instead of the first answer.
	appliedAnyway int
	ok            int // edits answered 200
}

type financeTxn struct {
	id      string
	version int
}

// financeWriters provisions a finance tenant and picks a transaction per
// writer; start sets them going.
func (e *env) financeWriters(name string, writers, edits int) *financeLoad {
	e.t.Helper()
	tn, err := e.c.newFinanceTenant(name)
	if err != nil {
		e.t.Fatalf("provision: %v", err)
	}
	r := tn.do(http.MethodGet, fmt.Sprintf("/v1/transactions?page_size=%d", writers), "", nil)
	data, _ := r.json["data"].([]any)
	if r.status != http.StatusOK || len(data) != writers {
		e.t.Fatalf("list transactions: %d %s", r.status, r.body)
	}
	f := &financeLoad{e: e, tn: tn, edits: edits, statuses: map[int]int{}}
	for _, d := range data {
		m, _ := d.(map[string]any)
		id, _ := m["id"].(string)
		v, _ := m["version"].(float64)
		f.txns = append(f.txns, financeTxn{id, int(v)})
	}
	return f
}

func (f *financeLoad) total() int { return len(f.txns) * f.edits }

// answered is how many edits were answered 200 so far.
func (f *financeLoad) answered() int { f.mu.Lock(); defer f.mu.Unlock(); return f.ok }

func (f *financeLoad) start() {
	for _, tx := range f.txns {
		f.wg.Go(func() { f.write(tx) })
	}
}

func (f *financeLoad) write(tx financeTxn) {
	e, tn := f.e, f.tn
	memo := func(k int) string { return fmt.Sprintf("faults edit %d", k) }
	for k := range f.edits {
		body := fmt.Sprintf(`{"expected_version": %d, "memo": %q}`, tx.version+k, memo(k))
		deadline := time.Now().Add(2 * time.Minute)
		unsure := false // an earlier attempt of this edit may have been applied
		for {
			r := tn.do(http.MethodPatch, "/v1/transactions/"+tx.id, fmt.Sprintf("edit-%s-%d", tx.id, k), []byte(body))
			f.mu.Lock()
			f.statuses[r.status]++
			if r.err == nil && r.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") == "" {
				f.noRetryAfter++
			}
			if r.err == nil && r.status == http.StatusOK {
				f.ok++
			}
			f.mu.Unlock()
			if r.err == nil && r.status == http.StatusOK {
				break
			}
			if r.err == nil && r.status == http.StatusConflict && unsure && r.problemType() != "idempotency-in-flight" {
				// The retry of an edit whose earlier attempt got no 2xx found
				// the version moved: was it this edit, applied although
				// answered 5xx? Then the key did not replay its answer.
				g := tn.do(http.MethodGet, "/v1/transactions/"+tx.id, "", nil)
				got, _ := g.json["data"].(map[string]any)
				if v, _ := got["version"].(float64); int(v) == tx.version+k+1 && got["memo"] == memo(k) {
					f.mu.Lock()
					f.appliedAnyway++
					f.mu.Unlock()
					e.t.Errorf("edit %d of %s was applied although answered 5xx or not at all: its retry with the same Idempotency-Key answered 409 %s", k, tx.id, r.problemType())
					break
				}
			}
			if r.err == nil && r.status < 500 && r.problemType() != "idempotency-in-flight" {
				e.t.Errorf("edit %d of %s answered %d: %s", k, tx.id, r.status, r.body)
				return
			}
			if r.status == http.StatusInternalServerError || time.Now().After(deadline) {
				e.t.Errorf("edit %d of %s answered %d: %s", k, tx.id, r.status, r.body)
				return
			}
			if r.err != nil || r.status >= 500 {
				unsure = true
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// wait waits for the writers and returns the statuses they saw (0: no
// answer).
func (f *financeLoad) wait() map[int]int {
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.statuses)
}

// check reads every transaction back: its version advanced by exactly the
// edits and it holds the last one (a lost edit leaves it short, a doubled
// one cannot pass expected_version). It returns the edits applied.
func (f *financeLoad) check() int {
	applied := 0
	for _, tx := range f.txns {
		r := f.tn.do(http.MethodGet, "/v1/transactions/"+tx.id, "", nil)
		got, _ := r.json["data"].(map[string]any)
		v, _ := got["version"].(float64)
		if r.status != http.StatusOK || int(v) != tx.version+f.edits || got["memo"] != fmt.Sprintf("faults edit %d", f.edits-1) {
			f.e.t.Errorf("transaction %s: %d version %v memo %v, want version %d and the last edit", tx.id, r.status, got["version"], got["memo"], tx.version+f.edits)
			continue
		}
		applied += int(v) - tx.version
	}
	return applied
}
