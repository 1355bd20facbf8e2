package local_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
)

// BenchmarkGatewayOverhead measures what the edge adds to an authenticated,
// metered request: the same MT940 → camt.053 conversion sent through the
// gateway (HTTP, credential cache, Redis admission, gRPC) and straight to the
// converter over gRPC. It reports p50/p99 of each and their difference.
//
//	go test -run x -bench GatewayOverhead -benchtime 2000x ./deploy/local/
func BenchmarkGatewayOverhead(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "samples", "mt", "php-mt940", "Ing_sample"))
	if err != nil {
		b.Skipf("../shared samples not found: %v", err)
	}
	st, err := local.Start(context.Background(), local.Config{HTTPAddr: "127.0.0.1:0", Log: slog.New(slog.DiscardHandler),
		RedisURL: os.Getenv("TEST_REDIS_URL"), DemoPlan: "scale", SandboxInterval: -1, Now: local.TickingClock(testInstant())})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var key string
	for _, k := range st.Keys {
		if k.Name == "conversion-usage" { // a live key on a paid plan: overage never stops the run
			key = k.Key
		}
	}
	conn, err := rpc.Dial(st.Addrs["converter"])
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	client := conversionv1.NewConversionServiceClient(conn)
	ctx := principal.Outgoing(context.Background(), principal.Principal{AccountID: "bench", Surface: "conversion", Mode: "live"})
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

	direct := func() error {
		_, err := client.Convert(ctx, &conversionv1.ConvertRequest{To: "camt.053", Raw: msg, ContentType: "text/plain"})
		if status.Code(err) == codes.InvalidArgument { // a content-level answer is the same work on both paths
			return nil
		}
		return err
	}
	viaGateway := func() error {
		req, _ := http.NewRequest("POST", st.URL+"/v1/convert?to=camt.053", strings.NewReader(string(msg)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "text/plain")
		resp, err := httpc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 || resp.StatusCode == 429 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	// Requests are paced under the scale plan's 500/s so the limiter never
	// refuses one: this measures latency, not the bucket.
	const gap = 2500 * time.Microsecond
	measure := func(f func() error) []time.Duration {
		out := make([]time.Duration, 0, b.N)
		for range b.N {
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatal(err)
			}
			el := time.Since(t0)
			out = append(out, el)
			if el < gap {
				time.Sleep(gap - el)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	_ = measure(direct) // warm both paths
	_ = measure(viaGateway)
	b.ResetTimer()
	d := measure(direct)
	g := measure(viaGateway)
	pct := func(xs []time.Duration, p float64) float64 {
		return float64(xs[int(float64(len(xs)-1)*p)].Microseconds())
	}
	b.ReportMetric(pct(d, 0.50), "direct-p50-µs")
	b.ReportMetric(pct(d, 0.99), "direct-p99-µs")
	b.ReportMetric(pct(g, 0.50), "gateway-p50-µs")
	b.ReportMetric(pct(g, 0.99), "gateway-p99-µs")
	b.ReportMetric(pct(g, 0.50)-pct(d, 0.50), "added-p50-µs")
	b.ReportMetric(pct(g, 0.99)-pct(d, 0.99), "added-p99-µs")
}
