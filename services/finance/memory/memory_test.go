package memory_test

import (
	"testing"

	"github.com/ledgerlane/platform/services/finance/conformance"
	"github.com/ledgerlane/platform/services/finance/memory"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(*testing.T) conformance.Store { return memory.New() })
}
