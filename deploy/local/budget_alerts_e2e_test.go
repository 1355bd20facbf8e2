package local_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// TestBudgetAlertsEndToEnd: budget.threshold_reached through the gateway,
// NATS and jobs' fan-out. The demo's active budget gets its allocations
// and thresholds set (every group out of reach but one, whose allocation
// puts the next write between 80 % and 100 %); a bulk recategorise moves a
// spend into that group, and a subscribed receiver gets ONE signed
// budget.threshold_reached for the writing grant (ids, threshold, period;
// no amount or name). Moving the spend out and back in again in the same
// period (below 80 %, then above again) sends nothing more.
func TestBudgetAlertsEndToEnd(t *testing.T) {
	clock := newStepClock()
	st := stack(t, false, func(c *local.Config) {
		c.Now = clock.Now
		c.SandboxInterval, c.DemoPlan = -1, "scale"
		c.RecurringInterval = -1
	})
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	f := &fin{client: client{t: t, base: st.URL, keys: keys}}
	const w = "finance-write"

	alerts := newFlakyReceiver(t, 204)
	syncs := newFlakyReceiver(t, 204)
	endpoint := func(url, typ string) (string, string) {
		r := f.call("POST", "/v1/webhooks", "conversion-all", `{"url":"`+url+`","event_types":["`+typ+`"]}`)
		if r.status != 200 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		return r.json["id"].(string), r.json["secret"].(string)
	}
	alertsID, secret := endpoint(alerts.srv.URL+"/alerts", "budget.threshold_reached")
	syncsID, _ := endpoint(syncs.srv.URL+"/syncs", "transactions.sync_updates_available")
	deliveries := func(id string) []map[string]any {
		t.Helper()
		r := f.call("GET", "/v1/webhooks/"+id+"/deliveries?page_size=100", "conversion-all", "")
		if r.status != 200 {
			t.Fatalf("deliveries: %d %s", r.status, r.body)
		}
		var out []map[string]any
		for _, d := range r.json["deliveries"].([]any) {
			out = append(out, d.(map[string]any))
		}
		return out
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	settled := func(id string) bool {
		return !slices.ContainsFunc(deliveries(id), func(d map[string]any) bool { return d["status"] != "succeeded" })
	}
	// syncEvent makes a write and waits for its sync event's delivery to
	// settle (the receiver answers at once, so nothing is left to absorb
	// the next write's event).
	syncEvent := func(write func()) {
		t.Helper()
		waitFor("sync deliveries settled", func() bool { return settled(syncsID) })
		before := len(deliveries(syncsID))
		write()
		waitFor("the write's sync event", func() bool { return len(deliveries(syncsID)) > before })
		waitFor("sync deliveries settled", func() bool { return settled(syncsID) })
	}
	// barrier waits until a write's alerts have been fanned out. The
	// thresholds are checked behind the write; once the checks are done
	// their alerts are in the stream, ahead of any later write's sync
	// event, and jobs fans the stream out in order: so once a marker
	// write's sync delivery exists, every alert of the write has its
	// delivery too. (A memo edit moves no spending, so it alerts nothing.)
	var marker string
	barrier := func(write func()) {
		t.Helper()
		syncEvent(write)
		st.Finance.WaitBudgetChecks()
		syncEvent(func() {
			f.ok(f.write("PATCH", "/v1/transactions/"+marker, w, fmt.Sprintf(`{"expected_version": %d, "memo": "marker %d"}`,
				version(f.tx(w, marker)), f.n)))
		})
		waitFor("alert deliveries settled", func() bool { return settled(alertsID) })
	}

	// The budget, and the period's figures as the writing grant sees them.
	budgetID := st.Demo.Budgets.Active
	b := f.ok(f.call("GET", "/v1/budgets/"+budgetID, w, ""))
	prog := f.ok(f.call("GET", "/v1/budgets/"+budgetID+"/progress", w, ""))
	start, end := prog["period_start"].(string), prog["period_end"].(string)
	spentOf := func(prog map[string]any) map[string]string {
		out := map[string]string{}
		for _, g := range prog["groups"].([]any) {
			g := g.(map[string]any)
			out[g["group_id"].(string)], _ = g["spent"].(string)
		}
		return out
	}
	spent := spentOf(prog)
	// Each group's item categories (the savings group is never alerted on).
	savings := st.Demo.CategoryIDs["Savings & Investments"]
	groupOf := map[string]string{}
	type group struct{ id, item, category string }
	var groups []group
	for _, g := range b["target_groups"].([]any) {
		g := g.(map[string]any)
		for _, it := range g["items"].([]any) {
			it := it.(map[string]any)
			groupOf[it["category_id"].(string)] = g["id"].(string)
			if it["category_id"] != savings && len(g["items"].([]any)) == 1 {
				groups = append(groups, group{g["id"].(string), it["id"].(string), it["category_id"].(string)})
			}
		}
	}
	// The spend to move: the period's largest counted outflow whose category
	// is an item's own (a top-level one).
	var rows []map[string]any
	for cursor := ""; ; {
		r := f.call("GET", "/v1/transactions?page_size=100&start_date="+start+"&end_date="+dayBefore(t, end)+cursor, w, "")
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		for _, x := range r.json["data"].([]any) {
			rows = append(rows, x.(map[string]any))
		}
		p := r.json["pagination"].(map[string]any)
		if p["has_more"] != true {
			break
		}
		cursor = "&cursor=" + p["next_cursor"].(string)
	}
	cents := func(s string) int64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("amount %q: %v", s, err)
		}
		return int64(math.Round(v * 100))
	}
	var row map[string]any
	var rowCents int64
	for _, x := range rows {
		amt := x["amount"].(map[string]any)
		cat, _ := x["category_id"].(string)
		if amt["currency"] != "USD" || x["transfer_pair_id"] != nil || groupOf[cat] == "" || cat == savings {
			continue
		}
		if c := -cents(amt["amount"].(string)); c > rowCents {
			row, rowCents = x, c
		}
	}
	if row == nil {
		t.Fatal("no counted outflow in the period")
	}
	from := row["category_id"].(string)
	marker = row["id"].(string)
	// The target: the single-item spending group, other than the row's,
	// with the least spent.
	var target group
	for _, g := range groups {
		if g.id != groupOf[from] && (target.id == "" || cents(spent[g.id]) < cents(spent[target.id])) {
			target = g
		}
	}
	s := cents(spent[target.id])
	// After the move, the target is at 90 %; before it, below 80 %.
	alloc := (s + rowCents) * 10 / 9
	if s*100 >= 80*alloc {
		t.Fatalf("the target group already spent %d of %d cents", s, alloc)
	}
	var items []map[string]any
	for _, g := range b["target_groups"].([]any) {
		for _, it := range g.(map[string]any)["items"].([]any) {
			a := "1000000.00"
			if id := it.(map[string]any)["id"].(string); id == target.item {
				a = fmt.Sprintf("%d.%02d", alloc/100, alloc%100)
			}
			items = append(items, map[string]any{"id": it.(map[string]any)["id"], "allocated_amount": a})
		}
	}
	var nb map[string]any
	barrier(func() {
		// The allocations PATCH checks the thresholds too: nothing is
		// reached yet. (A sync event to pass the barrier: a memo edit.)
		nb = f.ok(f.write("PATCH", "/v1/budgets/"+budgetID+"/allocations", w, jsonBody(map[string]any{
			"expected_version": b["version"], "items": items, "alert_thresholds": []int{100, 80}})))
		f.ok(f.write("PATCH", "/v1/transactions/"+row["id"].(string), w, fmt.Sprintf(`{"expected_version": %d, "memo": "moved"}`,
			version(f.tx(w, row["id"].(string))))))
	})
	if got := nb["alert_thresholds"].([]any); len(got) != 2 || got[0] != 80.0 || got[1] != 100.0 {
		t.Fatalf("alert_thresholds %v", got)
	}
	if n := len(deliveries(alertsID)); n != 0 {
		t.Fatalf("%d alerts before the target was reached", n)
	}
	move := func(to string) {
		t.Helper()
		cur := f.tx(w, row["id"].(string))
		r := f.ok(f.write("POST", "/v1/transactions/bulk-categorize", w, jsonBody(map[string]any{"items": []map[string]any{
			{"transaction_id": row["id"], "category_id": to, "expected_version": version(cur)}}})))
		if r["applied_count"] != 1.0 {
			t.Fatalf("bulk: %v", r)
		}
	}
	barrier(func() { move(target.category) })
	after := cents(spentOf(f.ok(f.call("GET", "/v1/budgets/"+budgetID+"/progress", w, "")))[target.id])
	if after*100 < 80*alloc || after*100 >= 100*alloc {
		t.Fatalf("the move left the target at %d of %d cents", after, alloc)
	}

	// One event for the writing grant (others that see the row may get
	// theirs); each signed, ids only.
	grants, err := st.Finance.Store().ListGrants(t.Context(), st.Demo.UserID)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("the alerts' delivery", func() bool { return len(alerts.all()) >= len(deliveries(alertsID)) })
	seen := map[string]bool{}
	writer := 0
	for _, d := range alerts.all() {
		if err := webhook.Verify(secret, d.header.Get(webhook.SignatureHeader), d.body, clock.Now()); err != nil {
			t.Fatalf("signature: %v", err)
		}
		var body map[string]any
		if err := json.Unmarshal(d.body, &body); err != nil {
			t.Fatal(err)
		}
		keys := slices.Sorted(maps.Keys(body))
		if !slices.Equal(keys, []string{"budget_id", "created_at", "grant_id", "group_id", "id", "period_end", "period_start",
			"threshold", "type", "user_id"}) {
			t.Fatalf("body members %v: %s", keys, d.body)
		}
		if body["type"] != "budget.threshold_reached" || body["user_id"] != st.Demo.UserID || body["budget_id"] != budgetID ||
			body["group_id"] != target.id || body["threshold"] != 80.0 || body["period_start"] != start ||
			body["period_end"] != end || body["id"] != d.header.Get(webhook.EventIDHeader) ||
			!slices.ContainsFunc(grants, func(g finance.Grant) bool { return g.ID == body["grant_id"] }) {
			t.Fatalf("body: %s", d.body)
		}
		k := body["grant_id"].(string)
		if seen[k] {
			t.Fatalf("grant %s alerted twice: %s", k, d.body)
		}
		seen[k] = true
		if k == st.Demo.GrantWriteID {
			writer++
		}
	}
	if writer != 1 {
		t.Fatalf("the writing grant got %d alerts, want 1", writer)
	}

	// Out (below 80 %) and back in (above again): the same period, no alert.
	n := len(deliveries(alertsID))
	barrier(func() { move(from) })
	barrier(func() { move(target.category) })
	if m := len(deliveries(alertsID)); m != n {
		t.Fatalf("%d alert deliveries after crossing again in the period, want %d", m, n)
	}
}

func dayBefore(t *testing.T, day string) string {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		t.Fatal(err)
	}
	return d.AddDate(0, 0, -1).Format(time.DateOnly)
}
