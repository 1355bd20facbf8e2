package admission

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// Daily reads an account's usage by day and credential: every live window
// still kept that ends after since (from the account's window index, plus
// l's current window, always), and the test pool. It is one read of the
// index and one pipeline of HGETALLs (a handful of keys): nothing on the
// request path, no scan.
func (m *Controller) Daily(ctx context.Context, acct string, l Limits, since time.Time) (quota.DailyCounts, error) {
	keys, err := m.rdb.ZRangeByScore(ctx, windowsKey(acct), &redis.ZRangeBy{
		Min: strconv.FormatInt(since.UnixMilli(), 10), Max: "+inf"}).Result()
	if err != nil {
		return quota.DailyCounts{}, fmt.Errorf("admission: daily: %w", err)
	}
	current := LiveKey(acct, l.PeriodStart)
	windows := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		if k != current && strings.HasPrefix(k, "ll:{"+acct+"}:live:") {
			windows = append(windows, k)
		}
	}
	windows = append(windows, current)
	cmds := make([]*redis.MapStringStringCmd, len(windows))
	var test *redis.MapStringStringCmd
	_, err = m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range windows {
			cmds[i] = p.HGetAll(ctx, k)
		}
		test = p.HGetAll(ctx, TestKey(acct))
		return nil
	})
	if err != nil {
		return quota.DailyCounts{}, fmt.Errorf("admission: daily: %w", err)
	}
	var out quota.DailyCounts
	for i, k := range windows {
		start, err := time.Parse(dayLayout, k[strings.LastIndexByte(k, ':')+1:])
		if err != nil {
			continue // not a window key
		}
		w := parseWindow(cmds[i].Val())
		w.Start = start
		out.Live = append(out.Live, w)
	}
	// The index is ordered by the windows' ends; the current one is last
	// (a later window than the current cannot exist).
	sort.SliceStable(out.Live[:len(out.Live)-1], func(i, j int) bool { return out.Live[i].Start.Before(out.Live[j].Start) })
	out.Test = parseWindow(test.Val())
	return out, nil
}

// parseWindow reads a counter hash: used and its day fields. Fields it
// does not know (over) are skipped; a day field that does not parse is too.
func parseWindow(h map[string]string) quota.WindowDays {
	var w quota.WindowDays
	w.Used, _ = strconv.ParseInt(h["used"], 10, 64)
	for f, v := range h {
		rest, ok := strings.CutPrefix(f, dayPrefix)
		if !ok || len(rest) < len(dayLayout)+1 || rest[len(dayLayout)] != ':' {
			continue
		}
		day, err := time.Parse(dayLayout, rest[:len(dayLayout)])
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n == 0 {
			continue
		}
		w.Days = append(w.Days, quota.UsageDay{Day: day, CredentialID: rest[len(dayLayout)+1:], Units: n})
	}
	sort.Slice(w.Days, func(i, j int) bool {
		if !w.Days[i].Day.Equal(w.Days[j].Day) {
			return w.Days[i].Day.Before(w.Days[j].Day)
		}
		return w.Days[i].CredentialID < w.Days[j].CredentialID
	})
	return w
}
