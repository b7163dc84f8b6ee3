package runtime_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// ExampleFollowPrimary configures the application's pool, which transactional
// handlers use, to follow the primary of a multi-host connection string through a
// failover, as the worker's own connections do. In production the connection string
// names every host: "host=db1,db2 target_session_attrs=read-write ...". Here a
// session made read-only stands in for a demoted primary.
func ExampleFollowPrimary() {
	_, connString, cleanup := pgtest.ExampleSchema("follow_primary", migrated)
	defer cleanup()
	ctx := context.Background()

	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		panic(err)
	}
	runtime.FollowPrimary(cfg)
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	var before, after uint32
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&before); err != nil {
		panic(err)
	}
	if _, err := pool.Exec(ctx, "SET default_transaction_read_only = on"); err != nil {
		panic(err)
	}
	_, err = pool.Exec(ctx, "CREATE TABLE t (v int)")
	fmt.Println("write on the read-only connection:", err != nil)
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&after); err != nil {
		panic(err)
	}
	fmt.Println("the pool moved to a new connection:", after != before)
	// Output:
	// write on the read-only connection: true
	// the pool moved to a new connection: true
}
