package postgres_test

import (
	"testing"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/jobs/conformance"
	"github.com/ledgerlane/platform/services/jobs/postgres"
)

// TestConformance needs TEST_DATABASE_URL; without it pgtest skips.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Store {
		return postgres.New(pgtest.Pool(t, "jobs", postgres.Migrations))
	})
}
