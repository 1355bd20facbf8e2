//go:build unix

package local_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/deploy/local/load"
	"github.com/ledgerlane/platform/pkg/logging"
	"github.com/ledgerlane/platform/services/metering"
)

// BenchmarkMeteredConvert measures the cost of one metered raw MT940 →
// camt.053 conversion (the load tool's main scenario) through the whole stack
// in this process: the gateway (credential cache, one admission script on
// Redis, the JSON envelope), the call to the converter (in process, as `make
// run` makes it, or gRPC over loopback, as between separate binaries), and
// the conversion. B/op and allocs/op are the whole process's, stack and client
// together, which is what a profile of `make run` under load sees.
//
//	go test -run x -bench MeteredConvert -benchmem -count 5 ./deploy/local/
//
// "http" goes through a loopback HTTP/1.1 connection per goroutine, as the
// load tool does; "handler" calls the gateway's handler directly, leaving the
// HTTP server and client out so the edge's own share stands out. Requests
// are spread round robin over 40 scale accounts (500 req/s each), so the
// limiter never refuses one; every answer must be 200. The access log is on
// (level info, written to nowhere), as in `make run`.
//
// cpu-µs/op is the process's CPU time (user and system, every goroutine) per
// request over the timed loop: on a machine shared with other work it moves
// far less than ns/op, which is wall time.
func BenchmarkMeteredConvert(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Ing_sample"))
	if err != nil {
		b.Skipf("../shared samples not found: %v", err)
	}
	for _, tr := range []struct {
		name     string
		loopback bool
	}{{"in-process", false}, {"loopback-grpc", true}} {
		b.Run(tr.name, func(b *testing.B) { meteredConvert(b, msg, tr.loopback) })
	}
}

// meteredConvert runs BenchmarkMeteredConvert's two ways on a stack whose
// gateway reaches the converter in process or over loopback gRPC.
func meteredConvert(b *testing.B, msg []byte, loopback bool) {
	ctx := context.Background()
	st, err := local.Start(ctx, local.Config{HTTPAddr: "127.0.0.1:0", Log: logging.NewTo(io.Discard, "local", "info"),
		RedisURL: os.Getenv("TEST_REDIS_URL"), SandboxInterval: -1, LoopbackGRPC: loopback, Now: local.TickingClock(testInstant())})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	accounts, err := load.Provision(ctx, st.Metering.Service(), 40, metering.PlanScale, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Uint64
	newReq := func(base string) *http.Request {
		a := accounts[next.Add(1)%uint64(len(accounts))]
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/convert?to=camt.053", bytes.NewReader(msg))
		req.Header.Set("Authorization", "Bearer "+a.Key)
		req.Header.Set("Content-Type", "text/plain")
		return req
	}
	// Six goroutines per core: twelve requests in flight on two cores, the
	// concurrency at which the stack peaks (docs/load.md).
	const parallelism = 6

	b.Run("http", func(b *testing.B) {
		tr := &http.Transport{MaxIdleConnsPerHost: 64}
		defer tr.CloseIdleConnections()
		httpc := &http.Client{Transport: tr}
		send := func() int {
			resp, err := httpc.Do(newReq(st.URL))
			if err != nil {
				b.Error(err)
				return 0
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		for range 200 { // warm the credential cache and the connections
			send()
		}
		b.ReportAllocs()
		b.SetParallelism(parallelism)
		b.ResetTimer()
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if code := send(); code != http.StatusOK {
					b.Errorf("status %d", code)
					return
				}
			}
		})
		reportCPU(b, cpuTime()-cpu0)
	})

	b.Run("handler", func(b *testing.B) {
		h := st.Gateway.Handler()
		send := func() (int, int) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, newReq("http://gateway"))
			return rec.Code, rec.Body.Len()
		}
		for range 200 {
			send()
		}
		b.ReportAllocs()
		b.SetParallelism(parallelism)
		b.ResetTimer()
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if code, n := send(); code != http.StatusOK || n == 0 {
					b.Errorf("status %d, %d bytes", code, n)
					return
				}
			}
		})
		reportCPU(b, cpuTime()-cpu0)
	})
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, used time.Duration) {
	b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/op")
}
