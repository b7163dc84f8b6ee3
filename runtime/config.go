package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// Config tunes a Worker. The zero value of every field selects a default.
type Config struct {
	// ID names this worker in leases and error records; default host-pid-random.
	ID string
	// Queues maps each queue this worker serves to its settings. Empty: every queue of
	// the registered job types, each with DefaultMaxWorkers.
	Queues map[string]QueueConfig
	// Logger receives the worker's records; default slog.Default().
	Logger *slog.Logger
	// FetchBatch caps how many jobs one claim takes; default 100.
	FetchBatch int
	// PollInterval is how often an idle queue looks for work when no notification
	// arrives; default 1s. Notifications make pickup immediate; polling covers any
	// that were missed.
	PollInterval time.Duration
	// LeaseDuration is how long a claim holds a job before another worker may rescue
	// it; the worker extends the leases of its running jobs every LeaseDuration/3, so
	// a crashed worker's jobs run again after at most this long. Default 30s.
	LeaseDuration time.Duration
	// SchedulerInterval is how often due scheduled jobs are made available; default 1s.
	SchedulerInterval time.Duration
	// ShutdownGrace is how long running handlers may continue after Run's context is
	// cancelled before their contexts are cancelled and their jobs released; default 10s.
	ShutdownGrace time.Duration
	// RescueInterval is how often expired leases are looked for; default
	// LeaseDuration/2 (at least a second).
	RescueInterval time.Duration
	// StarvationBound is how long an available job may wait behind more urgent ones
	// before it moves ahead of all of them; default 1m, negative to disable.
	StarvationBound time.Duration
	// VacuumDeadRows: once jobc_jobs holds this many dead row versions plus as many
	// as it has live rows, a worker vacuums it, instead of leaving them to autovacuum's
	// next visit of the database, which comes once a minute by default, a server-wide
	// setting: every job leaves two dead versions, and at thousands of jobs a second
	// they made the table of a few hundred live jobs weigh hundreds of megabytes
	// (docs/operations.md, "Vacuum"). One worker vacuums at a time, at most a
	// twentieth of the time, and only if its role may (it owns the table, or holds
	// MAINTAIN on it from PostgreSQL 17). Default 10,000; negative to leave the table
	// to autovacuum alone.
	VacuumDeadRows int64
	// Retention says how long finished jobs are kept; PruneInterval how often the
	// pruner runs (default 1m).
	Retention     Retention
	PruneInterval time.Duration
	// UpgradePayloads makes the worker rewrite waiting jobs stored at older payload
	// versions to the newest version every live worker decodes, in small batches, so
	// that an old version can be retired without waiting for its backlog to drain.
	UpgradePayloads bool
	// StatementTimeout bounds each of the worker's hot statements: claims, heartbeats,
	// outcome writes, sleeper updates and the listener's setup. A statement that takes
	// longer is cancelled and retried (claims at the next poll, outcomes with backoff
	// while the job's lease lasts), so a stalled connection cannot hold the worker up.
	// It also bounds shutdown: Run returns within ShutdownGrace (or one
	// StatementTimeout, if that is longer, for a claim under way when the stop came)
	// plus about three StatementTimeouts even when the database is gone. Default LeaseDuration/4 (at
	// least a second, at most 10s): a heartbeat that times out still leaves time for
	// the next one before the lease runs out.
	StatementTimeout time.Duration
	// AsyncOutcomes writes outcomes (completed, failed, cancelled, retried, released)
	// with synchronous_commit off, as claims and heartbeats always are. It saves a WAL
	// flush per batch of outcomes, but a crash of the server can then take back an
	// outcome that others already read: a job seen completed may be executed again,
	// a job seen failed or cancelled may run once more. Leave it off unless handlers
	// are idempotent and readers never act on a job's final state.
	AsyncOutcomes bool
	// Hooks observe the worker: every claim, handler start and finish, rescue and
	// maintenance run (see Hook). Adapters for Prometheus and OpenTelemetry live in
	// the contrib modules. None by default, and then observing costs nothing.
	Hooks []Hook
	// Middleware wraps every handler, outermost first (see Middleware): the
	// OpenTelemetry adapter runs each job in a consumer span this way.
	Middleware []Middleware
}

// Retention is how long finished jobs (and handlers' idempotency keys) are kept; a
// workflow that ended is kept as long as a job that ended in its state. Zero
// fields take the defaults: completed and cancelled jobs 24h, failed jobs 7 days,
// idempotency keys 7 days. A negative field keeps them forever.
type Retention struct {
	Completed       time.Duration
	Failed          time.Duration
	Cancelled       time.Duration
	IdempotencyKeys time.Duration
}

// QueueConfig tunes one queue.
type QueueConfig struct {
	// MaxWorkers is how many of the queue's jobs run at once; default DefaultMaxWorkers.
	MaxWorkers int
}

// DefaultMaxWorkers is the concurrency of a queue whose QueueConfig does not set one.
const DefaultMaxWorkers = 10

func (c Config) withDefaults() Config {
	if c.ID == "" {
		c.ID = defaultWorkerID()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.FetchBatch <= 0 {
		c.FetchBatch = 100
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 30 * time.Second
	}
	if c.SchedulerInterval <= 0 {
		c.SchedulerInterval = time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 10 * time.Second
	}
	if c.RescueInterval <= 0 {
		c.RescueInterval = max(c.LeaseDuration/2, time.Second)
	}
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = min(max(c.LeaseDuration/4, time.Second), 10*time.Second)
	}
	if c.StarvationBound == 0 {
		c.StarvationBound = time.Minute
	}
	if c.PruneInterval <= 0 {
		c.PruneInterval = time.Minute
	}
	const day = 24 * time.Hour
	c.Retention.Completed = orDefault(c.Retention.Completed, day)
	c.Retention.Cancelled = orDefault(c.Retention.Cancelled, day)
	c.Retention.Failed = orDefault(c.Retention.Failed, 7*day)
	c.Retention.IdempotencyKeys = orDefault(c.Retention.IdempotencyKeys, 7*day)
	return c
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}
