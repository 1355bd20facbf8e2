package finance_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/events"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/seed"
)

func TestSyncRefusesBadProviderData(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	chase := e.demo.ConnectionIDs.Chase
	good := func() banksync.ProviderTransaction {
		return banksync.ProviderTransaction{ProviderTransactionID: "p1", AccountID: e.demo.AccountIDs.Checking,
			Amount: "-1.00", Currency: "USD", Date: "2026-05-20", MerchantName: "x"}
	}
	mod := func(f func(*banksync.ProviderTransaction)) []banksync.ProviderTransaction {
		p := good()
		f(&p)
		return []banksync.ProviderTransaction{p}
	}
	tests := []struct {
		name  string
		conn  string
		txs   []banksync.ProviderTransaction
		typ   problem.Type
		field string
	}{
		{"connection not a uuid", "x", nil, problem.InvalidInput, "connection_id"},
		{"unknown connection", uuid.NewString(), nil, problem.NotFound, ""},
		{"manual connection", e.demo.ConnectionIDs.Manual, nil, problem.InvalidInput, "connection_id"},
		{"account of another connection", chase, mod(func(p *banksync.ProviderTransaction) { p.AccountID = e.demo.AccountIDs.Brokerage }), problem.InvalidInput, "transactions[0].account_id"},
		{"no provider id", chase, mod(func(p *banksync.ProviderTransaction) { p.ProviderTransactionID = "" }), problem.InvalidInput, "transactions[0].provider_transaction_id"},
		{"amount", chase, mod(func(p *banksync.ProviderTransaction) { p.Amount = "1,00" }), problem.InvalidInput, "transactions[0].amount"},
		{"currency", chase, mod(func(p *banksync.ProviderTransaction) { p.Currency = "usd" }), problem.InvalidInput, "transactions[0].amount"},
		{"date", chase, mod(func(p *banksync.ProviderTransaction) { p.Date = "20/05/2026" }), problem.InvalidInput, "transactions[0].transaction_date"},
		{"repeated id", chase, append(mod(func(*banksync.ProviderTransaction) {}), good()), problem.InvalidInput, "transactions[1].provider_transaction_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.banksync.UpsertProviderTransactions(ctx, tc.conn, tc.txs)
			wantProblem(t, err, tc.typ, tc.field)
		})
	}
	// Refused data is recorded on the connection, and nothing was written.
	conn, err := e.store.GetConnection(ctx, chase)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Status != finance.ConnectionError || conn.ErrorCode != banksync.SyncErrorInvalidData || conn.ErrorMessage == "" {
		t.Errorf("connection after refused sync: %+v", conn)
	}
	if rows := all(t, e, e.read, finance.TransactionQuery{}); len(rows) != e.demo.Transactions {
		t.Errorf("%d rows, want %d", len(rows), e.demo.Transactions)
	}
	// A good sync clears the error.
	if _, err := e.banksync.UpsertProviderTransactions(ctx, chase, []banksync.ProviderTransaction{good()}); err != nil {
		t.Fatal(err)
	}
	conn, _ = e.store.GetConnection(ctx, chase)
	if conn.Status != finance.ConnectionActive || conn.ErrorCode != "" || conn.LastSyncedAt == nil || !conn.LastSyncedAt.Equal(now) {
		t.Errorf("connection after good sync: %+v", conn)
	}
}

// writtenCounter is a wired notifier: it counts Written calls.
type writtenCounter struct{ n int }

func (w *writtenCounter) Written(context.Context, string) { w.n++ }

// TestSyncStoresItsNotes: with events wired, a bank sync stores its notes
// with the rows and a recorded sync error stores the status change with the
// status (the outbox); without events, nothing is stored for a relay that
// would never run.
func TestSyncStoresItsNotes(t *testing.T) {
	ctx := context.Background()
	pending := func(t *testing.T, store *memory.Store) []finance.Note {
		t.Helper()
		var out []finance.Note
		_, err := store.RelayNotes(ctx, now, 100, time.Hour, func(_ context.Context, o events.OutboxNote) error {
			out = append(out, o.Note)
			return nil
		}, func(int) time.Duration { return time.Second })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, wired := range []bool{true, false} {
		t.Run(fmt.Sprintf("events wired %v", wired), func(t *testing.T) {
			store := memory.New()
			d, err := seed.Demo(ctx, store, tenant, now)
			if err != nil {
				t.Fatal(err)
			}
			pending(t, store) // the seed's own writes, if any
			w := &writtenCounter{}
			cfg := finance.Config{Store: store, Cursors: cursor.New([]byte("test-key")), Clock: func() time.Time { return now }}
			if wired {
				cfg.Notifier = w
			}
			sync := banksync.NewService(banksync.Config{Kernel: finance.NewService(cfg), Store: store})
			chase := d.ConnectionIDs.Chase
			if err := sync.RecordSyncError(ctx, chase, finance.ConnectionLoginRequired, "re-enter the password"); err != nil {
				t.Fatal(err)
			}
			if _, err := sync.UpsertProviderTransactions(ctx, chase, []banksync.ProviderTransaction{{ProviderTransactionID: "p1",
				AccountID: d.AccountIDs.Checking, Amount: "-1.00", Currency: "USD", Date: "2026-05-20", MerchantName: "x"}}); err != nil {
				t.Fatal(err)
			}
			got := pending(t, store)
			if !wired {
				if len(got) != 0 || w.n != 0 {
					t.Fatalf("no events wired: %d notes stored, %d nudges", len(got), w.n)
				}
				return
			}
			var kinds []string
			for _, n := range got {
				kinds = append(kinds, n.Kind)
				switch n.Kind {
				case finance.NoteConnection:
					if n.ConnectionID != chase || n.NewStatus == "" || n.OldStatus == n.NewStatus {
						t.Errorf("connection note %+v", n)
					}
				case finance.NoteTransactions:
					if !slices.Contains(n.AccountIDs, d.AccountIDs.Checking) {
						t.Errorf("sync note names %v, want the checking account among them", n.AccountIDs)
					}
				}
			}
			// The error's status change; then the sync's rows and its
			// return to active.
			want := []string{finance.NoteConnection, finance.NoteTransactions, finance.NoteConnection}
			if !slices.Equal(kinds, want) {
				t.Fatalf("notes %v, want %v", kinds, want)
			}
			if w.n != 2 {
				t.Fatalf("%d nudges, want one per write (2)", w.n)
			}
		})
	}
}
