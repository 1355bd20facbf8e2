package mt

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// docsTable is the "## MT" table of docs/conversion-warnings.md, built from
// the codes map so the two cannot drift apart.
func docsTable() string {
	names := make([]string, 0, len(codes))
	for c := range codes {
		names = append(names, c)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| Code | Severity | Lossy | Meaning |\n|---|---|---|---|\n")
	for _, c := range names {
		ci := codes[c]
		lossy := "no"
		if ci.lossy {
			lossy = "yes"
		}
		b.WriteString("| " + c + " | " + ci.severity + " | " + lossy + " | " + strings.ReplaceAll(ci.meaning, "|", "\\|") + " |\n")
	}
	return b.String()
}

// TestDocsListEveryCode: docs/conversion-warnings.md carries the table of
// every code this package emits. UPDATE_DOCS=1 prints the table to paste.
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
		t.Errorf("docs/conversion-warnings.md does not contain the current MT table; run UPDATE_DOCS=1 go test -run TestDocsListEveryCode -v")
	}
}
