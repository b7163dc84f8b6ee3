package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/completer"
	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dbconn"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/lease"
)

// Worker claims jobs of the queues it serves, runs their handlers and records outcomes.
// Register handlers (the generated Register functions call Handle), then call Run.
// Besides its queues, every worker runs the maintenance services: scheduling due jobs,
// rescuing expired leases, starvation protection, periodic jobs and retention. They
// are safe to run on every node at once.
type Worker struct {
	pool *pgxpool.Pool
	cfg  Config
	log  *slog.Logger
	// q runs the worker's own statements whose loss in a server crash is harmless:
	// claims, heartbeats, sleeper and registry rows, maintenance (see ownPools).
	q *db.Queries
	// outcomes records the outcomes of attempts, durably unless Config.AsyncOutcomes.
	outcomes *db.Queries
	// claims runs the claims of a worker that has started (see claimsOn).
	claims *db.Queries
	// app runs statements on the application's pool while the worker starts, and
	// ownReady is closed once the worker's own first connection is open (see starting).
	app      *db.Queries
	ownReady chan struct{}

	kinds   map[string]*registration // by kind and by alias
	passing passing                  // the flow kinds whose completed jobs pass their places on
	started atomic.Bool
	running *lease.Held
	health  dbconn.Health // retires the worker's connections after a failover
	status  workerStatus  // what Health reports (health.go)
	// registration is the worker's registry entry, written when Run starts.
	registration db.RegisterWorkerParams
}

// NewWorker returns a worker on the application's pool. Run opens the worker's own
// connections with pool's configuration (see ownPools), and one more for
// notifications; while they open, it borrows an idle connection of pool (see starting).
func NewWorker(pool *pgxpool.Pool, cfg Config) *Worker {
	cfg = cfg.withDefaults()
	return &Worker{
		pool:     pool,
		cfg:      cfg,
		log:      cfg.Logger.With("worker", cfg.ID),
		q:        db.New(pool),
		outcomes: db.New(pool),
		app:      db.New(pool),
		ownReady: make(chan struct{}),
		kinds:    map[string]*registration{},
		running:  lease.NewHeld(),
	}
}

// ID is the worker's name in leases and error records.
func (w *Worker) ID() string { return w.cfg.ID }

// Run works jobs until ctx is cancelled, then shuts down gracefully: it stops claiming,
// lets running handlers finish within Config.ShutdownGrace, then cancels the rest and
// releases their jobs without counting the attempt. It returns nil after a graceful
// shutdown, or the error that kept it from starting.
func (w *Worker) Run(ctx context.Context) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("jobc: worker is already running")
	}
	if len(w.kinds) == 0 {
		return errors.New("jobc: worker has no handlers: call the generated Register function first")
	}
	st, err := GetMigrationStatus(ctx, w.pool)
	if err == nil {
		err = st.check()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return err
	}
	if len(st.Unknown) > 0 {
		w.log.WarnContext(ctx, "jobc worker: the database has jobc migrations newer than this binary; fine while a deploy rolls out, upgrade jobc here afterwards",
			slog.Int("newest", st.Unknown[len(st.Unknown)-1].Version), slog.Int("known", st.Latest))
	}
	queues, err := w.buildQueues()
	if err != nil {
		return err
	}
	pools, err := w.ownPools(ctx, len(queues))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer pools.close()
	w.q, w.claims, w.outcomes = db.New(pools.own), db.New(pools.claims), db.New(pools.outcomes)
	// The worker's own connections open once the first claims are made (on the
	// application's pool, see starting): on a small machine, starting server processes
	// would slow those claims down.
	var warming sync.WaitGroup
	defer warming.Wait() // before the pools close
	warming.Go(func() {
		if firstClaims(ctx, queues) {
			warming.Go(func() { w.warmOutcomes(ctx) })
		}
		w.warmOwn(ctx, queues)
	})
	services, err := w.maintenance(queues, pools.own)
	if err != nil {
		return err
	}
	if err := w.prepare(ctx, queues); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	w.log.InfoContext(ctx, "jobc worker started", "queues", queueNames(queues))
	w.status.heartbeat() // registerSelf was the first
	w.status.running.Store(true)
	defer w.status.running.Store(false)

	// Handlers run under workCtx, which outlives ctx by the grace period.
	workCtx, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelWork(nil)
	results := make(chan completer.Result, 2*totalSlots(queues))
	var handlers sync.WaitGroup

	var loops sync.WaitGroup
	spawn := func(f func()) {
		loops.Add(1)
		go func() { defer loops.Done(); f() }()
	}
	for _, q := range queues {
		w.startHandlers(workCtx, q, &handlers, results)
		spawn(func() { w.fetchLoop(ctx, q) })
	}
	spawn(func() { w.listenLoop(ctx, queues) })
	spawn(func() { w.pauseLoop(ctx, queues) })
	// Heartbeats go on through the grace period, until every outcome is recorded:
	// otherwise leases of handlers still finishing would expire and their jobs run twice.
	hbCtx, stopHeartbeats := context.WithCancel(context.WithoutCancel(ctx))
	hbDone := make(chan struct{})
	go func() { defer close(hbDone); w.heartbeatLoop(hbCtx) }()
	// The maintenance services and the check for undecodable jobs wait for every
	// queue's first claim: started at once, they would take the connections the first
	// claims need, and the first handler would wait for new connections to open.
	spawn(func() {
		if !firstClaims(ctx, queues) {
			return
		}
		if err := w.warnUndecodable(ctx); err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "jobc worker: could not check for undecodable jobs", "err", err)
		}
		for _, s := range services {
			spawn(func() { w.runEvery(ctx, s) })
		}
	})

	// The completer outlives ctx too: it records the outcomes of the grace period, and
	// is stopped only once the handlers are done and it had one more StatementTimeout to
	// write what they left, so that a database that is gone cannot hold Run up.
	completeCtx, stopCompleting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCompleting()
	completerDone := make(chan struct{})
	outcomes := completer.New(completer.Config{
		Queries: w.outcomes, Conn: pools.outcomes, Owner: w.cfg.ID, StatementTimeout: w.cfg.StatementTimeout, Held: w.running, Log: w.log,
		Passing: w.passingConfig(ctx),
		// A queue with flow control whose last claim came back short may have met
		// keys at their concurrency limits: once outcomes are recorded, their places
		// are free and the next claim counts so. Nothing else announces it.
		Recorded: func() {
			for _, q := range queues {
				if q.claim.HasFlowKinds() {
					signal(q.wake)
				}
			}
		},
	})
	go func() { defer close(completerDone); outcomes.Run(completeCtx, results) }()

	<-ctx.Done()
	w.status.running.Store(false)
	grace := time.NewTimer(w.cfg.ShutdownGrace) // from the stop request, not from when claiming stopped
	defer grace.Stop()
	loops.Wait() // no more claims; every queue's jobs channel is closed
	handlersDone := make(chan struct{})
	go func() { handlers.Wait(); close(handlersDone) }()
	select {
	case <-handlersDone:
	case <-grace.C:
		w.log.WarnContext(ctx, "jobc worker: shutdown grace period over, cancelling running handlers", "grace", w.cfg.ShutdownGrace.String())
		cancelWork(errShutdown)
		<-handlersDone
	}
	close(results)
	drain := time.AfterFunc(w.cfg.StatementTimeout, stopCompleting)
	defer drain.Stop()
	<-completerDone
	stopHeartbeats()
	<-hbDone
	w.deregisterSelf(ctx)
	w.log.InfoContext(ctx, "jobc worker stopped")
	return nil
}

var errShutdown = errors.New("jobc: worker shut down")

// prepare reads which queues are paused (a paused queue must not claim even once
// after a restart) and registers the worker. On a connection borrowed from the
// application (see starting) the two run one after the other, each a round trip;
// otherwise at once on two new connections, so that the first handler waits for one
// connection set-up rather than two.
func (w *Worker) prepare(ctx context.Context, queues []*queue) error {
	if err := w.registerLimits(ctx); err != nil {
		return err
	}
	if w.starting() == w.app {
		if err := w.refreshPaused(ctx, queues); err != nil {
			return err
		}
		return w.registerSelf(ctx, queues)
	}
	regErr := make(chan error, 1)
	go func() { regErr <- w.registerSelf(ctx, queues) }()
	pauseErr := w.refreshPaused(ctx, queues)
	if err := <-regErr; err != nil {
		return err
	}
	if pauseErr != nil {
		w.deregisterSelf(ctx)
		return pauseErr
	}
	return nil
}

// workerPools are the worker's own connections (ownPools).
type workerPools struct {
	own, claims, outcomes *pgxpool.Pool
}

func (p workerPools) close() {
	p.own.Close()
	p.claims.Close()
	p.outcomes.Close()
}

// ownPools opens the worker's connections: own and claims for its statements whose
// loss in a server crash is harmless, and outcomes for recording what attempts came to.
// None of them compiles statements with JIT (dbconn.NoJIT).
//
// own and claims run with synchronous_commit off: their commits return without
// waiting for the WAL flush, and a crash of the server can take back the last few of
// them. That is harmless for each statement they run:
//   - a lost claim leaves the job available (or, if the crash came later, leased until
//     the rescuer hands it out again): the attempt runs again, which delivery at least
//     once allows, and nobody saw it finish;
//   - a lost heartbeat only shortens a lease, and the next heartbeat renews it;
//   - a lost sleeper or registry row only costs a notification or a status line until
//     the worker writes it again;
//   - maintenance (rescues, scheduling, pruning) is repeated by its next run.
//
// Any later synchronous commit on the server flushes the WAL up to itself, and with it
// every asynchronous commit before it.
//
// claims runs the claims of a worker that has started, with generic plans
// (plan_cache_mode force_generic_plan; see claimsOn) that never scan jobc_jobs
// sequentially (ownConfig): a generic plan made while the table was empty, on a fresh
// database, found the claimed ids by reading every row, 163 ms a claim, until
// autovacuum first analyzed it (TestHotPlansOnAFreshDatabase). Its pool holds a
// connection per queue, opened when first needed, and runs nothing but claims.
//
// outcomes commits synchronously, as the application's own transactions do (it copies
// their settings): once a reader can see a job completed, failed or cancelled, a crash
// does not take that back and run the job again. Outcomes are written in batches, so
// one flush serves a whole batch. Config.AsyncOutcomes turns this off. Its statements
// find jobs by id (ownConfig), with generic plans, as claims: PostgreSQL judged a custom plan of
// jobc_finish's statements cheaper for a batch of one job, and planned them again for
// every lone outcome (1,584k instructions a job's completion so, 659k with generic
// plans; level from five jobs a batch). Transactional handlers use the application's
// pool and commit as it does.
func (w *Worker) ownPools(ctx context.Context, queues int) (workerPools, error) {
	var p workerPools
	var err error
	cfg := w.ownConfig(queues + 3) // a claim per queue while starting, heartbeats, maintenance, sleepers
	if p.own, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return p, fmt.Errorf("jobc: open the worker's connections: %w", dberr.Describe(err))
	}
	icfg := w.ownConfig(queues)
	icfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	if p.claims, err = pgxpool.NewWithConfig(ctx, icfg); err != nil {
		p.own.Close()
		return p, fmt.Errorf("jobc: open the worker's connections for claims: %w", dberr.Describe(err))
	}
	ocfg := w.ownConfig(1) // the completer writes one batch at a time
	if !w.cfg.AsyncOutcomes {
		// As the application's transactions commit.
		if v, ok := w.pool.Config().ConnConfig.RuntimeParams["synchronous_commit"]; ok {
			ocfg.ConnConfig.RuntimeParams["synchronous_commit"] = v
		} else {
			delete(ocfg.ConnConfig.RuntimeParams, "synchronous_commit")
		}
	}
	ocfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	if p.outcomes, err = pgxpool.NewWithConfig(ctx, ocfg); err != nil {
		p.own.Close()
		p.claims.Close()
		return p, fmt.Errorf("jobc: open the worker's connection for outcomes: %w", dberr.Describe(err))
	}
	return p, nil
}

// ownConfig configures a pool of up to maxConns of the worker's connections whose
// commits do not wait for the WAL flush (see ownPools), opened when first needed.
// None of them reads jobc_jobs sequentially (enable_seqscan off): a plan made while the
// table was small read every row of it for as long as the connection kept it, on
// claims (163 ms a claim), outcomes (RetryJobs read 3,000 rows to retry 2) and
// maintenance alike (the scheduler's PromoteScheduled read all 500 rows of
// TestHotPlansOnAFreshDatabase's jobs to find none due).
func (w *Worker) ownConfig(maxConns int) *pgxpool.Config {
	cfg := w.pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	cfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	dbconn.NoJIT(cfg.ConnConfig)
	cfg.MaxConns = int32(maxConns)
	cfg.MinConns = 0
	dbconn.Name(cfg.ConnConfig, w.cfg.ID)
	w.followPrimary(cfg)
	return cfg
}

func (w *Worker) buildQueues() ([]*queue, error) {
	byQueue := map[string]*queue{}
	cfgQueues := w.cfg.Queues
	names := make([]string, 0, len(w.kinds))
	for name := range w.kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := w.kinds[name]
		qname := r.jt.Queue
		qc, ok := cfgQueues[qname]
		if len(cfgQueues) > 0 && !ok {
			continue // a job type of a queue this worker does not serve
		}
		q := byQueue[qname]
		if q == nil {
			max := qc.MaxWorkers
			if max <= 0 {
				max = DefaultMaxWorkers
			}
			q = newQueue(qname, max, w.cfg.FetchBatch)
			byQueue[qname] = q
		}
		if r.jt.flowed() {
			q.claim.AddFlowKind(name, r.jt.Kind, r.jt.minVersion(), r.jt.maxVersion())
			if r.jt.passesPlacesOn() {
				w.passing.add(q, name, r.jt)
			}
		} else {
			q.claim.AddKind(name, r.jt.minVersion(), r.jt.maxVersion())
		}
	}
	for name := range cfgQueues {
		if byQueue[name] == nil {
			return nil, fmt.Errorf("jobc: queue %q is configured but no registered job type uses it", name)
		}
	}
	out := make([]*queue, 0, len(byQueue))
	for _, q := range byQueue {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func queueNames(qs []*queue) []string {
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.name
	}
	return names
}

func totalSlots(qs []*queue) int {
	n := 0
	for _, q := range qs {
		n += q.max
	}
	return n
}
