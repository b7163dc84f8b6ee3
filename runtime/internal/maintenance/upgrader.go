package maintenance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// UpgraderConfig describes the job type an upgrader rewrites and tunes it.
type UpgraderConfig struct {
	Kind       string   // the job type's kind
	Kinds      []string // the kind and its aliases, as stored
	MinVersion int      // the oldest payload version the job type declares
	MaxVersion int      // the newest
	// Upcast rewrites a payload stored at version from to version to.
	Upcast func(from, to int, payload []byte) ([]byte, error)
	// LiveKinds returns, for every live worker, the payload versions [min, max] it
	// decodes per kind.
	LiveKinds func(ctx context.Context) ([]map[string][2]int, error)
	BatchSize int // jobs rewritten per transaction; default upgradeBatch
}

// upgradeBatch is small: every job of a batch is upcast in Go while its row is locked.
const upgradeBatch = 100

// Upgrader is the opt-in payload upgrader of one job type (runtime's
// Config.UpgradePayloads): it rewrites waiting jobs stored at older versions to the
// newest version every live worker of the kind decodes, in small batches, and logs its
// progress.
type Upgrader struct {
	cfg  UpgraderConfig
	pool *pgxpool.Pool
	log  *slog.Logger
}

// UpgraderResult is what one run of an upgrader did.
type UpgraderResult struct {
	Target   int   // the version rewritten to; at most the oldest decoded: nothing to do
	Waiting  int64 // jobs below Target when the run began
	Upgraded int   // jobs rewritten
	Skipped  int   // jobs whose upcast failed, left at their version
}

// NewUpgrader returns an upgrader that works through pool and logs to log.
func NewUpgrader(pool *pgxpool.Pool, log *slog.Logger, cfg UpgraderConfig) *Upgrader {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = upgradeBatch
	}
	return &Upgrader{cfg: cfg, pool: pool, log: log}
}

// RunOnce rewrites every waiting job below the target version, a transaction per batch.
func (u *Upgrader) RunOnce(ctx context.Context) (UpgraderResult, error) {
	var res UpgraderResult
	target, err := u.target(ctx)
	if err != nil {
		return res, err
	}
	res.Target = target
	if target <= u.cfg.MinVersion {
		return res, nil
	}
	q := db.New(u.pool)
	if res.Waiting, err = q.CountBelowVersion(ctx, db.CountBelowVersionParams{Kinds: u.cfg.Kinds, Target: int32(target)}); err != nil || res.Waiting == 0 {
		return res, err
	}
	for {
		picked, upgraded, err := u.batch(ctx, target)
		if err != nil {
			return res, err
		}
		res.Upgraded += upgraded
		res.Skipped += picked - upgraded
		if upgraded > 0 {
			u.log.InfoContext(ctx, "jobc worker: upgraded waiting jobs to a newer payload version",
				slog.String("kind", u.cfg.Kind), slog.Int("version", target), slog.Int("upgraded", res.Upgraded), slog.Int64("of", res.Waiting))
		}
		if picked < u.cfg.BatchSize {
			return res, nil
		}
	}
}

// target is the newest version of the job type that every live worker handling the
// kind decodes: rows are never rewritten to a version some running worker cannot read.
func (u *Upgrader) target(ctx context.Context) (int, error) {
	workers, err := u.cfg.LiveKinds(ctx)
	if err != nil {
		return 0, err
	}
	target := u.cfg.MaxVersion
	for _, kinds := range workers {
		if r, ok := kinds[u.cfg.Kind]; ok && r[1] < target {
			target = r[1]
		}
	}
	return target, nil
}

// batch locks up to BatchSize waiting jobs below target, upcasts them and writes them
// back, in one transaction. It returns how many it locked and how many it rewrote.
func (u *Upgrader) batch(ctx context.Context, target int) (picked, upgraded int, err error) {
	err = pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		rows, err := q.PickForUpgrade(ctx, db.PickForUpgradeParams{Kinds: u.cfg.Kinds, Target: int32(target), Max: int32(u.cfg.BatchSize)})
		if err != nil {
			return err
		}
		picked = len(rows)
		ids := make([]int64, 0, len(rows))
		payloads := make([]json.RawMessage, 0, len(rows))
		for _, r := range rows {
			p, err := u.cfg.Upcast(int(r.PayloadVersion), target, r.Payload)
			if err != nil {
				// Left as it is: the worker that claims it fails it with this error.
				u.log.WarnContext(ctx, "jobc worker: cannot upgrade a waiting job; left at its version", slog.Int64("job_id", r.ID), slog.Any("err", err))
				continue
			}
			ids, payloads = append(ids, r.ID), append(payloads, p)
		}
		if len(ids) == 0 {
			return nil
		}
		if _, err := q.RewritePayloads(ctx, db.RewritePayloadsParams{Version: int32(target), IDs: ids, Payloads: payloads}); err != nil {
			return err
		}
		upgraded = len(ids)
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("upgrade %s payloads to version %d: %w", u.cfg.Kind, target, err)
	}
	return picked, upgraded, nil
}
