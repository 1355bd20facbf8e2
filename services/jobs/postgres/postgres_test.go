package postgres_test

import (
	"testing"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/jobs/accounting"
	"github.com/ledgerlane/platform/services/jobs/conformance"
	"github.com/ledgerlane/platform/services/jobs/postgres"
)

// TestConformance needs TEST_DATABASE_URL; without it pgtest skips.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Store {
		return postgres.New(pgtest.Pool(t, "jobs", postgres.Migrations))
	})
}

// TestAccountingConformance needs TEST_DATABASE_URL; without it pgtest skips.
func TestAccountingConformance(t *testing.T) {
	conformance.RunAccounting(t, func(t *testing.T) accounting.Store {
		return postgres.NewAccounting(pgtest.Pool(t, "jobs", postgres.Migrations))
	})
}
