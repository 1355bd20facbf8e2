package admission_test

import (
	"context"
	"io"
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
	conns  sync.WaitGroup
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
	go func() { _, _ = io.Copy(c, b) }()
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

func (p *pausable) pause() { p.mu.Lock(); p.paused = true; p.mu.Unlock() }
func (p *pausable) resume() {
	p.mu.Lock()
	p.paused = false
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
