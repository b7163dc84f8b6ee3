package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/maintenance"
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

// ListWorkers returns the workers whose last heartbeat is at most within old; with within
// 0, the workers that missed fewer than nine heartbeats of their own (three leases).
func ListWorkers(ctx context.Context, dbtx DBTX, within time.Duration) ([]WorkerInfo, error) {
	var secs *float64
	if within > 0 {
		s := within.Seconds()
		secs = &s
	}
	rows, err := db.New(dbtx).LiveWorkers(ctx, secs)
	if err != nil {
		return nil, fmt.Errorf("jobc: list workers: %w", dberr.Describe(err))
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
	// Problem says, when Decoders is empty, why no live worker takes these jobs: no
	// live worker serves the queue, those that do do not handle the kind, or none of
	// them decodes the version.
	Problem string
}

// CountUnfinishedByVersion counts unfinished jobs by kind, queue, version and state, and
// names the live workers (heartbeat within the given time, see ListWorkers) able to
// decode each. A count without decoders is work no running worker can take — a queue
// nobody serves, a kind nobody handles, a version retired too early or a release
// still rolling out — and its Problem says which.
func CountUnfinishedByVersion(ctx context.Context, dbtx DBTX, within time.Duration) ([]VersionCount, error) {
	workers, err := ListWorkers(ctx, dbtx, within)
	if err != nil {
		return nil, err
	}
	rows, err := db.New(dbtx).UnfinishedVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobc: count unfinished jobs: %w", dberr.Describe(err))
	}
	out := make([]VersionCount, len(rows))
	for i, r := range rows {
		vc := VersionCount{Kind: r.Kind, Queue: r.Queue, Version: int(r.PayloadVersion), State: State(r.State), Jobs: r.Jobs}
		served, handled := false, false
		for _, w := range workers {
			if w.Decodes(r.Queue, r.Kind, vc.Version) {
				vc.Decoders = append(vc.Decoders, w.ID)
			}
			if slices.Contains(w.Queues, r.Queue) {
				served = true
				_, ok := w.Kinds[r.Kind]
				handled = handled || ok
			}
		}
		switch {
		case len(vc.Decoders) > 0:
		case !served || !handled:
			vc.Problem = maintenance.UnhandledReason(r.Queue, r.Kind, served)
		default:
			vc.Problem = fmt.Sprintf("no live worker decodes version %d of kind %s", vc.Version, r.Kind)
		}
		out[i] = vc
	}
	return out, nil
}

// warnUndecodable logs, at startup, unfinished jobs of this worker's kinds (each in
// its queue) stored at a version it does not decode (UndecodableVersions, a statement
// a kind or alias): older ones (a version retired while rows of it remain) wait
// forever unless a worker that decodes them runs; newer ones wait for newer workers.
func (w *Worker) warnUndecodable(ctx context.Context) error {
	for _, kind := range slices.Sorted(maps.Keys(w.kinds)) {
		jt := w.kinds[kind].jt
		oldest, newest := jt.minVersion(), jt.maxVersion()
		rows, err := w.q.UndecodableVersions(ctx, db.UndecodableVersionsParams{
			Queue: jt.Queue, Kind: kind, MinVersion: int32(oldest), MaxVersion: int32(newest),
		})
		if err != nil {
			return fmt.Errorf("jobc: count unfinished jobs of kind %s: %w", kind, dberr.Describe(err))
		}
		for _, r := range rows {
			if v := int(r.PayloadVersion); v < oldest {
				w.log.ErrorContext(ctx, "jobc worker: unfinished jobs are stored at a payload version this build no longer decodes; "+
					"they wait until a worker that decodes it runs. Retire a version only once `jobc status` shows none of it left, "+
					"or enable Config.UpgradePayloads in the previous release to rewrite them first",
					slog.String("kind", kind), slog.Int("version", v), slog.Int("oldest_decoded", oldest),
					slog.Int64("jobs", r.Jobs), slog.String("state", string(r.State)))
			} else {
				w.log.InfoContext(ctx, "jobc worker: unfinished jobs are stored at a payload version newer than this build decodes; they are left for newer workers",
					slog.String("kind", kind), slog.Int("version", v), slog.Int("newest_decoded", newest), slog.Int64("jobs", r.Jobs))
			}
		}
	}
	return nil
}
