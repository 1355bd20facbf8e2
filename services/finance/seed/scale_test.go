package seed_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/seed"
)

func TestScale(t *testing.T) {
	store := memory.New()
	now := time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)
	d, err := seed.Scale(context.Background(), store, "t", now, 1234, 100)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := store.ListTransactions(context.Background(), d.UserID, finance.TransactionFilter{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1234 {
		t.Fatalf("%d rows", len(rows))
	}
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.Source]++
		if r.IsPending {
			counts["pending"]++
		}
		if r.CategoryID == "" {
			counts["uncategorized"]++
		}
	}
	for _, k := range []string{finance.SourceBankSync, finance.SourceManual, finance.SourceImport, "pending", "uncategorized"} {
		if counts[k] == 0 {
			t.Errorf("no %s rows: %v", k, counts)
		}
	}
}
