package memory_test

import (
	"testing"

	"github.com/ledgerlane/platform/services/metering/conformance"
	"github.com/ledgerlane/platform/services/metering/memory"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(*testing.T) conformance.Store { return memory.New() })
}
