package pgtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaCleanupTimeout bounds dropping a test's schema.
const schemaCleanupTimeout = 30 * time.Second

// errNoMain is the message for tests in packages without pgtest.Main.
const errNoMain = "pgtest: no package database; add `func TestMain(m *testing.M) { pgtest.Main(m) }` to the package's tests"

// NewSchema gives the calling test its own schema in the package database
// created by [Main]: it creates schema t_<sanitized test name>_<random>,
// returns a pool whose connections have search_path set to it, and runs
// setup (if not nil) with that pool, e.g. to apply migrations. Tables and
// other objects created without a schema name land in the test's schema, so
// tests are isolated from each other and can run in parallel.
//
// When the test finishes the pool is closed and the schema dropped with
// CASCADE. The test fails immediately if Main is not in use, or if creating
// the schema or setup fails.
//
// [SchemaOf] returns the schema name, e.g. for [SchemaConnString].
func NewSchema(t testing.TB, setup func(ctx context.Context, pool *pgxpool.Pool) error) *pgxpool.Pool {
	t.Helper()
	db := current.Load()
	if db == nil {
		t.Fatal(errNoMain)
	}
	ctx := t.Context()

	schema, err := uniqueName("t_" + sanitize(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(db.connString)
	if err != nil {
		t.Fatalf("pgtest: new schema: parse connection string: %v", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: new schema: %v", err)
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		pool.Close()
		t.Fatalf("pgtest: new schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		pool.Close()
		// t.Context() is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), schemaCleanupTimeout)
		defer cancel()
		if err := dropSchema(ctx, db.connString, schema); err != nil {
			// The package database is dropped at the end anyway.
			t.Logf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	if setup != nil {
		if err := setup(ctx, pool); err != nil {
			t.Fatalf("pgtest: new schema %s: setup: %v", schema, err)
		}
	}
	return pool
}

// SchemaOf returns the schema a pool from [NewSchema] is bound to (its
// search_path run-time parameter).
func SchemaOf(pool *pgxpool.Pool) string {
	return pool.Config().ConnConfig.RuntimeParams["search_path"]
}

// SchemaConnString returns a connection string for the package database
// created by [Main] whose sessions use schema as search_path (via the libpq
// "options" parameter, understood by pgx and psql alike), for tests that build
// their own pools or spawn subprocesses. An empty schema gives the plain
// package database. schema must consist of [a-z0-9_], as the names from
// [NewSchema] do; otherwise, or if Main is not in use, the test fails.
func SchemaConnString(t testing.TB, schema string) string {
	t.Helper()
	db := current.Load()
	if db == nil {
		t.Fatal(errNoMain)
	}
	if schema == "" {
		return db.connString
	}
	if !validName(schema) {
		t.Fatalf("pgtest: schema name %q: want at most %d bytes of [a-z0-9_], not starting with a digit", schema, maxIdentLen)
	}
	cs, err := withSearchPath(db.connString, schema)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// dropSchema drops schema with everything in it.
func dropSchema(ctx context.Context, connString, schema string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Do not hang for long behind locks a test left behind.
	if _, err := conn.Exec(ctx, "SET lock_timeout = '10s'"); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	return err
}

// ExampleSchema is NewSchema for runnable Example functions, which have no testing.TB:
// it creates a fresh schema in the package database (Main must be in use), runs setup,
// and returns a pool on it, its connection string, and a function that closes the pool
// and drops the schema. It panics on failure; an Example has no other way to fail.
func ExampleSchema(name string, setup func(ctx context.Context, pool *pgxpool.Pool) error) (*pgxpool.Pool, string, func()) {
	db := current.Load()
	if db == nil {
		panic(errNoMain)
	}
	ctx := context.Background()
	schema, err := uniqueName("x_" + sanitize(name))
	if err != nil {
		panic(err)
	}
	connString, err := withSearchPath(db.connString, schema)
	if err != nil {
		panic(err)
	}
	cfg, err := pgxpool.ParseConfig(db.connString)
	if err != nil {
		panic(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		panic(err)
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		panic(err)
	}
	if setup != nil {
		if err := setup(ctx, pool); err != nil {
			panic(err)
		}
	}
	return pool, connString, func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), schemaCleanupTimeout)
		defer cancel()
		_ = dropSchema(ctx, db.connString, schema)
	}
}
