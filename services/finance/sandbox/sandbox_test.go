package sandbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/sandbox"
	"github.com/ledgerlane/platform/services/finance/seed"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type env struct {
	svc   *finance.Service
	nw    *networth.Service
	store *memory.Store
	demo  seed.DemoData
	agg   *sandbox.Aggregator
	clk   *clock
	write finance.Caller
}

func newEnv(t *testing.T) env {
	t.Helper()
	clk := &clock{t: time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)}
	store := memory.New()
	d, err := seed.Demo(context.Background(), store, "2c4e6a8b-0d1f-4a3c-9e5b-7d9f1b3d5f70", clk.now())
	if err != nil {
		t.Fatal(err)
	}
	svc := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("k")), Clock: clk.now})
	nw := networth.NewService(networth.Config{Kernel: svc, Store: store})
	return env{svc: svc, nw: nw, store: store, demo: d, clk: clk, agg: sandbox.New(banksync.NewService(banksync.Config{Kernel: svc, Store: store}), nw, sandbox.ForDemo(d), nil, clk.now, nil),
		write: finance.Caller{UserID: d.UserID, GrantID: d.GrantWriteID, OwnerAccountID: d.OwnerAccountID}}
}

func (e env) byRef(t *testing.T, accountID, ref string) (finance.Transaction, bool) {
	t.Helper()
	rows, err := e.store.TransactionsByExternalRef(context.Background(), e.demo.UserID, []string{accountID}, []string{ref})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		return finance.Transaction{}, false
	}
	return rows[0], true
}

func (e env) sync(t *testing.T) sandbox.Report {
	t.Helper()
	e.clk.advance(30 * time.Second)
	rep, err := e.agg.SyncNow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestProviderOwnershipStory is edit, sync, revert, sync at the service.
func TestProviderOwnershipStory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rep := e.sync(t)
	var c sandbox.Created
	for _, cr := range rep.Created {
		if !cr.Hold {
			c = cr
			break
		}
	}
	tx, ok := e.byRef(t, c.AccountID, c.ProviderTransactionID)
	if !ok || !tx.IsPending || tx.Merchant != c.Merchant || tx.Version != 1 || tx.Source != finance.SourceBankSync {
		t.Fatalf("new row: %+v", tx)
	}

	// Edit: the bank's merchant is captured.
	mine := "Coffee with Sam"
	res, err := e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: 1, Merchant: &mine})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Version != 2 || *res.Data.ProviderMerchantName != c.Merchant {
		t.Fatalf("after edit: %+v", res.Data)
	}

	// Sync: the row posts and the bank cleans the name; the user's name stays.
	e.sync(t)
	tx, _ = e.byRef(t, c.AccountID, c.ProviderTransactionID)
	if tx.IsPending || tx.PostedAt == nil || tx.Merchant != mine || tx.ProviderMerchantName == nil ||
		*tx.ProviderMerchantName == c.Merchant || tx.Version != 3 {
		t.Fatalf("after sync: pending %v merchant %q provider %v version %d", tx.IsPending, tx.Merchant, tx.ProviderMerchantName, tx.Version)
	}
	cleaned := *tx.ProviderMerchantName

	// Revert: the bank's current value comes back.
	res, err = e.svc.UpdateTransaction(ctx, e.write, finance.TransactionUpdate{ID: tx.ID, ExpectedVersion: 3,
		RevertToProvider: []string{"merchant"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Merchant != cleaned || res.Data.ProviderMerchantName != nil || res.Data.Version != 4 {
		t.Fatalf("after revert: %+v", res.Data)
	}

	// Sync: the provider owns the field again and its enrichment lands.
	e.sync(t)
	tx, _ = e.byRef(t, c.AccountID, c.ProviderTransactionID)
	if tx.Merchant == cleaned || tx.ProviderMerchantName != nil || tx.Version != 5 {
		t.Fatalf("after second sync: merchant %q provider %v version %d", tx.Merchant, tx.ProviderMerchantName, tx.Version)
	}

	// Settled: a quiet sync leaves the row alone.
	e.sync(t)
	if again, _ := e.byRef(t, c.AccountID, c.ProviderTransactionID); again.Version != 5 {
		t.Errorf("settled row changed: version %d", again.Version)
	}
}

func TestSandboxLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var holds, kept []sandbox.Created
	for range 3 {
		rep := e.sync(t)
		if len(rep.Created) != sandbox.NewPerTick {
			t.Fatalf("created %d", len(rep.Created))
		}
		if res := rep.Results[e.demo.ConnectionIDs.Chase]; res.Inserted != sandbox.NewPerTick {
			t.Errorf("sync result %+v", res)
		}
		for _, c := range rep.Created {
			if c.Hold {
				holds = append(holds, c)
			} else {
				kept = append(kept, c)
			}
		}
	}
	e.sync(t)
	if len(holds) == 0 {
		t.Fatal("no hold in three ticks")
	}
	for _, h := range holds {
		if _, ok := e.byRef(t, h.AccountID, h.ProviderTransactionID); ok {
			t.Errorf("hold %s was not removed", h.ProviderTransactionID)
		}
	}
	for _, k := range kept {
		tx, ok := e.byRef(t, k.AccountID, k.ProviderTransactionID)
		if !ok || tx.IsPending || tx.PostedAt == nil {
			t.Errorf("row %s not posted: %+v", k.ProviderTransactionID, tx)
		}
	}
	st, err := e.svc.GetSyncStatus(ctx, e.write)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range st.Data.Connections {
		switch line.ConnectionID {
		case e.demo.ConnectionIDs.Chase:
			if !line.Healthy || line.LastSyncedAt == nil || !line.LastSyncedAt.Equal(e.clk.now()) {
				t.Errorf("chase: %+v", line)
			}
		case e.demo.ConnectionIDs.Fidelity:
			if line.Healthy || line.Status != finance.ConnectionLoginRequired {
				t.Errorf("fidelity: %+v", line)
			}
		}
	}
}

func TestRunStopsWithContext(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.agg.Run(ctx, time.Millisecond); close(done) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
}
