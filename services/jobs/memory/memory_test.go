package memory_test

import (
	"testing"

	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/conformance"
	"github.com/ledgerlane/platform/services/jobs/memory"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(*testing.T) conformance.Store { return memory.New() })
}

func TestAccountingConformance(t *testing.T) {
	conformance.RunAccounting(t, func(*testing.T) accounting.Store { return memory.NewAccounting() })
}
