package pgtest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Backend acquires a connection of pool for the calling test, with the process id of
// its server session: what pg_stat_activity, pg_locks and pg_terminate_backend name it
// by, for a test that watches the session wait or cuts it off. The caller releases it.
func Backend(t testing.TB, pool *pgxpool.Pool) (*pgxpool.Conn, int32) {
	t.Helper()
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var pid int32
	if err := conn.QueryRow(t.Context(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		conn.Release()
		t.Fatal(err)
	}
	return conn, pid
}
