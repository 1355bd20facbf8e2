// Package pgtest gives tests a migrated PostgreSQL schema of their own on the
// server named by TEST_DATABASE_URL, dropped when the test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerlane/platform/pkg/pg"
)

// Pool returns a pool on a fresh schema named after prefix, with migrations
// applied. Without TEST_DATABASE_URL the test is skipped with the reason.
func Pool(t testing.TB, prefix string, migrations fs.FS) *pgxpool.Pool {
	t.Helper()
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		t.Skip("TEST_DATABASE_URL is not set: skipping the PostgreSQL run of this test")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := prefix + "_t" + hex.EncodeToString(b[:])
	ctx := context.Background()
	pool, err := pg.Open(ctx, NoCommitWait(url), schema, migrations, nil)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	return pool
}

// NoCommitWait returns url with synchronous_commit=off for the test's
// connections (pgx passes unknown parameters to the server): a commit then returns
// before its WAL reaches the disk, which a throwaway schema never needs and
// which makes migrating one about a third quicker. Visibility and
// isolation are unchanged.
func NoCommitWait(url string) string {
	sep := "?"
	switch {
	case !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://"):
		sep = " " // key=value form
	case strings.Contains(url, "?"):
		sep = "&"
	}
	return url + sep + "synchronous_commit=off"
}
