package load_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/deploy/local/load"
	"github.com/ledgerlane/platform/services/metering"
)

// TestLoadAgainstLocalStack runs the default mix (with more finance writes)
// at a small fixed rate against the whole stack in process: every scenario
// is answered 2xx, every replayed finance write comes from the idempotency
// store, and the usage each provisioned account shows equals the units of
// its 2xx answers (batches count per item). Timings are printed, never
// asserted.
func TestLoadAgainstLocalStack(t *testing.T) {
	samples := filepath.Join("..", "..", "..", "..", "shared", "samples")
	if _, err := os.Stat(samples); err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	// Always the embedded NATS: this package's tests run beside deploy/local's,
	// whose stacks would share the fixed stream names of a real server and
	// take each other's batch items.
	st, err := local.Start(context.Background(), local.Config{
		HTTPAddr: "127.0.0.1:0", RedisURL: os.Getenv("TEST_REDIS_URL"),
		DemoPlan: metering.PlanScale, SandboxInterval: -1, Log: slog.New(slog.DiscardHandler),
		Now: local.TickingClock(local.TestInstant),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	accounts, err := load.Provision(context.Background(), st.Metering.Service(), 3, metering.PlanGrowth, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The default mix with more finance writes, so some are replayed.
	mix, err := load.ParseMix(strings.Replace(load.DefaultMix, "finance-write=2", "finance-write=12", 1))
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(context.Background(), load.Config{
		Target: st.URL, Rate: 60, Duration: 2 * time.Second, Workers: 4, Mix: mix, SamplesDir: samples,
		BatchItems: 2, Accounts: accounts, FinanceRead: keys["finance-read"], FinanceWrite: keys["finance-write"],
		UsageWait: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := res.Print(&out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(res.Rows) != len(mix) {
		t.Fatalf("%d rows for %d scenarios", len(res.Rows), len(mix))
	}
	for _, r := range res.Rows {
		if r.Requests == 0 {
			t.Errorf("%s: no requests", r.Scenario)
		}
		for code := range r.Statuses {
			if code < 200 || code > 299 {
				t.Errorf("%s: status %d (%v)", r.Scenario, code, r.Statuses)
			}
		}
	}
	u := res.Usage
	if u.Err != nil || u.Accounts != 3 || u.Matching != 3 || u.Counted == 0 || !res.OK() {
		t.Fatalf("usage check: %+v", u)
	}
	if res.Replays == 0 || res.ReplayMisses != 0 {
		t.Fatalf("finance-write replays: %d answered from the store, %d not", res.Replays, res.ReplayMisses)
	}
	if !strings.Contains(out.String(), "usage: OK") {
		t.Fatalf("report lacks the usage verdict:\n%s", out.String())
	}
}
