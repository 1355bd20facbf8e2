package server_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/server"
)

// TestMeasureIdleBillingTick measures what the billing tick costs an idle
// stack: the PostgreSQL transactions one tick commits over many accounts
// that have nothing due, read from pg_stat_database of a database of its
// own (so other users of the server do not count). It is a measurement, not
// a check: it runs only with BILLING_TICK_MEASURE set (to the number of
// accounts), TEST_DATABASE_URL and TEST_REDIS_URL:
//
//	BILLING_TICK_MEASURE=1000 TEST_DATABASE_URL=… TEST_REDIS_URL=… go test -run MeasureIdle -v ./server
func TestMeasureIdleBillingTick(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BILLING_TICK_MEASURE"))
	dbURL, redisURL := os.Getenv("TEST_DATABASE_URL"), os.Getenv("TEST_REDIS_URL")
	if n <= 0 || dbURL == "" || redisURL == "" {
		t.Skip("a measurement: set BILLING_TICK_MEASURE, TEST_DATABASE_URL and TEST_REDIS_URL")
	}
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	db := fmt.Sprintf("metering_tick_%d", os.Getpid())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
	}()
	u, _ := url.Parse(dbURL)
	u.Path = "/" + db
	s, err := server.New(ctx, server.Config{DatabaseURL: u.String(), RedisURL: redisURL, BillingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		if _, err := s.Service().CreateAccount(ctx, fmt.Sprintf("idle %d", i), metering.PlanStarter, metering.USD); err != nil {
			t.Fatal(err)
		}
	}
	commits := func() int64 {
		// Backends report their counts at most once a second, and idle
		// ones after 10 s: wait for both.
		time.Sleep(11 * time.Second)
		var c int64
		if err := admin.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, db).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	s.BillingTick(ctx) // the first tick may do one-off work (a lazy backfill)
	// What the database commits meanwhile without a tick (autovacuum, the
	// statistics reads) is measured over an equal window and subtracted.
	c0 := commits()
	c1 := commits()
	const ticks = 3
	start := time.Now()
	for range ticks {
		s.BillingTick(ctx)
	}
	took := time.Since(start) / ticks
	c2 := commits()
	// Marks that other stacks on a shared Redis left cost one account
	// lookup each (docs/billing.md): say how many there were.
	rc, err := redisconn.Connect(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	marks, _ := rc.ZCard(ctx, admission.DefaultChangedKey).Result()
	t.Logf("%d idle accounts: %.1f transactions per tick (%d in the window with %d ticks, %d in one without), %v per tick; "+
		"%d marks of other stacks' accounts in the shared Redis", n, float64((c2-c1)-(c1-c0))/ticks, c2-c1, ticks, c1-c0, took, marks)
}
