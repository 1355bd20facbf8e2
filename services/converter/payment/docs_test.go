package payment

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// docsTable is the "## Payments" table of docs/conversion-warnings.md, built
// from Codes so the two cannot drift apart.
func docsTable() string {
	names := make([]string, 0, len(Codes))
	for c := range Codes {
		names = append(names, c)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| Code | Severity | Lossy | Invalid | Meaning |\n|---|---|---|---|---|\n")
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	for _, c := range names {
		ci := Codes[c]
		b.WriteString("| " + c + " | " + ci.Severity + " | " + yes(ci.Lossy) + " | " + yes(ci.Invalid) + " | " + strings.ReplaceAll(ci.Meaning, "|", "\\|") + " |\n")
	}
	return b.String()
}

// TestDocsListEveryCode: docs/conversion-warnings.md carries the table of
// every payment code. UPDATE_DOCS=1 prints the table to paste.
func TestDocsListEveryCode(t *testing.T) {
	if os.Getenv("UPDATE_DOCS") != "" {
		t.Log("\n" + docsTable())
	}
	_, file, _, _ := runtime.Caller(0)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "conversion-warnings.md"))
	if err != nil {
		t.Skipf("docs not found: %v", err)
	}
	if !strings.Contains(string(doc), docsTable()) {
		t.Errorf("docs/conversion-warnings.md does not contain the current payment table; run UPDATE_DOCS=1 go test -run TestDocsListEveryCode -v")
	}
}

func TestMinorUnitsAndIDs(t *testing.T) {
	for ccy, n := range map[string]int{"JPY": 0, "KWD": 3, "EUR": 2, "CLF": 4} {
		if MinorUnits(ccy) != n {
			t.Errorf("%s: %d", ccy, MinorUnits(ccy))
		}
	}
	if !IsBIC("DEUTDEFF") || !IsBIC("DEUTDEFF500") || IsBIC("DEUT1EFF") || IsBIC("deutdeff") {
		t.Error("IsBIC")
	}
	for range 100 {
		if u := NewUETR(); !IsUETR(u) {
			t.Fatalf("%s is not a UETR", u)
		}
	}
	if !IsCountry("DE") || IsCountry("XX") || IsCountry("D") {
		t.Error("IsCountry")
	}
}
