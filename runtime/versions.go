package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// WorkerInfo is a worker from the registry.
type WorkerInfo struct {
	ID          string
	Host        string
	PID         int
	Queues      []string
	Kinds       map[string][2]int // kind → [oldest, newest] payload version it decodes
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// Decodes reports whether the worker serves queue and decodes version of kind.
func (w WorkerInfo) Decodes(queue, kind string, version int) bool {
	served := false
	for _, q := range w.Queues {
		served = served || q == queue
	}
	r, ok := w.Kinds[kind]
	return served && ok && version >= r[0] && version <= r[1]
}

// Workers returns the workers whose last heartbeat is at most within old; with within
// 0, the workers that missed fewer than nine heartbeats of their own (three leases).
func Workers(ctx context.Context, dbtx DBTX, within time.Duration) ([]WorkerInfo, error) {
	var secs *float64
	if within > 0 {
		s := within.Seconds()
		secs = &s
	}
	rows, err := db.New(dbtx).LiveWorkers(ctx, secs)
	if err != nil {
		return nil, fmt.Errorf("jobc: list workers: %w", describeDBError(err))
	}
	out := make([]WorkerInfo, len(rows))
	for i, r := range rows {
		out[i] = WorkerInfo{ID: r.ID, Host: r.Host, PID: int(r.Pid), Queues: r.Queues, StartedAt: r.StartedAt, HeartbeatAt: r.HeartbeatAt}
		if err := json.Unmarshal(r.Kinds, &out[i].Kinds); err != nil {
			return nil, fmt.Errorf("jobc: worker %s: decode kinds: %w", r.ID, err)
		}
	}
	return out, nil
}

// VersionCount is how many unfinished jobs there are of one kind, queue, payload
// version and state, and which live workers can decode them.
type VersionCount struct {
	Kind     string
	Queue    string
	Version  int
	State    State
	Jobs     int64
	Decoders []string // ids of live workers that serve the queue and decode this version
}

// UnfinishedByVersion counts unfinished jobs by kind, queue, version and state, and
// names the live workers (heartbeat within the given time, see Workers) able to
// decode each. A
// count without decoders is work no running worker can take: a version retired too
// early, a kind nobody handles yet, or a release still rolling out.
func UnfinishedByVersion(ctx context.Context, dbtx DBTX, within time.Duration) ([]VersionCount, error) {
	workers, err := Workers(ctx, dbtx, within)
	if err != nil {
		return nil, err
	}
	rows, err := db.New(dbtx).UnfinishedVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobc: count unfinished jobs: %w", describeDBError(err))
	}
	out := make([]VersionCount, len(rows))
	for i, r := range rows {
		vc := VersionCount{Kind: r.Kind, Queue: r.Queue, Version: int(r.PayloadVersion), State: State(r.State), Jobs: r.Jobs}
		for _, w := range workers {
			if w.Decodes(r.Queue, r.Kind, vc.Version) {
				vc.Decoders = append(vc.Decoders, w.ID)
			}
		}
		out[i] = vc
	}
	return out, nil
}

// warnUndecodable logs, at startup, unfinished jobs of this worker's kinds stored at
// a version it does not decode: older ones (a version retired while rows of it remain)
// wait forever unless a worker that decodes them runs; newer ones wait for newer workers.
func (w *Worker) warnUndecodable(ctx context.Context) error {
	rows, err := w.q.UnfinishedVersions(ctx)
	if err != nil {
		return fmt.Errorf("jobc: count unfinished jobs: %w", describeDBError(err))
	}
	for _, r := range rows {
		reg := w.kinds[r.Kind]
		if reg == nil {
			continue
		}
		v := int(r.PayloadVersion)
		switch {
		case v < reg.jt.minVersion():
			w.log.Error("jobc worker: unfinished jobs are stored at a payload version this build no longer decodes; "+
				"they wait until a worker that decodes it runs. Retire a version only once `jobc status` shows none of it left, "+
				"or enable Config.UpgradePayloads in the previous release to rewrite them first",
				"kind", r.Kind, "version", v, "oldest_decoded", reg.jt.minVersion(), "jobs", r.Jobs, "state", r.State)
		case v > reg.jt.maxVersion():
			w.log.Info("jobc worker: unfinished jobs are stored at a payload version newer than this build decodes; they are left for newer workers",
				"kind", r.Kind, "version", v, "newest_decoded", reg.jt.maxVersion(), "jobs", r.Jobs)
		}
	}
	return nil
}

// upgradeService returns the opt-in payload upgrader for jt: it rewrites waiting jobs
// stored at older versions to the newest version every live worker of the kind
// decodes, in small batches, and logs its progress.
func (w *Worker) upgradeService(jt *JobType) service {
	kinds := append([]string{jt.Kind}, jt.Aliases...)
	return service{"upgrader " + jt.Kind, w.cfg.SchedulerInterval, func(ctx context.Context) error {
		target, err := w.upgradeTarget(ctx, jt)
		if err != nil || target <= jt.minVersion() {
			return err
		}
		left, err := w.q.CountBelowVersion(ctx, db.CountBelowVersionParams{Kinds: kinds, Target: int32(target)})
		if err != nil || left == 0 {
			return err
		}
		done := int64(0)
		for {
			n, err := w.upgradeBatch(ctx, jt, kinds, target)
			if err != nil {
				return err
			}
			done += int64(n)
			if n > 0 {
				w.log.Info("jobc worker: upgraded waiting jobs to a newer payload version",
					"kind", jt.Kind, "version", target, "upgraded", done, "of", left)
			}
			if n < upgradeBatch {
				return nil
			}
		}
	}}
}

const upgradeBatch = 100

// upgradeTarget is the newest version of jt that every live worker handling the kind
// decodes: rows are never rewritten to a version some running worker cannot read.
func (w *Worker) upgradeTarget(ctx context.Context, jt *JobType) (int, error) {
	workers, err := Workers(ctx, w.pool, 0)
	if err != nil {
		return 0, err
	}
	target := jt.maxVersion()
	for _, wk := range workers {
		if r, ok := wk.Kinds[jt.Kind]; ok && r[1] < target {
			target = r[1]
		}
	}
	return target, nil
}

func (w *Worker) upgradeBatch(ctx context.Context, jt *JobType, kinds []string, target int) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		rows, err := q.PickForUpgrade(ctx, db.PickForUpgradeParams{Kinds: kinds, Target: int32(target), Max: upgradeBatch})
		if err != nil {
			return err
		}
		ids := make([]int64, 0, len(rows))
		payloads := make([][]byte, 0, len(rows))
		for _, r := range rows {
			p, err := jt.upcastTo(int(r.PayloadVersion), target, r.Payload)
			if err != nil {
				// Left as it is: the worker that claims it fails it with this error.
				w.log.Warn("jobc worker: cannot upgrade a waiting job; left at its version", "job_id", r.ID, "err", err)
				continue
			}
			ids, payloads = append(ids, r.ID), append(payloads, p)
		}
		if len(ids) == 0 {
			return nil
		}
		if _, err := q.RewritePayloads(ctx, db.RewritePayloadsParams{Version: int32(target), Ids: ids, Payloads: payloads}); err != nil {
			return err
		}
		n = len(rows)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("upgrade %s payloads to version %d: %w", jt.Kind, target, err)
	}
	return n, nil
}
