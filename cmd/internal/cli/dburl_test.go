package cli

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestDescribeTarget: messages name the hosts, ports and database of every form of
// connection string, never the user or the password.
func TestDescribeTarget(t *testing.T) {
	for _, c := range []struct{ conn, want string }{
		{"postgres://ada:s3cret@db1:5433/app?sslmode=disable", "db1:5433/app"},
		{"postgres://ada:s3cret@db1:5432,db2:5433/app?sslmode=prefer", "db1:5432,db2:5433/app"},
		{"host=/run/postgresql user=ada password=s3cret dbname=app sslmode=disable", "/run/postgresql/.s.PGSQL.5432/app"},
		{"postgres://ada@[::1]:5432/app?sslmode=disable", "[::1]:5432/app"},
	} {
		cfg, err := pgconn.ParseConfig(c.conn)
		if err != nil {
			t.Fatal(err)
		}
		if got := DescribeTarget(cfg); got != c.want {
			t.Errorf("%s: %q, want %q", c.conn, got, c.want)
		}
	}
}
