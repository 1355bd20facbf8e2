// Package load drives a mix of requests at a running Ledgerlane stack and
// reports, per route, the rate, latency percentiles and statuses it saw,
// and whether the usage the stack counted for each provisioned account
// equals the units of the 2xx answers it received. cmd/load is its command
// (`make load`); docs/load.md describes both.
package load

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Account is a provisioned metering account and its key, which carries
// usage:read so the tool can read the account's usage afterwards.
type Account struct {
	ID  string
	Key string
}

// Config is one run.
type Config struct {
	// Target is the gateway's base URL, e.g. http://127.0.0.1:8080.
	Target string
	// Rate is requests per second over all scenarios; 0 sends as fast as
	// Workers allow (each worker one request at a time).
	Rate     int
	Duration time.Duration
	Workers  int
	Mix      []Share
	// SamplesDir is the shared samples folder the bodies come from.
	SamplesDir string
	// BatchItems is the number of items per batch submission.
	BatchItems int
	Accounts   []Account
	// FinanceRead and FinanceWrite are the demo finance credentials, needed
	// only when the mix has finance scenarios.
	FinanceRead, FinanceWrite string
	// UsageWait bounds how long the usage check waits for the stack's
	// counters to settle (refunds of non-2xx answers land after the answer).
	UsageWait time.Duration
}

// Row is one scenario's figures.
type Row struct {
	Scenario string
	Route    string // "POST /v1/convert"
	Summary
}

// Mismatch is an account whose counted usage differs from the units its
// 2xx answers drew.
type Mismatch struct {
	AccountID         string
	Expected, Counted int64
}

// UsageCheck compares GET /v1/usage with the 2xx answers, per account.
type UsageCheck struct {
	Accounts, Matching int
	Expected, Counted  int64
	Mismatches         []Mismatch
	// Err is set when the usage could not be read at all.
	Err error
}

// Result is a run's outcome.
type Result struct {
	Target   string
	Rate     int
	Workers  int
	Elapsed  time.Duration
	Rows     []Row
	Usage    UsageCheck
	Accounts int
	// Replays are finance writes sent again with the same Idempotency-Key
	// and answered from the idempotency store; ReplayMisses were not.
	// ReplaysRefused were refused by the rate limiter (429), which runs
	// before the store: they say nothing about it either way.
	Replays, ReplayMisses, ReplaysRefused int64
}

type runner struct {
	cfg      Config
	client   *fasthttp.Client // the mix
	setup    *http.Client     // everything else
	samples  samples
	runID    string
	schedule []string
	stats    map[string]*stats
	units    map[string]int64
	// used counts, per account, the units of its 2xx answers.
	used    []atomic.Int64
	acctSeq atomic.Uint64
	writes  atomic.Uint64
	txPool  chan txRow
	// replays counts finance-write replays answered from the idempotency
	// store, replayMisses those that were not, replaysRefused those the
	// rate limiter turned away first.
	replays, replayMisses, replaysRefused atomic.Int64
	lastWrite                             atomic.Pointer[sentWrite]
}

// Run sends the mix for cfg.Duration and then checks usage.
func Run(ctx context.Context, cfg Config) (Result, error) {
	r, err := newRunner(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	res := Result{Target: cfg.Target, Rate: cfg.Rate, Workers: cfg.Workers, Accounts: len(cfg.Accounts)}
	res.Elapsed = r.drive(ctx)
	for _, sh := range cfg.Mix {
		sc := scenarios[sh.Scenario]
		res.Rows = append(res.Rows, Row{Scenario: sc.name, Route: sc.method + " " + sc.pattern, Summary: r.stats[sc.name].summary(res.Elapsed)})
	}
	res.Usage = r.checkUsage(ctx)
	res.Replays, res.ReplayMisses, res.ReplaysRefused = r.replays.Load(), r.replayMisses.Load(), r.replaysRefused.Load()
	return res, nil
}

func newRunner(ctx context.Context, cfg Config) (*runner, error) {
	if cfg.Duration <= 0 {
		return nil, errors.New("duration must be positive")
	}
	if cfg.Rate < 0 {
		return nil, errors.New("rate must be 0 (as fast as possible) or positive")
	}
	if cfg.Workers <= 0 {
		return nil, errors.New("workers must be positive")
	}
	if cfg.BatchItems <= 0 {
		cfg.BatchItems = 1
	}
	if len(cfg.Mix) == 0 {
		return nil, errors.New("empty mix")
	}
	cfg.Target = strings.TrimRight(cfg.Target, "/")
	r := &runner{cfg: cfg, client: newClient(cfg.Workers), setup: newSetupClient(cfg.Workers), schedule: schedule(cfg.Mix), stats: map[string]*stats{}, units: map[string]int64{},
		used: make([]atomic.Int64, len(cfg.Accounts))}
	var id [4]byte
	_, _ = rand.Read(id[:])
	r.runID = hex.EncodeToString(id[:])
	var err error
	if r.samples, err = readSamples(cfg.SamplesDir, cfg.BatchItems); err != nil {
		return nil, err
	}
	for _, sh := range cfg.Mix {
		sc := scenarios[sh.Scenario]
		r.stats[sc.name], r.units[sc.name] = &stats{}, sc.units(cfg.BatchItems)
		switch {
		case sc.cred == accountKey && len(cfg.Accounts) == 0:
			return nil, fmt.Errorf("scenario %s needs provisioned accounts", sc.name)
		case sc.cred == financeRead && cfg.FinanceRead == "", sc.cred == financeWrite && cfg.FinanceWrite == "":
			return nil, fmt.Errorf("scenario %s needs the demo finance credentials (-keys-file)", sc.name)
		case sc.cred == financeWrite && r.txPool == nil:
			if err := r.fillTxPool(ctx); err != nil {
				return nil, fmt.Errorf("finance-write: %w", err)
			}
		}
	}
	return r, nil
}

// requestTimeout bounds one request of the mix, as the setup client's
// Timeout bounds the others.
const requestTimeout = 30 * time.Second

// newClient is the client the mix is sent with: fasthttp's, whose requests
// and responses are pooled and which reads and writes each connection on the
// calling goroutine. net/http's client hands every request to a read and a
// write goroutine per connection; on a machine the tool shares with the
// stack it measures, that cost about a quarter of the tool's CPU in
// scheduling and wake-ups, taken from the stack (docs/load.md). It keeps a
// keep-alive connection per worker (and some spare) to the one host.
func newClient(workers int) *fasthttp.Client {
	return &fasthttp.Client{
		MaxConnsPerHost:     workers + 16,
		MaxIdleConnDuration: 90 * time.Second,
		ReadTimeout:         requestTimeout,
		WriteTimeout:        requestTimeout,
	}
}

// newSetupClient sends what is not measured: the usage reads, the finance
// rows' versions.
func newSetupClient(workers int) *http.Client {
	return &http.Client{
		Timeout: requestTimeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        workers + 16,
			MaxIdleConnsPerHost: workers + 16,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// drive runs the workers until the duration ends and every request sent is
// answered, and returns the time that took.
func (r *runner) drive(ctx context.Context) time.Duration {
	runCtx, cancel := context.WithTimeout(ctx, r.cfg.Duration)
	defer cancel()
	var seq atomic.Uint64
	jobs := make(chan uint64, r.cfg.Workers)
	start := time.Now()
	var wg sync.WaitGroup
	for range r.cfg.Workers {
		wg.Go(func() {
			for {
				var n uint64
				if r.cfg.Rate > 0 {
					var ok bool
					if n, ok = <-jobs; !ok || runCtx.Err() != nil {
						// Numbers still buffered when the duration ends
						// are not sent.
						return
					}
				} else {
					if runCtx.Err() != nil {
						return
					}
					n = seq.Add(1) - 1
				}
				r.one(runCtx, n)
			}
		})
	}
	if r.cfg.Rate > 0 {
		r.pace(runCtx, start, jobs)
		close(jobs)
	}
	wg.Wait()
	return time.Since(start)
}

// pace hands out request numbers at the fixed rate: every millisecond or
// so, as many as are due since start. When every worker is busy the send
// blocks and the achieved rate falls below the target; the report shows the
// achieved rate, never the asked one.
func (r *runner) pace(ctx context.Context, start time.Time, jobs chan<- uint64) {
	var sent uint64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		due := uint64(time.Since(start).Seconds() * float64(r.cfg.Rate))
		for ; sent < due; sent++ {
			select {
			case jobs <- sent:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// one sends request n of the schedule and records its answer. A request
// still in flight when the duration ends is answered and counted: it is
// sent with a context that the end of the run does not cancel.
func (r *runner) one(runCtx context.Context, n uint64) {
	sc := scenarios[r.schedule[n%uint64(len(r.schedule))]]
	c, after, skip := sc.build(runCtx, r)
	if skip {
		return
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer func() { fasthttp.ReleaseRequest(req); fasthttp.ReleaseResponse(resp) }()
	req.Header.SetMethod(c.method)
	req.SetRequestURI(r.cfg.Target + c.path)
	for _, h := range c.header {
		req.Header.Set(h[0], h[1])
	}
	if c.body != nil {
		req.SetBodyRaw(c.body)
	}
	acct := -1
	switch sc.cred {
	case accountKey:
		acct = int(r.acctSeq.Add(1)-1) % len(r.cfg.Accounts)
		req.Header.Set("Authorization", "Bearer "+r.cfg.Accounts[acct].Key)
	case financeRead:
		req.Header.Set("Authorization", "Bearer "+r.cfg.FinanceRead)
	case financeWrite:
		req.Header.Set("Authorization", "Bearer "+r.cfg.FinanceWrite)
	}
	st := r.stats[sc.name]
	t0 := time.Now()
	err := r.client.DoTimeout(req, resp, requestTimeout)
	d := time.Since(t0)
	if err != nil {
		st.record(0, d)
		if after != nil {
			after(0, nil, false)
		}
		return
	}
	status := resp.StatusCode()
	st.record(status, d)
	if status >= 200 && status < 300 && acct >= 0 {
		r.used[acct].Add(r.units[sc.name])
	}
	if after != nil {
		// The body is the response's until it is released, after after.
		after(status, resp.Body(), string(resp.Header.Peek("Idempotency-Replayed")) == "true")
	}
}

// getJSON is a setup or check request outside the measured mix.
func (r *runner) getJSON(ctx context.Context, path, key string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.Target+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := r.setup.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, dst)
}

// fillTxPool takes the demo user's newest transactions as the rows finance
// writes edit.
func (r *runner) fillTxPool(ctx context.Context) error {
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := r.getJSON(ctx, "/v1/transactions?page_size=100", r.cfg.FinanceWrite, &page); err != nil {
		return err
	}
	r.txPool = make(chan txRow, len(page.Data))
	for _, raw := range page.Data {
		var t struct {
			ID string `json:"id"`
		}
		v, ok := versionOf(raw)
		if json.Unmarshal(raw, &t) != nil || t.ID == "" || !ok {
			continue
		}
		r.txPool <- txRow{id: t.ID, version: v}
	}
	if len(r.txPool) == 0 {
		return errors.New("the finance-write credential sees no transactions to edit")
	}
	return nil
}

func (r *runner) currentVersion(id string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var raw json.RawMessage
	if err := r.getJSON(ctx, "/v1/transactions/"+id, r.cfg.FinanceWrite, &raw); err != nil {
		return 0, err
	}
	v, ok := versionOf(raw)
	if !ok {
		return 0, errors.New("transaction without a version")
	}
	return v, nil
}

// checkUsage reads every account's usage until each equals the units its
// 2xx answers drew or UsageWait passes: a refund for a non-2xx answer is
// settled just after the answer is sent, so the counters may trail the run
// by a moment.
func (r *runner) checkUsage(ctx context.Context) UsageCheck {
	c := UsageCheck{Accounts: len(r.cfg.Accounts)}
	if c.Accounts == 0 {
		return c
	}
	deadline := time.Now().Add(max(r.cfg.UsageWait, time.Second))
	for {
		counted, err := r.readUsage(ctx)
		c = UsageCheck{Accounts: len(r.cfg.Accounts), Err: err}
		if err == nil {
			for i, a := range r.cfg.Accounts {
				want := r.used[i].Load()
				c.Expected += want
				c.Counted += counted[i]
				if counted[i] == want {
					c.Matching++
				} else {
					c.Mismatches = append(c.Mismatches, Mismatch{AccountID: a.ID, Expected: want, Counted: counted[i]})
				}
			}
		}
		if (err == nil && c.Matching == c.Accounts) || time.Now().After(deadline) || ctx.Err() != nil {
			return c
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// readUsage reads GET /v1/usage for every account, eight at a time.
func (r *runner) readUsage(ctx context.Context) ([]int64, error) {
	out := make([]int64, len(r.cfg.Accounts))
	errs := make([]error, len(r.cfg.Accounts))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, a := range r.cfg.Accounts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var u struct {
				Used int64 `json:"used"`
			}
			if err := r.getJSON(ctx, "/v1/usage", a.Key, &u); err != nil {
				errs[i] = fmt.Errorf("account %s: %w", a.ID, err)
				return
			}
			out[i] = u.Used
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
