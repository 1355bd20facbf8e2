package load

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Print writes the run's table: one row per scenario and a total, then the
// usage check.
func (res Result) Print(w io.Writer) error {
	mode := fmt.Sprintf("fixed rate %d/s", res.Rate)
	if res.Rate == 0 {
		mode = "as fast as possible"
	}
	fmt.Fprintf(w, "load: %s, %s, %d workers, %d accounts, %s\n\n", res.Target, mode, res.Workers, res.Accounts, res.Elapsed.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SCENARIO\tROUTE\tREQUESTS\tREQ/S\tP50\tP90\tP99\tMAX\tSTATUSES\t")
	total := Summary{Statuses: map[int]int{}}
	for _, r := range res.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", r.Scenario, r.Route, r.Requests, r.PerSecond,
			ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max), statuses(r.Statuses))
		total.Requests += r.Requests
		total.PerSecond += r.PerSecond
		total.Max = max(total.Max, r.Max)
		for k, v := range r.Statuses {
			total.Statuses[k] += v
		}
	}
	fmt.Fprintf(tw, "total\t\t%d\t%.1f\t\t\t\t%s\t%s\t\n", total.Requests, total.PerSecond, ms(total.Max), statuses(total.Statuses))
	if err := tw.Flush(); err != nil {
		return err
	}
	if checked := res.Replays + res.ReplayMisses; checked+res.ReplaysRefused > 0 {
		verdict := "OK"
		if res.ReplayMisses > 0 {
			verdict = "MISMATCH"
		}
		fmt.Fprintf(w, "\nidempotency: %s, %d of %d finance-write replays (same Idempotency-Key and body) answered from the store",
			verdict, res.Replays, checked)
		if res.ReplaysRefused > 0 {
			fmt.Fprintf(w, "; %d more refused by the rate limiter (429) before reaching it, not checked", res.ReplaysRefused)
		}
		fmt.Fprintln(w)
	}
	u := res.Usage
	switch {
	case u.Accounts == 0:
		fmt.Fprintln(w, "\nusage: no metered accounts in the mix")
	case u.Err != nil:
		fmt.Fprintf(w, "\nusage: could not be read: %v\n", u.Err)
	case u.Matching == u.Accounts:
		fmt.Fprintf(w, "\nusage: OK, all %d accounts counted exactly the units of their 2xx answers (%d units)\n", u.Accounts, u.Counted)
	default:
		fmt.Fprintf(w, "\nusage: MISMATCH, %d of %d accounts differ (2xx units %d, counted %d)\n", u.Accounts-u.Matching, u.Accounts, u.Expected, u.Counted)
		for i, m := range u.Mismatches {
			if i == 10 {
				fmt.Fprintf(w, "  ... and %d more\n", len(u.Mismatches)-10)
				break
			}
			fmt.Fprintf(w, "  account %s: 2xx units %d, counted %d\n", m.AccountID, m.Expected, m.Counted)
		}
	}
	return nil
}

// OK reports whether the run is clean: usage matched, every replay was
// answered from the idempotency store, and no request went unanswered or
// got a 5xx.
func (res Result) OK() bool {
	if res.Usage.Err != nil || res.Usage.Matching != res.Usage.Accounts || res.ReplayMisses > 0 {
		return false
	}
	for _, r := range res.Rows {
		for code := range r.Statuses {
			if code == 0 || code >= 500 {
				return false
			}
		}
	}
	return true
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// statuses reads "200:1234 429:5"; 0 (no answer) shows as "err".
func statuses(m map[int]int) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		name := fmt.Sprint(c)
		if c == 0 {
			name = "err"
		}
		parts = append(parts, fmt.Sprintf("%s:%d", name, m[c]))
	}
	return strings.Join(parts, " ")
}
