package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDocsListEngineCodes: the codes Validate and Normalize add are in
// docs/conversion-warnings.md, where clients look them up.
func TestDocsListEngineCodes(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "conversion-warnings.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{CodeInvalidMessage, CodeVersionChanged} {
		if !strings.Contains(string(doc), "| "+code+" |") {
			t.Errorf("docs/conversion-warnings.md does not list %s", code)
		}
	}
}
