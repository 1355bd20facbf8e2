package admission_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/redisconn"
	"github.com/ledgerlane/platform/services/metering/admission"
)

// BenchmarkLimiter compares one admission (token bucket and quota in one
// script) with redis_rate's GCRA limiter on the same Redis, in the same run.
// Run against a real server for meaningful numbers:
//
//	TEST_REDIS_URL=redis://127.0.0.1:6379/0 go test -run x -bench Limiter -benchtime 20000x ./admission/
func BenchmarkLimiter(b *testing.B) {
	rdb := redisconn.ForTest(b)
	ctx := context.Background()
	start, end := admission.Period(true, time.Time{}, time.Now())
	l := admission.Limits{RatePerSecond: 1_000_000, Burst: 1_000_000, MonthlyQuota: 1 << 40, Currency: "usd",
		OveragePer1000: 150, PeriodStart: start, PeriodEnd: end, TestQuota: admission.TestPool}
	// The marks for the alert check go to a set of the benchmark's own, so
	// a shared server's metering services do not see its accounts.
	changed := "ll:{bench}:changed:" + uuid.NewString()
	b.Cleanup(func() { _ = rdb.Del(context.Background(), changed, changed+":orphans").Err() })
	newController := func() *admission.Controller {
		m := admission.New(rdb, nil)
		m.ChangedKey = changed
		return m
	}
	for _, accounts := range []int{1, 1000} {
		ids := make([]string, accounts)
		for i := range ids {
			ids[i] = uuid.NewString()
		}
		b.Run(fmt.Sprintf("meter_bucket/accounts=%d", accounts), func(b *testing.B) {
			m := newController()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := m.Admit(ctx, admission.Request{AccountID: ids[i%accounts], Limits: l}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
		b.Run(fmt.Sprintf("meter_bucket+quota/accounts=%d", accounts), func(b *testing.B) {
			m := newController()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := m.Admit(ctx, admission.Request{AccountID: ids[i%accounts], Metered: true, Limits: l}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
		b.Run(fmt.Sprintf("redis_rate/accounts=%d", accounts), func(b *testing.B) {
			lim := redis_rate.NewLimiter(rdb)
			limit := redis_rate.Limit{Rate: 1_000_000, Burst: 1_000_000, Period: time.Second}
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := lim.Allow(ctx, ids[i%accounts], limit); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}
