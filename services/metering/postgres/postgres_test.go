package postgres_test

import (
	"testing"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/metering/conformance"
	"github.com/ledgerlane/platform/services/metering/postgres"
)

// TestConformance needs TEST_DATABASE_URL; without it pgtest skips.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Store {
		return postgres.New(pgtest.Pool(t, "metering", postgres.Migrations))
	})
}
