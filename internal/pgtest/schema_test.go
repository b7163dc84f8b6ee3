package pgtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

func createItems(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, "CREATE TABLE items (name text NOT NULL)")
	return err
}

func TestNewSchemaIsolation(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a := pgtest.NewSchema(t, createItems)
	b := pgtest.NewSchema(t, nil)

	schemaA, schemaB := pgtest.SchemaOf(a), pgtest.SchemaOf(b)
	if schemaA == schemaB || !strings.HasPrefix(schemaA, "t_testnewschemaisolation_") {
		t.Errorf("schemas %q and %q: want distinct t_testnewschemaisolation_<random>", schemaA, schemaB)
	}
	var current string
	if err := a.QueryRow(ctx, "SELECT current_schema()").Scan(&current); err != nil || current != schemaA {
		t.Errorf("current_schema() = %q, %v; want %q", current, err, schemaA)
	}

	if _, err := a.Exec(ctx, "INSERT INTO items VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	_, err := b.Exec(ctx, "SELECT * FROM items")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Errorf("items of schema a in schema b: err = %v, want undefined_table", err)
	}
	// Same table name, independent data.
	if err := createItems(ctx, b); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil || n != 0 {
		t.Errorf("count in schema b = %d, %v; want 0", n, err)
	}

	// SchemaConnString reaches the same schema from a fresh connection.
	conn := connect(t, pgtest.SchemaConnString(t, schemaA))
	if got := queryString(t, conn, "SELECT string_agg(name, ',') FROM items"); got != "a" {
		t.Errorf("via SchemaConnString: items = %q, want a", got)
	}
	// The empty schema gives the package database with the default search_path.
	conn = connect(t, pgtest.SchemaConnString(t, ""))
	if got := queryString(t, conn, "SELECT current_schema()"); got != "public" {
		t.Errorf("package database: current_schema() = %q, want public", got)
	}
}

func TestNewSchemaIsDroppedAfterTest(t *testing.T) {
	t.Parallel()
	var schema string
	t.Run("user", func(t *testing.T) {
		pool := pgtest.NewSchema(t, createItems)
		schema = pgtest.SchemaOf(pool)
		if !strings.HasPrefix(schema, "t_testnewschemaisdroppedaftertest_user_") {
			t.Errorf("schema = %q", schema)
		}
	})
	conn := connect(t, pgtest.SchemaConnString(t, ""))
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n); err != nil || n != 0 {
		t.Errorf("schema %s after the test: count = %d, err = %v; want dropped", schema, n, err)
	}
}

func TestNewSchemaLongTestName(t *testing.T) {
	t.Parallel()
	t.Run(strings.Repeat("Very Long Sub-Test Name ", 10), func(t *testing.T) {
		pool := pgtest.NewSchema(t, nil)
		if s := pgtest.SchemaOf(pool); len(s) > 63 {
			t.Errorf("schema %q is %d bytes", s, len(s))
		}
		if _, err := pool.Exec(t.Context(), "CREATE TABLE t (id int)"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPackageDatabase(t *testing.T) {
	t.Parallel()
	conn := connect(t, pgtest.SchemaConnString(t, ""))
	db := queryString(t, conn, "SELECT current_database()")
	// The test binary is pgtest.test.
	if !strings.HasPrefix(db, "pgtest_") {
		t.Errorf("package database %q, want pgtest_<random>", db)
	}
}
