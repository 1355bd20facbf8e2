package filefmt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsListEveryCode: every warning code of this package has a row in
// docs/conversion-warnings.md.
func TestDocsListEveryCode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "conversion-warnings.md"))
	if err != nil {
		t.Skipf("docs not found: %v", err)
	}
	for _, c := range []string{
		CodeEntriesOnly, CodeTransliterated, CodeCharactersReplaced, CodeNameTruncated,
		CodeMemoTruncated, CodeBalanceMissing, CodeFormulaEscaped,
	} {
		if !strings.Contains(string(doc), "| "+c+" |") {
			t.Errorf("docs/conversion-warnings.md has no row for %s", c)
		}
	}
}
