package runtime

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DBTX is what enqueueing needs from a database handle: a pgx.Tx (to enqueue in the same
// transaction as a business change), a *pgxpool.Pool or a *pgx.Conn.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// Beginner starts transactions: *pgxpool.Pool, *pgx.Conn and pgx.Tx all are.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}
