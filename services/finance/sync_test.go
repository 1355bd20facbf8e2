package finance_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
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
