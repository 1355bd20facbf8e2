package portal

import (
	"fmt"

	edgev1 "github.com/ledgerlane/platform/proto/edge/v1"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// chartDays is how many days the Requests page charts.
const chartDays = 30

// requestChart is the Requests page's bar chart, drawn server-side as SVG
// (no script): one bar per day, live successes, live errors and test
// requests stacked, on a 0–100 scale of the busiest day. The figure's text
// says the totals for readers who cannot see it.
type requestChart struct {
	Bars                            []dayBar
	Live, LiveErrors, Test, Busiest int64
	From, To                        string
}

// dayBar is one day's stack, in chart units (the SVG is 10 units a day
// wide, 100 high).
type dayBar struct {
	X                   int
	Date, Title         string
	OK, Errors, Test    float64 // heights
	OKY, ErrorsY, TestY float64 // tops
}

func newRequestChart(days []*edgev1.DayRequestCount) *requestChart {
	c := &requestChart{}
	if len(days) == 0 {
		return c
	}
	c.From, c.To = days[0].GetDate(), days[len(days)-1].GetDate()
	for _, d := range days {
		c.Busiest = max(c.Busiest, int64(d.GetLiveOk())+liveErrors(d)+testTotal(d))
	}
	scale := 100 / float64(max(c.Busiest, 1))
	for i, d := range days {
		ok, errs, test := int64(d.GetLiveOk()), liveErrors(d), testTotal(d)
		c.Live += ok + errs
		c.LiveErrors += errs
		c.Test += test
		b := dayBar{X: i * 10, Date: d.GetDate(), OK: float64(ok) * scale, Errors: float64(errs) * scale, Test: float64(test) * scale,
			Title: fmt.Sprintf("%s: %d live (%d errors), %d test", d.GetDate(), ok+errs, errs, test)}
		b.OKY = 100 - b.OK
		b.ErrorsY = b.OKY - b.Errors
		b.TestY = b.ErrorsY - b.Test
		c.Bars = append(c.Bars, b)
	}
	return c
}

func liveErrors(d *edgev1.DayRequestCount) int64 {
	return int64(d.GetLiveClientError()) + int64(d.GetLiveServerError())
}

func testTotal(d *edgev1.DayRequestCount) int64 {
	return int64(d.GetTestOk()) + int64(d.GetTestClientError()) + int64(d.GetTestServerError())
}

// usageChart is the usage page's chart of metered conversions per day (the
// quota's units, GET /v1/usage/daily), drawn like requestChart: live and
// test stacked, on a 0–100 scale of the busiest day, with the totals in
// words. Period says whether it shows the current period (whose live days
// add up to PeriodLive, the usage above) or the last 90 days.
type usageChart struct {
	Bars                []usageBar
	Live, Test, Busiest int64
	From, To            string
	Period              bool
	PeriodLive, Undated int64
	TestUsed            int64
	Key, KeyName        string // the key shown ("" every key) and its name
	Keys                []seriesOption
	Credentials         []totalRow
	HasDays, Width      int
}

type usageBar struct {
	X            int
	Title        string
	Live, Test   float64 // heights
	LiveY, TestY float64 // tops
}

func newUsageChart(u *meteringv1.GetDailyUsageResponse) *usageChart {
	c := &usageChart{From: u.GetStartDate(), To: u.GetEndDate(), PeriodLive: int64(u.GetPeriodLive()),
		Undated: int64(u.GetPeriodUndated()), TestUsed: int64(u.GetTestUsed())}
	for _, d := range u.GetDays() {
		c.Busiest = max(c.Busiest, int64(d.GetLive())+int64(d.GetTest()))
	}
	scale := 100 / float64(max(c.Busiest, 1))
	for i, d := range u.GetDays() {
		live, test := int64(d.GetLive()), int64(d.GetTest())
		c.Live += live
		c.Test += test
		b := usageBar{X: i * 10, Live: float64(live) * scale, Test: float64(test) * scale,
			Title: fmt.Sprintf("%s: %d live, %d test conversions", d.GetDate(), live, test)}
		b.LiveY = 100 - b.Live
		b.TestY = b.LiveY - b.Test
		c.Bars = append(c.Bars, b)
	}
	c.Width = len(c.Bars) * 10
	return c
}
