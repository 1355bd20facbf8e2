package limitswire_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/admission/limitswire"
)

func TestRoundTrip(t *testing.T) {
	capCents := int64(5000)
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, l := range []admission.Limits{
		{Plan: "starter", RatePerSecond: 20, Burst: 40, MonthlyQuota: 25000, OveragePer1000: 150, Currency: "usd",
			PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), TestQuota: admission.TestPool},
		{Plan: "free", RatePerSecond: 5, Burst: 10, MonthlyQuota: 1000, HardStop: true, OverageCapCents: &capCents,
			Currency: "eur", PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), TestQuota: admission.TestPool},
	} {
		if got := limitswire.FromProto(limitswire.ToProto(l)); !reflect.DeepEqual(got, l) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, l)
		}
	}
}
