package budgets

import (
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

// Period is one budget period: [Start, End), dates at midnight UTC.
type Period struct {
	Start, End time.Time
	Label      string
}

// Contains reports whether date d falls in the period.
func (p Period) Contains(d time.Time) bool {
	d = finance.Day(d)
	return !d.Before(p.Start) && d.Before(p.End)
}

// PeriodContaining returns the budget's period that contains date d.
func (b Budget) PeriodContaining(d time.Time) Period {
	d = finance.Day(d)
	switch b.PeriodType {
	case PeriodMonthlyAnchored:
		day := b.anchorDay()
		start := time.Date(d.Year(), d.Month(), day, 0, 0, 0, 0, time.UTC)
		if d.Day() < day {
			start = start.AddDate(0, -1, 0)
		}
		return b.period(start)
	case PeriodBiweekly:
		anchor := finance.Day(b.PeriodAnchorDate)
		days := int(d.Sub(anchor).Hours() / 24)
		k := days / 14
		if days < 0 && days%14 != 0 {
			k--
		}
		return b.period(anchor.AddDate(0, 0, 14*k))
	default:
		return b.period(time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC))
	}
}

// PeriodStartingIn returns the first of the budget's periods that starts in
// the given calendar month.
func (b Budget) PeriodStartingIn(year int, month time.Month) Period {
	first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	switch b.PeriodType {
	case PeriodMonthlyAnchored:
		return b.period(time.Date(year, month, b.anchorDay(), 0, 0, 0, 0, time.UTC))
	case PeriodBiweekly:
		p := b.PeriodContaining(first)
		if p.Start.Before(first) {
			p = b.period(p.End)
		}
		return p
	default:
		return b.period(first)
	}
}

// Previous returns the period before p.
func (b Budget) Previous(p Period) Period { return b.PeriodContaining(p.Start.AddDate(0, 0, -1)) }

func (b Budget) anchorDay() int {
	if b.PeriodAnchorDay < 1 || b.PeriodAnchorDay > 28 {
		return 1
	}
	return b.PeriodAnchorDay
}

// period makes the period starting at start, with its label: "March 2025"
// for a calendar month, "Mar 25 – Apr 24, 2025" otherwise (the last day
// included, both years when they differ).
func (b Budget) period(start time.Time) Period {
	var end time.Time
	switch b.PeriodType {
	case PeriodBiweekly:
		end = start.AddDate(0, 0, 14)
	default:
		end = start.AddDate(0, 1, 0)
	}
	p := Period{Start: start, End: end}
	last := end.AddDate(0, 0, -1)
	switch {
	case b.PeriodType != PeriodBiweekly && b.PeriodType != PeriodMonthlyAnchored:
		p.Label = start.Format("January 2006")
	case start.Year() != last.Year():
		p.Label = start.Format("Jan 2, 2006") + " – " + last.Format("Jan 2, 2006")
	default:
		p.Label = start.Format("Jan 2") + " – " + last.Format("Jan 2, 2006")
	}
	return p
}

// periodsPerMonth is how many of the budget's periods make a month, for
// scaling a monthly income to one period: 1, or 12/26 for two weeks.
func (b Budget) incomeForPeriod(monthly finance.Money) finance.Money {
	if b.PeriodType == PeriodBiweekly {
		monthly.Amount = monthly.Amount.Mul(decNum(12)).Div(decNum(26)).Round(finance.MinorUnit(monthly.Currency))
	}
	return monthly
}
