package pgtest_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

// connect opens a connection that is closed when the test ends.
func connect(t *testing.T, connString string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func queryString(t *testing.T, conn *pgx.Conn, sql string, args ...any) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// startServer starts a server with pgtest.Start and stops it at the end.
func startServer(t *testing.T) *pgtest.Server {
	t.Helper()
	srv, err := pgtest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return srv
}

func TestStartWithoutDatabaseURLStartsCluster(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	srv := startServer(t)
	t.Log(srv)

	conn := connect(t, srv.ConnString())
	var one int
	if err := conn.QueryRow(t.Context(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
	if got := queryString(t, conn, "SELECT current_database()"); got != "postgres" {
		t.Errorf("current_database() = %q, want postgres", got)
	}
	for setting, want := range map[string]string{
		"listen_addresses": "",
		"fsync":            "off",
		"max_connections":  "400",
		"server_encoding":  "UTF8",
	} {
		if got := queryString(t, conn, "SELECT current_setting($1)", setting); got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
}

func TestCreateDatabase(t *testing.T) {
	t.Parallel()
	// A cluster of its own, whatever DATABASE_URL says.
	srv, err := pgtest.Config{Getenv: func(string) string { return "" }}.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	ctx := t.Context()

	cs1, drop1, err := srv.CreateDatabase(ctx, "Create/Database Test")
	if err != nil {
		t.Fatal(err)
	}
	cs2, drop2, err := srv.CreateDatabase(ctx, "Create/Database Test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = drop2(context.Background()) }()

	conn1, conn2 := connect(t, cs1), connect(t, cs2)
	db1 := queryString(t, conn1, "SELECT current_database()")
	db2 := queryString(t, conn2, "SELECT current_database()")
	if db1 == db2 || !strings.HasPrefix(db1, "create_database_test_") {
		t.Errorf("databases %q and %q: want two distinct create_database_test_<random>", db1, db2)
	}
	if _, err := conn1.Exec(ctx, "CREATE TABLE only_in_db1 (id int); INSERT INTO only_in_db1 VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	_, err = conn2.Exec(ctx, "SELECT * FROM only_in_db1")
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Errorf("table of db1 in db2: err = %v, want undefined_table", err)
	}

	// Drop works even while a session is still connected.
	if err := drop1(ctx); err != nil {
		t.Fatalf("drop: %v", err)
	}
	if _, err := pgx.Connect(ctx, cs1); err == nil {
		t.Error("connecting to the dropped database succeeded")
	}
	admin := connect(t, srv.ConnString())
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", db1).Scan(&n); err != nil || n != 0 {
		t.Errorf("dropped database still listed: count = %d, err = %v", n, err)
	}
	if err := drop1(ctx); err != nil {
		t.Errorf("second drop: %v", err)
	}
}

func TestDatabaseURL(t *testing.T) {
	c := startCluster(t)
	host, port := clusterSocket(t, c)

	for name, dbURL := range map[string]string{
		"keyword/value": c.ConnString(),
		"url": (&url.URL{
			Scheme:   "postgres",
			User:     url.User("postgres"),
			Path:     "/postgres",
			RawQuery: url.Values{"host": {host}, "port": {strconv.Itoa(int(port))}, "sslmode": {"disable"}}.Encode(),
		}).String(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", dbURL)
			srv, err := pgtest.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if srv.ConnString() != dbURL {
				t.Errorf("ConnString() = %q, want DATABASE_URL %q", srv.ConnString(), dbURL)
			}
			cs, drop, err := srv.CreateDatabase(t.Context(), "from_url")
			if err != nil {
				t.Fatal(err)
			}
			conn := connect(t, cs)
			if db := queryString(t, conn, "SELECT current_database()"); !strings.HasPrefix(db, "from_url_") {
				t.Errorf("current_database() = %q", db)
			}
			if err := drop(t.Context()); err != nil {
				t.Error(err)
			}
			if err := srv.Stop(t.Context()); err != nil {
				t.Errorf("Stop: %v", err)
			}
			// Stop must not have touched the server behind DATABASE_URL.
			connect(t, dbURL)
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "host=/nonexistent port=1 user=postgres connect_timeout=5")
		if _, err := pgtest.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
			t.Errorf("Start with unreachable DATABASE_URL: err = %v", err)
		}
	})
}
