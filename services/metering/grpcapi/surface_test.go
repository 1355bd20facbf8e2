package grpcapi_test

import (
	"testing"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/services/metering"
)

// The metering root spells the surfaces out rather than import
// pkg/principal (gRPC metadata); the gateway compares them with
// principal's.
func TestSurfacesMatchPrincipal(t *testing.T) {
	if metering.SurfaceConversion != principal.SurfaceConversion || metering.SurfaceFinance != principal.SurfaceFinance {
		t.Fatalf("metering surfaces %q, %q; principal %q, %q", metering.SurfaceConversion, metering.SurfaceFinance,
			principal.SurfaceConversion, principal.SurfaceFinance)
	}
}
