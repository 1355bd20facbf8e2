package pg_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/pkg/pg"
)

// TestConcurrentOpenMigratesOnce: replicas starting together each open the
// same schema; the advisory lock makes exactly one of them migrate and every
// one of them succeed.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		t.Skip("TEST_DATABASE_URL is not set: skipping the PostgreSQL migration test")
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	schema := "pgtest_concurrent_" + hex.EncodeToString(b[:])
	migrations := fstest.MapFS{
		"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE things (id int PRIMARY KEY);\nINSERT INTO things VALUES (1);\n")},
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), url)
		if err == nil {
			_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			conn.Close(context.Background())
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := pg.Open(context.Background(), url, schema, migrations, nil)
			if err != nil {
				errs <- err
				return
			}
			pool.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("open: %v", err)
	}
	pool, err := pg.Open(context.Background(), url, schema, migrations, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM things").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows = %d, %v; the migration must have run exactly once", n, err)
	}
}

func TestOpenRefusesBadSchemaNames(t *testing.T) {
	for _, s := range []string{"", "Finance", "a;drop", "1abc"} {
		if _, err := pg.Open(context.Background(), "postgres://127.0.0.1:1/x", s, fstest.MapFS{}, nil); err == nil {
			t.Errorf("schema %q accepted", s)
		}
	}
}
