package recurring

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ledgerlane/platform/services/finance"
)

// Stream types: which way a stream's money goes.
const (
	StreamInflow  = "inflow"
	StreamOutflow = "outflow"
)

// Rule describes a stream of transactions expected at a frequency
// (salary, rent, subscriptions), used for bills and forecasts.
type Rule struct {
	ID               string
	UserID           string
	AccountID        string
	CategoryID       string
	Merchant         string
	DisplayName      string
	ExpectedAmount   finance.Money
	Frequency        string
	StreamType       string
	NextExpectedDate time.Time // a date
	LastSeenDate     *time.Time
	LogoURL          string
	IsActive         bool
	// Status and Occurrences are set by stream detection (detect.go):
	// early, mature or stale, and how many rows the stream holds. A rule
	// written before detection ran has neither.
	Status      string
	Occurrences int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Stream statuses of a detected recurring stream (ours).
const (
	// StreamEarly: detected from 3 or 4 occurrences.
	StreamEarly = "early"
	// StreamMature: 5 or more occurrences.
	StreamMature = "mature"
	// StreamStale: two expected occurrences in a row have not come (with
	// the cadence's tolerance); the rule is kept inactive.
	StreamStale = "stale"
)

// Detection parameters (README.md "Recurring streams" states the rule).
const (
	MinStreamOccurrences    = 3
	MatureStreamOccurrences = 5
)

// streamAmountTolerance: consecutive occurrences of a stream differ by at
// most this share of the larger amount, so a price change (15.49 → 17.99)
// stays in the stream and a one-off of another size does not join it.
const streamAmountTolerance = 0.25

// cadence is one detectable interval: a step between consecutive
// occurrences is lo..hi days (one missed occurrence: 2lo..2hi).
type cadence struct {
	freq    string
	nominal float64 // mean days per step
	lo, hi  int
}

var cadences = []cadence{
	{finance.FrequencyWeekly, 7, 6, 8},
	{finance.FrequencyBiweekly, 14, 12, 16},
	{finance.FrequencySemiMonthly, 365.25 / 24, 13, 17},
	{finance.FrequencyMonthly, 365.25 / 12, 26, 35},
	{finance.FrequencyQuarterly, 365.25 / 4, 84, 98},
	{finance.FrequencyAnnually, 365.25, 355, 376},
}

// DetectedStream is a recurring stream found in a user's rows.
type DetectedStream struct {
	// Key is what identifies the stream across detections: account,
	// normalized counterparty, direction and currency.
	Key        string
	AccountID  string
	Merchant   string // the latest occurrence's counterparty (BudgetRow.Counterparty)
	CategoryID string // the latest occurrence's category
	StreamType string // StreamInflow or StreamOutflow
	Frequency  string
	// ExpectedAmount is the latest occurrence's signed amount, so a price
	// change is followed at once.
	ExpectedAmount   finance.Money
	FirstDate        time.Time
	LastDate         time.Time
	NextExpectedDate time.Time
	Status           string
	// TransactionIDs are the occurrences, oldest first.
	TransactionIDs []string
}

// noiseWords are descriptor words that say nothing about the counterparty.
var noiseWords = map[string]bool{"pos": true, "debit": true, "credit": true, "purchase": true, "card": true,
	"ach": true, "pmt": true, "payment": true, "www": true, "com": true, "net": true, "org": true, "inc": true,
	"llc": true, "ltd": true, "corp": true, "the": true, "recurring": true, "autopay": true, "online": true,
	"bill": true, "sq": true, "tst": true, "pp": true}

// NormalizeCounterparty is the counterparty part of a stream's key: lower
// case, split on anything but letters and digits, without words holding a
// digit (store numbers, references, dates), words of one or two letters
// (state codes) and descriptor noise, keeping the first two words.
// "NETFLIX.COM 866-579-7172 CA" and "Netflix" are both "netflix".
func NormalizeCounterparty(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := make([]string, 0, 2)
	for _, w := range words {
		if len(out) == 2 {
			break
		}
		if len([]rune(w)) <= 2 || noiseWords[w] || strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// StreamKey is the key of the stream a row or rule belongs to.
func StreamKey(accountID, merchant, streamType, currency string) string {
	return accountID + "|" + NormalizeCounterparty(merchant) + "|" + streamType + "|" + currency
}

// DetectStreams finds the recurring streams in rows (any order): rows of
// one account, counterparty, direction and currency that repeat at a
// regular interval. The rule (README.md "Recurring streams"):
//
//   - transfers between the user's own accounts (TransferPairID set; the
//     service clears it on payments to the user's debt accounts, which are
//     bills), split slices, zero amounts and rows without a counterparty
//     are not streams;
//   - for each cadence (weekly 6-8 days, biweekly 12-16, semi-monthly
//     13-17, monthly 26-35, quarterly 84-98, yearly 355-376 between
//     occurrences; twice that where one occurrence was missed), a chain is
//     walked back from one of the three latest rows: the next older row
//     whose gap fits and whose amount is within 25 % of the chain's
//     current one joins; rows too close or of another size are skipped
//     (one-offs); a gap beyond two steps ends the chain;
//   - a chain needs at least 3 occurrences and at most one missed step
//     per three occurrences; the best has the most occurrences, then the
//     fewest missed steps, then the gaps closest to the cadence;
//   - a chain is refused when, inside its span, the group holds more
//     other rows of a similar amount than half its length, or more other
//     rows of any amount than its length (a frequent merchant, such as
//     daily coffee or a favourite restaurant, is not a subscription);
//   - status: stale when today is past the second expected occurrence
//     after the last one (plus the cadence's tolerance), else early below
//     5 occurrences, mature from 5.
//
// Streams are ordered by key.
func DetectStreams(rows []finance.BudgetRow, today time.Time) []DetectedStream {
	today = finance.Day(today)
	// Groups hold row indexes: rows are wide, and a full history is large.
	groups := map[string][]int32{}
	norm := map[string]string{} // merchant → counterparty, normalized once
	for i := range rows {
		r := &rows[i]
		if r.TransferPairID != "" || r.SplitParentID != "" || r.Amount.Amount.IsZero() {
			continue
		}
		name := r.Counterparty()
		cp, ok := norm[name]
		if !ok {
			cp = NormalizeCounterparty(name)
			norm[name] = cp
		}
		if cp == "" {
			continue
		}
		st := StreamOutflow
		if r.Amount.Amount.IsPositive() {
			st = StreamInflow
		}
		k := r.AccountID + "|" + cp + "|" + st + "|" + r.Amount.Currency
		groups[k] = append(groups[k], int32(i))
	}
	var out []DetectedStream
	for k, ix := range groups {
		if len(ix) < MinStreamOccurrences {
			continue
		}
		slices.SortFunc(ix, func(a, b int32) int {
			return cmp.Or(rows[a].Date.Compare(rows[b].Date), cmp.Compare(rows[a].ID, rows[b].ID))
		})
		if s, ok := detectGroup(rows, ix, today); ok {
			s.Key = k
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b DetectedStream) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// point is a row as the chain walk compares it: its day number and its
// amount's size as a float. Floats only decide whether two amounts are
// alike (a tolerance test); every figure a stream reports stays exact.
type point struct {
	day int64
	amt float64
}

// chain is a candidate stream: indexes into the group, newest first.
type chain struct {
	cad    cadence
	idx    []int
	missed int
	err    float64 // mean |gap − nominal steps| in days
}

func (c chain) better(d chain) bool {
	if len(c.idx) != len(d.idx) {
		return len(c.idx) > len(d.idx)
	}
	if c.missed != d.missed {
		return c.missed < d.missed
	}
	return c.err < d.err
}

// detectGroup finds the best chain of one group: rows[ix[…]] in date order.
func detectGroup(rows []finance.BudgetRow, ix []int32, today time.Time) (DetectedStream, bool) {
	pts := make([]point, len(ix))
	for i, j := range ix {
		r := &rows[j]
		pts[i] = point{day: finance.Day(r.Date).Unix() / 86400, amt: r.Amount.Amount.Abs().InexactFloat64()}
	}
	g := func(i int) *finance.BudgetRow { return &rows[ix[i]] }
	var best chain
	for _, cad := range cadences {
		for start := len(ix) - 1; start >= 0 && start >= len(ix)-3; start-- {
			c := walk(pts, start, cad)
			if len(c.idx) >= MinStreamOccurrences && c.missed*3 <= len(c.idx) && (best.idx == nil || c.better(best)) && !crowded(pts, c) {
				best = c
			}
		}
	}
	if len(best.idx) < MinStreamOccurrences {
		return DetectedStream{}, false
	}
	last, first := g(best.idx[0]), g(best.idx[len(best.idx)-1])
	s := DetectedStream{AccountID: last.AccountID, Merchant: last.Counterparty(), CategoryID: last.CategoryID,
		StreamType: StreamOutflow, Frequency: best.cad.freq, ExpectedAmount: last.Amount,
		FirstDate: finance.Day(first.Date), LastDate: finance.Day(last.Date)}
	if last.Amount.Amount.IsPositive() {
		s.StreamType = StreamInflow
	}
	for i := len(best.idx) - 1; i >= 0; i-- {
		s.TransactionIDs = append(s.TransactionIDs, g(best.idx[i]).ID)
	}
	s.NextExpectedDate = finance.NextOccurrence(s.LastDate, s.Frequency)
	grace := best.cad.hi - int(best.cad.nominal)
	switch {
	case today.After(finance.NextOccurrence(s.NextExpectedDate, s.Frequency).AddDate(0, 0, grace)):
		s.Status = StreamStale
	case len(best.idx) < MatureStreamOccurrences:
		s.Status = StreamEarly
	default:
		s.Status = StreamMature
	}
	return s, true
}

// walk builds cad's chain back from pts[start].
func walk(pts []point, start int, cad cadence) chain {
	c := chain{cad: cad, idx: []int{start}}
	cur := start
	var errSum float64
	for i := start - 1; i >= 0; i-- {
		gap := int(pts[cur].day - pts[i].day)
		if gap > 2*cad.hi {
			break
		}
		steps := 0
		switch {
		case gap >= cad.lo && gap <= cad.hi:
			steps = 1
		case gap >= 2*cad.lo && gap <= 2*cad.hi:
			steps = 2
		}
		if steps == 0 || !similar(pts[cur].amt, pts[i].amt) {
			continue
		}
		d := float64(gap) - float64(steps)*cad.nominal
		if d < 0 {
			d = -d
		}
		errSum += d
		c.missed += steps - 1
		c.idx = append(c.idx, i)
		cur = i
	}
	if n := len(c.idx) - 1; n > 0 {
		c.err = errSum / float64(n)
	}
	return c
}

// similar: the amounts differ by at most streamAmountTolerance of the
// larger one.
func similar(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= max(a, b)*streamAmountTolerance
}

// crowded reports whether, inside the chain's span and outside the
// chain, the group has more rows of a similar amount than half the
// chain's length, or more rows of any amount than the chain: then the
// "stream" is a frequent merchant's visits that happen to line up.
func crowded(pts []point, c chain) bool {
	lo, hi := c.idx[len(c.idx)-1], c.idx[0]
	in := make([]bool, hi-lo+1)
	for _, i := range c.idx {
		in[i-lo] = true
	}
	ref := pts[hi].amt
	extra, like := 0, 0
	for i := lo; i <= hi; i++ {
		if in[i-lo] {
			continue
		}
		extra++
		if similar(ref, pts[i].amt) {
			like++
		}
	}
	return like*2 > len(c.idx) || extra > len(c.idx)
}
