package bench

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// None enqueues nothing: its transactional-enqueue rate is the ceiling of the
// business transaction alone (begin, insert a business row, commit).
type None struct{}

func (*None) Name() string                                          { return "none" }
func (*None) Tables() []string                                      { return nil }
func (*None) Migrate(context.Context, *pgxpool.Pool) error          { return nil }
func (*None) EnqueueTx(context.Context, pgx.Tx, int) (int64, error) { return 0, nil }
func (*None) EnqueueBatchTx(context.Context, pgx.Tx, int) error     { return nil }

var errNone = errors.New("the baseline system runs no jobs")

func (*None) BulkInsert(context.Context, *pgxpool.Pool, int) error { return errNone }
func (*None) StartWorker(context.Context, *pgxpool.Pool, WorkerConfig, Handler) (func() error, error) {
	return nil, errNone
}
func (*None) Pending(context.Context, *pgxpool.Pool) (int64, error)  { return 0, errNone }
func (*None) Recorded(context.Context, Querier, int64) (bool, error) { return false, errNone }
