package local_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMonitoringUsesExportedSeries keeps deploy/monitoring true to what the
// binaries export: every series the alert rules and the dashboard query is
// one docs/metrics.md lists (histograms by their _bucket, _sum and _count),
// and the dashboard is a Grafana JSON document with a query in every graph.
// promtool checks the rules themselves (`make rules-check`).
func TestMonitoringUsesExportedSeries(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	// A series name, not the tail of a recording rule's name
	// (route:ledgerlane_gateway_requests:rate5m).
	series := regexp.MustCompile(`(?:^|[^:a-z0-9_])((?:ledgerlane|grpc_server)_[a-z0-9_]+)`)
	names := func(b []byte) []string {
		var out []string
		for _, m := range series.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
		return out
	}
	documented := map[string]bool{}
	for _, m := range names(doc) {
		documented[m] = true
	}
	known := func(name string) bool {
		for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && documented[base] {
				return true
			}
		}
		return false
	}
	for _, f := range []string{"alerts.yaml", "dashboard.json"} {
		b, err := os.ReadFile(filepath.Join(root, "deploy", "monitoring", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range names(b) {
			if !known(m) {
				t.Errorf("%s queries %s, which docs/metrics.md does not list", f, m)
			}
		}
	}

	b, err := os.ReadFile(filepath.Join(root, "deploy", "monitoring", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("dashboard.json: %v (uid %q, %d panels)", err, dash.UID, len(dash.Panels))
	}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.Targets[0].Expr == "" {
			t.Errorf("panel %q has no query", p.Title)
		}
	}
}
