// Package pg opens PostgreSQL pools for the services. Each service owns one
// schema: its pool's search_path points there and its embedded migrations are
// applied into it at start, so services can share a database without sharing
// tables, and tests can use a throwaway schema of their own.
package pg

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Open connects to url, creates schema if needed, points the pool's
// search_path at it and applies migrations (goose SQL files at the root of
// migrations). The pool is ready to use when Open returns.
func Open(ctx context.Context, url, schema string, migrations fs.FS, log *slog.Logger) (*pgxpool.Pool, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("pg: invalid schema name %q", schema)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pg: parse url: %w", err)
	}
	boot, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("pg: connect: %w", err)
	}
	err = createSchema(ctx, boot, schema)
	boot.Close(ctx)
	if err != nil {
		return nil, fmt.Errorf("pg: create schema %s: %w", schema, err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pg: pool: %w", err)
	}
	if err := Migrate(ctx, pool, migrations, log); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// Migrate applies every pending migration in migrations to the pool's schema.
func Migrate(ctx context.Context, pool *pgxpool.Pool, migrations fs.FS, log *slog.Logger) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	// Replicas starting together must not migrate concurrently: a PostgreSQL
	// advisory lock, one per schema, serialises them.
	schema := pool.Config().ConnConfig.RuntimeParams["search_path"]
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID(schema)))
	if err != nil {
		return fmt.Errorf("pg: migration lock: %w", err)
	}
	opts := []goose.ProviderOption{goose.WithSessionLocker(locker)}
	if log != nil {
		opts = append(opts, goose.WithSlog(log))
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations, opts...)
	if err != nil {
		return fmt.Errorf("pg: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("pg: migrate: %w", err)
	}
	return nil
}

// createSchema holds the schema's advisory lock while creating it: two
// CREATE SCHEMA IF NOT EXISTS racing each other fail on PostgreSQL's catalog.
func createSchema(ctx context.Context, conn *pgx.Conn, schema string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID(schema)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// lockID derives an advisory lock id from a schema name, so services sharing
// a database do not wait for each other's migrations.
func lockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("ledgerlane-migrate:" + schema))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

// MigrationsFS returns the migrations folder dir of an embedded FS, as Open
// expects them (SQL files at the root). It panics on a wrong folder name,
// which only a wrong literal in the caller can cause.
func MigrationsFS(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
