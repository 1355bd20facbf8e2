// Package pg opens PostgreSQL pools for the services. Each service owns one
// schema: its pool's search_path points there and its embedded migrations are
// applied into it at start, so services can share a database without sharing
// tables, and tests can use a throwaway schema of their own.
package pg

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
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
	_, err = boot.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize())
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
	opts := []goose.ProviderOption{}
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
