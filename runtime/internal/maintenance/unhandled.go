package maintenance

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Defaults of the unhandled-jobs reporter. It looks at start and then every
// UnhandledInterval: each look probes the claim index once per kind waiting in the
// worker's queues and counts the jobs of the kinds nobody handles, which can be many,
// and a kind nobody handles is a deploy-time mistake, not a transient. It
// logs one kind and queue again only after unhandledRepeat: the record is a call to
// act, not a metric. A job younger than unhandledMinWait is not reported: the worker
// that handles it may be starting.
const (
	UnhandledInterval = 5 * time.Minute
	unhandledRepeat   = 15 * time.Minute
	unhandledMinWait  = time.Minute
)

// UnhandledConfig tunes the unhandled-jobs reporter.
type UnhandledConfig struct {
	Queues  []string         // the queues this worker serves
	Kinds   []string         // the kinds (and aliases) this worker handles
	Repeat  time.Duration    // quiet time per kind and queue after a record; default unhandledRepeat
	MinWait time.Duration    // only jobs available for longer count; default unhandledMinWait
	Now     func() time.Time // the clock waits and quiet times are measured on; default time.Now
}

// UnhandledReporter logs jobs available for a while, in a queue this worker serves, of
// a kind that no live worker of the queue handles: nothing claims them, so without a record they
// would wait silently (a job type removed while jobs of it remain, a producer ahead of
// the workers' release, a typo in a kind written by hand). It logs each kind and queue
// at once and then at most once per Repeat.
type UnhandledReporter struct {
	cfg    UnhandledConfig
	q      *db.Queries
	log    *slog.Logger
	logged map[[2]string]time.Time // (kind, queue) → when it was last logged
}

// UnhandledJobs are the available jobs of one kind in one queue nobody handles.
type UnhandledJobs struct {
	Kind       string
	Queue      string
	Jobs       int64
	OldestWait time.Duration // since the longest-waiting one became due
}

// UnhandledResult is what one run of the reporter found and logged.
type UnhandledResult struct {
	Found  []UnhandledJobs
	Logged int // how many of Found it logged; the others were logged recently
}

// NewUnhandledReporter returns a reporter that works through q and logs to log.
func NewUnhandledReporter(q *db.Queries, log *slog.Logger, cfg UnhandledConfig) *UnhandledReporter {
	if cfg.Repeat <= 0 {
		cfg.Repeat = unhandledRepeat
	}
	if cfg.MinWait <= 0 {
		cfg.MinWait = unhandledMinWait
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &UnhandledReporter{cfg: cfg, q: q, log: log, logged: map[[2]string]time.Time{}}
}

// RunOnce looks for unhandled jobs and logs those not logged within Repeat.
func (u *UnhandledReporter) RunOnce(ctx context.Context) (UnhandledResult, error) {
	kinds, err := u.q.UnhandledKinds(ctx, db.UnhandledKindsParams{Queues: u.cfg.Queues, Kinds: u.cfg.Kinds})
	if err != nil {
		return UnhandledResult{}, fmt.Errorf("look for kinds no worker handles: %w", err)
	}
	var res UnhandledResult
	for _, k := range kinds {
		c, err := u.q.UnhandledJobs(ctx, db.UnhandledJobsParams{Queue: k.Queue, Kind: k.Kind, MinWaitSeconds: u.cfg.MinWait.Seconds()})
		if err != nil {
			return res, fmt.Errorf("count jobs of kind %s in queue %s that no worker handles: %w", k.Kind, k.Queue, err)
		}
		if c.Jobs == 0 {
			continue // all younger than MinWait
		}
		now := u.cfg.Now()
		found := UnhandledJobs{Kind: k.Kind, Queue: k.Queue, Jobs: c.Jobs, OldestWait: max(now.Sub(c.OldestAvailableAt), 0).Round(time.Second)}
		res.Found = append(res.Found, found)
		key := [2]string{k.Kind, k.Queue}
		if last, ok := u.logged[key]; ok && now.Sub(last) < u.cfg.Repeat {
			continue
		}
		u.logged[key] = now
		res.Logged++
		u.log.WarnContext(ctx, "jobc worker: "+UnhandledReason(k.Queue, k.Kind, true)+"; these jobs wait until a worker that handles the kind runs",
			slog.String("kind", k.Kind), slog.String("queue", k.Queue), slog.Int64("jobs", c.Jobs), slog.String("oldest_wait", found.OldestWait.String()))
	}
	return res, nil
}

// UnhandledReason says why no live worker takes unfinished jobs of kind in queue:
// either no live worker serves the queue, or the ones that do do not handle the kind.
// VersionCount.Problem (and so `jobc status`) and the worker's log use the same words.
func UnhandledReason(queue, kind string, queueServed bool) string {
	if !queueServed {
		return fmt.Sprintf("no live worker serves queue %s", queue)
	}
	return fmt.Sprintf("workers of queue %s do not handle kind %s", queue, kind)
}
