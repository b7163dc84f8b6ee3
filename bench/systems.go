package bench

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Payload is the job payload both systems carry: the same JSON on both sides.
type Payload struct {
	N     int    `json:"n"`
	Email string `json:"email"`
}

func payload(i int) Payload { return Payload{N: i, Email: "user@example.com"} }

// WorkerConfig holds the worker settings; those that only one system has are named so.
type WorkerConfig struct {
	Concurrency  int           // jobc QueueConfig.MaxWorkers, River QueueConfig.MaxWorkers
	PollInterval time.Duration // jobc Config.PollInterval, River Config.FetchPollInterval
	// FetchCooldown is River's minimum time between two fetches (River only; jobc has
	// none: it claims again as soon as a slot frees after a full claim).
	FetchCooldown time.Duration
	// FetchBatch caps one jobc claim (jobc only; River fetches as many as it has free slots).
	FetchBatch int
	// AsyncOutcomes records jobc's outcomes with synchronous_commit off (jobc only;
	// River commits every outcome synchronously, as jobc does by default).
	AsyncOutcomes bool
	// Retention, when positive, is how long completed jobs are kept: jobc
	// Config.Retention.Completed (pruned every Retention/4, at most every minute), River
	// Config.CompletedJobRetentionPeriod. Zero keeps each system's default.
	Retention time.Duration
	// VacuumDeadRows is jobc's Config.VacuumDeadRows (jobc only): 0 its default,
	// negative to leave jobc_jobs to autovacuum alone.
	VacuumDeadRows int64
}

// Handler is called by the no-op job handler with the job's id.
type Handler func(id int64)

// System is one job queue under test, bound to one database.
type System interface {
	Name() string
	// Migrate installs the system's schema.
	Migrate(ctx context.Context, pool *pgxpool.Pool) error
	// BulkInsert inserts n available jobs with the system's bulk API, in chunks.
	BulkInsert(ctx context.Context, pool *pgxpool.Pool, n int) error
	// EnqueueTx enqueues one job in tx and returns its id.
	EnqueueTx(ctx context.Context, tx pgx.Tx, i int) (int64, error)
	// EnqueueBatchTx enqueues k jobs in tx with the system's fastest batch API.
	EnqueueBatchTx(ctx context.Context, tx pgx.Tx, k int) error
	// StartWorker starts a worker calling h for every job; stop shuts it down.
	StartWorker(ctx context.Context, pool *pgxpool.Pool, cfg WorkerConfig, h Handler) (stop func() error, err error)
	// Pending counts jobs whose completion is not recorded yet.
	Pending(ctx context.Context, pool *pgxpool.Pool) (int64, error)
	// Recorded reports whether job id's completion is recorded.
	Recorded(ctx context.Context, db Querier, id int64) (bool, error)
	// Tables names the system's job tables, for WAL and size accounting.
	Tables() []string
}

// Querier runs the one-row queries that look for a job's outcome: the pool, or one
// connection held for a run of them.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// NewSystem returns "jobc", "river", "sql" (the hand-written ceiling), "sql-keep" (the
// ceiling with leases and a finished table, see SQL) or "none".
func NewSystem(name string) System {
	switch name {
	case "jobc":
		return &Jobc{}
	case "river":
		return &River{}
	case "none":
		return &None{}
	case "sql":
		return newSQL(false)
	case "sql-keep":
		return newSQL(true)
	}
	panic("unknown system " + name)
}
