package metering

// Plan IDs.
const (
	PlanFree    = "free"
	PlanStarter = "starter"
	PlanGrowth  = "growth"
	PlanScale   = "scale"
)

// Prices holds one amount per billing currency, in minor units (cents, pence).
// Money is never a float anywhere in the service.
type Prices struct {
	USD, EUR, GBP int64
}

// In returns the amount in currency c; ok is false for an unsupported currency.
func (p Prices) In(c Currency) (amount int64, ok bool) {
	switch c {
	case USD:
		return p.USD, true
	case EUR:
		return p.EUR, true
	case GBP:
		return p.GBP, true
	}
	return 0, false
}

// Plan is one row of the price list. Prices are pre-tax.
type Plan struct {
	ID string
	// IncludedConversions is the live volume included in one period.
	IncludedConversions int64
	// CalendarMonth: the period is the UTC calendar month rather than the
	// month starting on the account's billing anniversary.
	CalendarMonth bool
	// HardStop: live conversions past the included volume are refused, never
	// billed as overage.
	HardStop bool
	// MonthlyPrice is the flat price of one period.
	MonthlyPrice Prices
	// OveragePer1000 is the price of 1,000 conversions past the included
	// volume. Pricing per thousand keeps every amount a whole minor unit.
	OveragePer1000 Prices
	// RatePerSecond and Burst size the account's token bucket.
	RatePerSecond int
	Burst         int
	// DirectDebitOnly: billed only by bank direct debit (ACH, SEPA or Bacs,
	// following the billing currency); a card cannot be the default method.
	DirectDebitOnly bool
}

// plans is the one price list. Numbers (flat price per month; overage per
// 1,000 conversions; token bucket):
//
//	free     1,000 incl.   no charge, hard stop                       5 rps, burst 10
//	starter  25,000 incl.  $29 / €27 / £23;    $1.50 / €1.40 / £1.20   20 rps, burst 40
//	growth   250,000 incl. $149 / €139 / £119; $0.80 / €0.75 / £0.65   100 rps, burst 200
//	scale    2,000,000     $799 / €749 / £639; $0.45 / €0.42 / £0.36   500 rps, burst 1,000; direct debit only
//
// Overage always costs more per conversion than the next tier's included
// volume, so heavy users are nudged to upgrade instead of living on overage.
var plans = []Plan{
	{
		ID:                  PlanFree,
		IncludedConversions: 1_000,
		CalendarMonth:       true,
		HardStop:            true,
		RatePerSecond:       5,
		Burst:               10,
	},
	{
		ID:                  PlanStarter,
		IncludedConversions: 25_000,
		MonthlyPrice:        Prices{USD: 29_00, EUR: 27_00, GBP: 23_00},
		OveragePer1000:      Prices{USD: 1_50, EUR: 1_40, GBP: 1_20},
		RatePerSecond:       20,
		Burst:               40,
	},
	{
		ID:                  PlanGrowth,
		IncludedConversions: 250_000,
		MonthlyPrice:        Prices{USD: 149_00, EUR: 139_00, GBP: 119_00},
		OveragePer1000:      Prices{USD: 80, EUR: 75, GBP: 65},
		RatePerSecond:       100,
		Burst:               200,
	},
	{
		ID:                  PlanScale,
		IncludedConversions: 2_000_000,
		MonthlyPrice:        Prices{USD: 799_00, EUR: 749_00, GBP: 639_00},
		OveragePer1000:      Prices{USD: 45, EUR: 42, GBP: 36},
		RatePerSecond:       500,
		Burst:               1_000,
		DirectDebitOnly:     true,
	},
}

// Plans returns the price list, cheapest first.
func Plans() []Plan {
	return append([]Plan(nil), plans...)
}

// PlanByID returns the plan with the given ID.
func PlanByID(id string) (Plan, bool) {
	for _, p := range plans {
		if p.ID == id {
			return p, true
		}
	}
	return Plan{}, false
}
