package postgres_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/postgres"
	"github.com/ledgerlane/platform/services/finance/seed"
)

// TestScale measures pages at the service on PostgreSQL with one user
// holding FINANCE_SCALE_N transactions (1000000 for the figures):
// p50 and p99 of a page of 50 under each single filter, of searches and of
// the derived histories, plus the EXPLAIN of each query shape. Rows live in schema finance_scale
// and are kept, so a rerun with the same N skips the load; drop the schema
// to start over (and once after migration 00004: users loaded before it have
// no owner account, so the service refuses them). Skipped unless TEST_DATABASE_URL and FINANCE_SCALE_N are set.
//
//	TEST_DATABASE_URL=postgres://… FINANCE_SCALE_N=1000000 go test -run TestScale -v -timeout 60m ./postgres
func TestScale(t *testing.T) {
	url, nStr := os.Getenv("TEST_DATABASE_URL"), os.Getenv("FINANCE_SCALE_N")
	if url == "" || nStr == "" {
		t.Skip("set TEST_DATABASE_URL and FINANCE_SCALE_N to run the scale measurement")
	}
	n, err := strconv.Atoi(nStr)
	if err != nil || n < 1 {
		t.Fatalf("FINANCE_SCALE_N=%q", nStr)
	}
	ctx := context.Background()
	pool, err := pg.Open(ctx, url, "finance_scale", postgres.Migrations, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := postgres.New(pool)
	now := time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)
	label := "n" + nStr
	d := seed.ScaleIDs(label)
	if _, err := store.GetGrant(ctx, d.GrantID); errors.Is(err, finance.ErrNotFound) {
		t.Log("loading", n, "rows…")
		start := time.Now()
		if d, err = seed.Scale(ctx, store, label, now, n, 5000); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE transactions`); err != nil {
			t.Fatal(err)
		}
		t.Logf("loaded %d rows in %s", n, time.Since(start).Round(time.Second))
	} else if err != nil {
		t.Fatal(err)
	} else {
		t.Log("reusing the rows already loaded for", label)
	}
	var count int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM transactions WHERE user_id = $1`, d.UserID).Scan(&count); err != nil {
		t.Fatal(err)
	}
	t.Logf("user %s has %d transactions", d.UserID, count)

	svc := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("scale")), Clock: func() time.Time { return now }})
	c := finance.Caller{UserID: d.UserID, GrantID: d.GrantID, OwnerAccountID: d.OwnerAccountID}
	tr, fa := true, false
	page := int32(50)
	list := func(q finance.TransactionQuery) func() (int, string, error) {
		q.PageSize = &page
		return func() (int, string, error) {
			p, err := svc.ListTransactions(ctx, c, q)
			return len(p.Data), p.NextCursor, err
		}
	}
	search := func(q string) func() (int, string, error) {
		return func() (int, string, error) {
			p, err := svc.SearchTransactions(ctx, c, finance.SearchQuery{Q: q, PageQuery: finance.PageQuery{PageSize: &page}})
			return len(p.Data), p.NextCursor, err
		}
	}
	nw := networth.NewService(networth.Config{Kernel: svc, Store: store})
	history := func(period string) func() (int, string, error) {
		return func() (int, string, error) {
			h, err := nw.GetNetWorthHistory(ctx, c, period, "")
			return len(h.Points), "", err
		}
	}
	balances := func(accountID, period string) func() (int, string, error) {
		return func() (int, string, error) {
			r, err := nw.BalanceHistory(ctx, c, accountID, period)
			return len(r.Data), "", err
		}
	}
	cases := []struct {
		name  string
		run   func() (int, string, error)
		limit time.Duration
	}{
		{"no filter", list(finance.TransactionQuery{}), 10 * time.Millisecond},
		{"account_id", list(finance.TransactionQuery{AccountID: d.AccountIDs[1]}), 10 * time.Millisecond},
		{"category_id", list(finance.TransactionQuery{CategoryID: d.CategoryIDs[5]}), 10 * time.Millisecond},
		{"start_date+end_date (one month)", list(finance.TransactionQuery{StartDate: "2024-03-01", EndDate: "2024-03-31"}), 10 * time.Millisecond},
		{"start_date only", list(finance.TransactionQuery{StartDate: "2020-01-01"}), 10 * time.Millisecond},
		{"end_date only", list(finance.TransactionQuery{EndDate: "2018-01-01"}), 10 * time.Millisecond},
		{"pending=true", list(finance.TransactionQuery{Pending: &tr}), 10 * time.Millisecond},
		{"pending=false", list(finance.TransactionQuery{Pending: &fa}), 10 * time.Millisecond},
		{"source=manual", list(finance.TransactionQuery{Source: finance.SourceManual}), 10 * time.Millisecond},
		{"source=import", list(finance.TransactionQuery{Source: finance.SourceImport}), 10 * time.Millisecond},
		{"uncategorized", list(finance.TransactionQuery{Uncategorized: true}), 10 * time.Millisecond},
		{"search common word (coffee)", search("coffee"), 50 * time.Millisecond},
		{"search prefix (sta)", search("sta"), 50 * time.Millisecond},
		{"search two words (whole foods)", search("whole foods"), 50 * time.Millisecond},
		{"search memo word (reimbursable)", search("reimbursable"), 50 * time.Millisecond},
		{"search rare word (ampm)", search("ampm"), 50 * time.Millisecond},
		{"search no match (zebra)", search("zebra"), 50 * time.Millisecond},
		// History that reaches back (docs/finance-history.md): every day of
		// the period, derived from the rows where no snapshot was taken.
		{"net-worth history 1y", history("1y"), 100 * time.Millisecond},
		{"net-worth history 30d", history("30d"), 50 * time.Millisecond},
		{"balance history 1y (one account)", balances(d.AccountIDs[1], "1y"), 100 * time.Millisecond},
	}
	const runs = 200
	for _, tc := range cases {
		// Warm the cache once, as a serving replica would be.
		if _, _, err := tc.run(); err != nil {
			t.Fatal(err)
		}
		took := make([]time.Duration, runs)
		rows := 0
		for i := range runs {
			start := time.Now()
			got, _, err := tc.run()
			took[i] = time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			rows = got
		}
		slices.Sort(took)
		p50, p99 := took[runs/2], took[runs*99/100]
		verdict := "ok"
		if p99 > tc.limit {
			verdict = "OVER " + tc.limit.String()
		}
		t.Logf("%-34s rows %3d  p50 %7s  p99 %7s  %s", tc.name, rows, p50.Round(10*time.Microsecond),
			p99.Round(10*time.Microsecond), verdict)
	}

	// EXPLAIN of each query shape, as the store sends it.
	where := func(cond string) string {
		return `SELECT id FROM transactions WHERE user_id = '` + d.UserID + `' AND ` + cond + ` ORDER BY date DESC, id DESC LIMIT 51`
	}
	plans := []struct{ name, sql string }{
		{"account_id", where("account_id = '" + d.AccountIDs[1] + "'")},
		{"category_id", where("category_id = '" + d.CategoryIDs[5] + "'")},
		{"date range", where("date >= '2024-03-01' AND date <= '2024-03-31'")},
		{"pending", where("is_pending = true")},
		{"source", where("source = 'manual'")},
		{"uncategorized", where("category_id IS NULL")},
		{"search, step 1 (window of the newest rows)", `SELECT id FROM (SELECT * FROM transactions WHERE user_id = '` + d.UserID +
			`' ORDER BY date DESC, id DESC LIMIT 10000) t WHERE search @@ to_tsquery('simple', '''coffee'':*') ORDER BY date DESC, id DESC LIMIT 51`},
		{"search, step 2 (GIN, rare word)", `/* bitmap only */ ` + where(`search @@ to_tsquery('simple', '''zebra'':*')`)},
	}
	for _, p := range plans {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p.sql, "/* bitmap only */") {
			_, err = conn.Exec(ctx, `SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off`)
		} else {
			_, err = conn.Exec(ctx, `RESET ALL`)
		}
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, `EXPLAIN (ANALYZE, COSTS OFF) `+p.sql)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		rows.Close()
		_, _ = conn.Exec(ctx, `RESET ALL`)
		conn.Release()
		plan := strings.Join(lines, "\n")
		t.Logf("EXPLAIN %s:\n%s", p.name, plan)
		if !strings.Contains(plan, "Index") {
			t.Errorf("%s: no index in the plan", p.name)
		}
	}
}
