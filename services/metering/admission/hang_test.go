package admission_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/services/metering/admission"
)

// pausable is a TCP proxy in front of Redis that can stop passing requests
// on, as a Redis paused with SIGSTOP does: what clients send waits, and runs
// once it is resumed.
type pausable struct {
	lis    net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	// repliesPaused holds Redis's answers instead: the script has run, its
	// reply has not reached the client (a stall between the two).
	repliesPaused bool
	conns         sync.WaitGroup
}

func newPausable(t *testing.T, target string) *pausable {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausable{lis: lis, target: target}
	p.cond = sync.NewCond(&p.mu)
	t.Cleanup(func() { p.resume(); _ = lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			go p.serve(c)
		}
	}()
	return p
}

func (p *pausable) serve(c net.Conn) {
	defer p.conns.Done()
	defer c.Close()
	b, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer b.Close()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := b.Read(buf)
			p.mu.Lock()
			for p.repliesPaused {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		p.mu.Lock()
		for p.paused {
			p.cond.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := b.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond) // let Redis answer what it got
			return
		}
	}
}

func (p *pausable) pause()        { p.mu.Lock(); p.paused = true; p.mu.Unlock() }
func (p *pausable) pauseReplies() { p.mu.Lock(); p.repliesPaused = true; p.mu.Unlock() }
func (p *pausable) resume() {
	p.mu.Lock()
	p.paused, p.repliesPaused = false, false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// A request whose admission script Redis only runs after the caller gave
// up (and failed open, counting it in its journal) must not be counted
// again, nor leave its Idempotency-Key reserved, when Redis resumes; the
// client library's own retries of the script included.
func TestScriptRunAfterTheCallerGaveUpIsVoid(t *testing.T) {
	direct := redisconn.ForTest(t)
	proxy := newPausable(t, direct.Options().Addr)
	opt := *direct.Options()
	opt.Addr = proxy.lis.Addr().String()
	opt.ReadTimeout = 300 * time.Millisecond
	viaProxy := redis.NewClient(&opt)
	t.Cleanup(func() { _ = viaProxy.Close() })

	c := &clock{t: time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)}
	ctl := admission.New(viaProxy, c.now)
	ctl.VoidAfter = 100 * time.Millisecond
	acct := uuid.NewString()
	r := admission.Request{AccountID: acct, Metered: true, Limits: limits(c), IdempotencyKey: "k", Fingerprint: "fp"}
	ctx := context.Background()
	// The first call measures Redis's clock; later ones carry deadlines.
	warm := admission.Request{AccountID: acct, Limits: limits(c)}
	for range 20 {
		if _, err := ctl.Admit(ctx, warm); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	proxy.pause()
	if _, err := ctl.Admit(ctx, r); err == nil {
		t.Fatal("admission answered while Redis was paused")
	}
	time.Sleep(300 * time.Millisecond) // past VoidAfter: the caller has failed open
	proxy.resume()
	_ = viaProxy.Close() // the late scripts are in flight; make sure they reach Redis
	proxy.conns.Wait()

	u, err := admission.New(direct, c.now).Usage(ctx, acct, r.Limits)
	if err != nil {
		t.Fatal(err)
	}
	if u.Used != 0 {
		t.Fatalf("the late script counted the request %d time(s); the caller's journal counts it already", u.Used)
	}
	again := admission.New(direct, c.now)
	if d, err := again.Admit(ctx, r); err != nil || d.Outcome != admission.Admitted {
		t.Fatalf("the key must not stay reserved by the late script: %+v %v", d, err)
	}
}

// TestStallsChargeOnce (issue 28): Redis stalls for a random time around
// the timeouts (the gateway's client gives up after 250 ms and retries
// once; the script's deadline is derived from that), either before the
// script runs or after it ran but before its reply left. The caller acts
// as the gateway does: admitted, it runs the request and settles it;
// refused by an error, it fails open (runs the request, counts it in its
// journal) and abandons the attempt. Whatever the stall, every request
// runs once and is counted once (Redis + journal = runs), no key is left
// in flight, and a client retry with the same key after the stall is a
// replay or a fresh run, never 409 in flight, and is not charged again.
func TestStallsChargeOnce(t *testing.T) {
	direct := redisconn.ForTest(t)
	proxy := newPausable(t, direct.Options().Addr)
	opt := *direct.Options()
	opt.Addr = proxy.lis.Addr().String()
	opt.ReadTimeout, opt.WriteTimeout, opt.MaxRetries = 250*time.Millisecond, 250*time.Millisecond, 1
	viaProxy := redis.NewClient(&opt)
	t.Cleanup(func() { _ = viaProxy.Close() })

	c := &clock{t: time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)}
	ctl := admission.New(viaProxy, c.now)
	ctx := context.Background()
	acct := uuid.NewString()
	l := limits(c)
	l.MonthlyQuota = 1_000_000
	for range 20 { // the first calls measure Redis's clock; later ones carry deadlines
		if _, err := ctl.Admit(ctx, admission.Request{AccountID: acct, Limits: l}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(28, uint64(time.Now().UnixNano())))
	runs, journal := int64(0), int64(0)
	var abandoned chan struct{} // closed once the last abandon went through
	// call is one request as the gateway handles it.
	call := func(r admission.Request) (admission.Outcome, error) {
		r.Attempt = admission.NewAttempt()
		d, err := ctl.Admit(ctx, r)
		if err != nil {
			runs++ // fail open: it runs, and the journal counts it
			journal += r.Units
			// The gateway's journal abandons the attempt on its reconciler's
			// passes until Redis takes it (an abandon sent while Redis still
			// stalls times out too).
			abandoned = make(chan struct{})
			go func(done chan struct{}) {
				defer close(done)
				for deadline := time.Now().Add(admission.AttemptTTL); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
					if _, err := ctl.Abandon(context.Background(), r); err == nil {
						return
					}
				}
			}(abandoned)
			return 0, err
		}
		if d.Outcome == admission.Admitted {
			runs++
			if err := ctl.Settle(ctx, r, d, admission.Response{Status: 200}, true, true); err != nil {
				t.Fatal(err)
			}
		}
		return d.Outcome, nil
	}
	trials := 14
	if testing.Short() {
		trials = 4
	}
	for i := range trials {
		stall := time.Duration(100+rng.IntN(1000)) * time.Millisecond
		replies := rng.IntN(2) == 1
		r := admission.Request{AccountID: acct, Metered: true, Limits: l, Units: 1,
			IdempotencyKey: fmt.Sprintf("stall-%d", i), Fingerprint: "fp"}
		if replies {
			proxy.pauseReplies()
		} else {
			proxy.pause()
		}
		go func() { time.Sleep(stall); proxy.resume() }()
		abandoned = nil
		first, err := call(r)
		time.Sleep(stall + 300*time.Millisecond) // resumed
		if abandoned != nil {
			<-abandoned // the client retries after the gateway's reconciler has run
		}
		again, err2 := call(r)
		if err2 != nil || (again != admission.Replay && again != admission.Admitted) {
			t.Errorf("stall %v (replies %v): first %v %v; the client's retry: %v %v", stall, replies, first, err, again, err2)
		}
		if err == nil && first == admission.Admitted && again != admission.Replay {
			t.Errorf("stall %v: an admitted, settled request was not replayed: %v", stall, again)
		}
	}
	time.Sleep(time.Second)
	u, err := admission.New(direct, c.now).Usage(ctx, acct, l)
	if err != nil {
		t.Fatal(err)
	}
	if u.Used+journal != runs {
		t.Fatalf("counted %d in Redis + %d in the journal for %d runs", u.Used, journal, runs)
	}
}
