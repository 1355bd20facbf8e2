package postgres_test

import (
	"testing"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/finance/conformance"
	"github.com/ledgerlane/platform/services/finance/postgres"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Store {
		return postgres.New(pgtest.Pool(t, "finance", postgres.Migrations))
	})
}
