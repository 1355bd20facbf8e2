package faults

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// postgresKilled: PostgreSQL crashes (SIGKILL to the postmaster and every
// backend at once) while a 1,000-item batch (300 quick) runs and four
// finance writers make 25 edits each (12 quick), and is started again on the
// same data directory 5 s later, where it runs crash recovery (its log says
// so; the scenario checks). Meanwhile batch submissions and finance writes
// answer 503 with Retry-After, never 500; afterwards every item is done
// exactly once, every edit applied exactly once (an edit committed whose
// answer the crash lost must replay, not conflict), usage is exact and no
// service was restarted.
//
// fsync stays off (cluster.startPostgres): a process kill leaves the
// kernel's page cache, and with it every write PostgreSQL made before it
// answered, in place; fsync only guards against the machine itself going
// down, which the suite does not do.
func postgresKilled(e *env) string {
	const down = 5 * time.Second
	n := e.size(1000, 300)
	fw := e.financeWriters("postgres-killed-finance", 4, e.size(25, 12))
	tn := e.tenant("postgres-killed")
	const recovery = "automatic recovery in progress"
	recoveriesBefore := countLog(recovery, e.c.pg)
	before := e.c.serviceStarts()

	fw.start()
	job, _ := e.submit(tn, n, "postgres-killed-1", time.Minute)
	if job == "" {
		e.t.Fatal("the batch was not accepted")
	}
	at := e.waitProgress(tn, job, n/10, n)
	if got := fw.answered(); got == 0 || got >= fw.total() {
		e.t.Fatalf("%d of %d edits answered before the crash: the writers were not mid-run", got, fw.total())
	}
	killed := e.c.pg.crash()
	crashed := time.Now()

	// Probes while it is down: a one-item batch and /v1/ready every 500 ms.
	stop := make(chan struct{})
	var submits, ready map[int]int
	var mu sync.Mutex
	noRetryAfter := 0
	var probeJobs sync.Map
	var wg sync.WaitGroup
	wg.Go(func() {
		i := 0
		submits = probe(stop, func() int {
			i++
			r := tn.do(http.MethodPost, "/v1/convert/batch", fmt.Sprintf("pg-killed-probe-%d", i), batchBody(e.msg, 1))
			if id, _ := r.json["id"].(string); r.status == http.StatusAccepted {
				probeJobs.Store(id, 1)
			}
			if r.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") == "" {
				mu.Lock()
				noRetryAfter++
				mu.Unlock()
			}
			return r.status
		})
	})
	wg.Go(func() {
		ready = probe(stop, func() int { return tn.do(http.MethodGet, "/v1/ready", "", nil).status })
	})
	time.Sleep(time.Until(crashed.Add(down)))
	close(stop)
	wg.Wait()
	tries, err := e.c.restartRetrying(e.c.pg, e.c.pgPort, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	if !waitFor(time.Minute, 200*time.Millisecond, func() bool { return countLog(recovery, e.c.pg) > recoveriesBefore }) {
		e.t.Errorf("PostgreSQL's log has no %q after the kill: it was not a crash", recovery)
	}

	statuses := fw.wait()
	if submits[http.StatusInternalServerError] > 0 || submits[http.StatusServiceUnavailable] == 0 {
		e.t.Errorf("batch submissions while PostgreSQL was down: %s (want 503, never 500)", statusList(submits))
	}
	if ready[http.StatusServiceUnavailable] == 0 || ready[http.StatusOK] > 0 {
		e.t.Errorf("/v1/ready while PostgreSQL was down: %s (want 503)", statusList(ready))
	}
	if statuses[http.StatusInternalServerError] > 0 || statuses[http.StatusServiceUnavailable] == 0 {
		e.t.Errorf("finance writes around the crash: %s (want 503, never 500)", statusList(statuses))
	}
	if noRetryAfter += fw.noRetryAfter; noRetryAfter > 0 {
		e.t.Errorf("%d answers 503 without Retry-After", noRetryAfter)
	}
	applied := fw.check()
	accepted := map[string]int{job: n}
	probeJobs.Range(func(k, v any) bool { accepted[k.(string)] = v.(int); return true })
	counts := e.verify(tn, accepted, 0, 5*time.Minute)
	e.unchangedServices(before)
	return fmt.Sprintf("SIGKILL to the postmaster and its %d children at item %d/%d, down %s, started in %d tries, crash recovery ran; submissions meanwhile %s; writes %s, edits applied %d of %d, each once (%d applied though answered 5xx); %s",
		killed, at, n, down, tries, statusList(submits), statusList(statuses), applied, fw.total(), fw.appliedAnyway, counts)
}
