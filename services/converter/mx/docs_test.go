package mx

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
		CodeBalanceDropped, CodeStructuredRemittance, CodeEntryStatus, CodeEntryDateDefaulted,
		CodeBatchDetails, CodeVersionUntested, CodeTruncated, CodePaginationDropped,
		CodeSequenceDropped, CodeRelatedRefDropped, CodeFloorLimitDropped, CodeAccountMissing,
		CodeBICDropped, CodeAmountRounded, CodeFundsCodeDropped, CodeGermanDropped, CodeCounterpartyAccount,
		CodePageZero, CodeBalanceMarking, CodeBalanceMismatch, CodeHeaderDefaulted,
	} {
		if !strings.Contains(string(doc), "| "+c+" |") {
			t.Errorf("docs/conversion-warnings.md has no row for %s", c)
		}
	}
}
