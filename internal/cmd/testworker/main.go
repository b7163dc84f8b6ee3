// Command testworker is a jobc worker process for the process-level tests in
// internal/chaostest. It serves chaos_job (see package chaosjob), whose handler
// records every execution in the tables handled (at its start) and handled_done (when
// it succeeds), and chaos_step, the job of the workflow steps (chaosjob.Order),
// recorded the same way; the tests create those tables.
//
//	DATABASE_URL=... testworker -id w1 -concurrency 4 -lease 2s
//
// The flow control flags (-concurrency-by-key, -rate-by-key, -sequence-by-key,
// -queue-concurrency, -queue-rate) give chaos_job fleet-wide limits, by the payload's
// key field and over its queue (chaosjob.Limits); producers must enqueue with the
// same limits.
//
// It runs until SIGTERM or SIGINT, then shuts down gracefully within -grace and exits 0.
// It exits 1 when the worker cannot start and 2 on bad flags. It logs to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// options are the command's flags.
type options struct {
	id                string
	queue             string
	concurrency       int
	lease             time.Duration
	rescueInterval    time.Duration
	poll              time.Duration
	schedulerInterval time.Duration
	pruneInterval     time.Duration
	grace             time.Duration
	maxSleep          time.Duration
	statementTimeout  time.Duration
	asyncOutcomes     bool
	logLevel          slog.Level
	limits            chaosjob.Limits
}

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run runs the command with args, writing its messages and log to stderr, and
// returns its exit status.
func run(args []string, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := work(ctx, o, log); err != nil {
		log.Error("testworker failed", "err", err)
		return 1
	}
	log.Info("testworker exiting")
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("testworker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.id, "id", "", "worker id, in leases, errors and the handled tables (default: the runtime's host-pid-random)")
	fs.StringVar(&o.queue, "queue", chaosjob.DefaultQueue, "queue of chaos_job")
	fs.IntVar(&o.concurrency, "concurrency", 4, "handlers that run at once")
	fs.DurationVar(&o.lease, "lease", 0, "lease duration (0: the runtime's default)")
	fs.DurationVar(&o.rescueInterval, "rescue-interval", 0, "how often expired leases are rescued (0: the runtime's default)")
	fs.DurationVar(&o.poll, "poll", 0, "poll interval (0: the runtime's default)")
	fs.DurationVar(&o.schedulerInterval, "scheduler-interval", 0, "how often due retries are made available (0: the runtime's default)")
	fs.DurationVar(&o.pruneInterval, "prune-interval", 0, "how often finished jobs and silent workers are pruned (0: the runtime's default)")
	fs.DurationVar(&o.grace, "grace", 0, "shutdown grace period (0: the runtime's default)")
	fs.DurationVar(&o.maxSleep, "max-sleep", 0, "cap on each job's sleep_ms, for a worker meant to finish jobs quickly (0: no cap)")
	fs.DurationVar(&o.statementTimeout, "statement-timeout", 0, "bound on each hot statement (0: the runtime's default)")
	fs.BoolVar(&o.asyncOutcomes, "async-outcomes", false, "record outcomes with synchronous_commit off (runtime.Config.AsyncOutcomes)")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "debug, info, warn or error")
	fs.IntVar(&o.limits.Concurrency, "concurrency-by-key", 0, "jobs of one key that run at once, fleet-wide (0: no limit)")
	fs.Var(rateValue{&o.limits.Rate}, "rate-by-key", "starts of one key in any period, as LIMIT/PERIOD (e.g. 10/1s)")
	fs.BoolVar(&o.limits.Sequence, "sequence-by-key", false, "run the jobs of a key one at a time, in enqueue order")
	fs.IntVar(&o.limits.QueueConcurrency, "queue-concurrency", 0, "jobs of the queue that run at once, fleet-wide (0: no limit)")
	fs.Var(rateValue{&o.limits.QueueRate}, "queue-rate", "starts of the queue's jobs in any period, as LIMIT/PERIOD (e.g. 10/1s)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "testworker: unexpected arguments %q\n", fs.Args())
		return o, errors.New("unexpected arguments")
	}
	if o.concurrency < 1 {
		fmt.Fprintf(fs.Output(), "testworker: -concurrency %d, want at least 1\n", o.concurrency)
		return o, errors.New("bad concurrency")
	}
	// The runtime's rules for flow control, checked before anything starts.
	if _, err := chaosjob.NewJobType(o.queue, o.limits); err != nil {
		fmt.Fprintf(fs.Output(), "testworker: flow control: %v\n", err)
		return o, err
	}
	return o, nil
}

// rateValue is a flag holding a runtime.Rate, written as runtime.ParseRate reads it.
type rateValue struct{ r *runtime.Rate }

func (v rateValue) String() string {
	if v.r == nil || v.r.IsZero() {
		return ""
	}
	return v.r.String()
}

func (v rateValue) Set(s string) error {
	r, err := runtime.ParseRate(s)
	if err != nil {
		return err
	}
	*v.r = r
	return nil
}

// work runs the worker until ctx is cancelled and it has shut down.
func work(ctx context.Context, o options, log *slog.Logger) error {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return errors.New("DATABASE_URL is not set")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	// Every handler holds a connection for its inserts; leave room for claims,
	// heartbeats, outcomes and maintenance.
	cfg.MaxConns = int32(o.concurrency + 4)
	pool, err := pgxpool.NewWithConfig(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return fmt.Errorf("create the connection pool: %w", err)
	}
	defer pool.Close()

	jt, err := chaosjob.NewJobType(o.queue, o.limits)
	if err != nil {
		return err
	}
	w := runtime.NewWorker(pool, runtime.Config{
		ID:                o.id,
		Queues:            map[string]runtime.QueueConfig{o.queue: {MaxWorkers: o.concurrency}},
		Logger:            log,
		PollInterval:      o.poll,
		LeaseDuration:     o.lease,
		RescueInterval:    o.rescueInterval,
		SchedulerInterval: o.schedulerInterval,
		PruneInterval:     o.pruneInterval,
		ShutdownGrace:     o.grace,
		StatementTimeout:  o.statementTimeout,
		AsyncOutcomes:     o.asyncOutcomes,
	})
	h := &handler{pool: pool, worker: w.ID(), maxSleep: o.maxSleep}
	if err := runtime.Handle(w, jt, h.handle); err != nil {
		return fmt.Errorf("register %s: %w", chaosjob.Kind, err)
	}
	step, err := chaosjob.NewStepType(o.queue)
	if err != nil {
		return err
	}
	if err := runtime.HandleResult(w, step, h.step); err != nil {
		return fmt.Errorf("register %s: %w", chaosjob.StepKind, err)
	}
	log.Info("testworker starting", "id", w.ID(), "pid", os.Getpid(), "queue", o.queue, "concurrency", o.concurrency,
		"limits", fmt.Sprintf("%+v", o.limits))
	if err := w.Run(ctx); err != nil {
		return fmt.Errorf("run worker %s: %w", w.ID(), err)
	}
	return nil
}
