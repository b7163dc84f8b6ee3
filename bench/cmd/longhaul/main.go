// Command longhaul runs each system for a long horizon at a fixed offered rate and
// samples what a short race cannot show (issue 24, item 1): a producer enqueues at
// -rate jobs/s, credited on real elapsed time and sent as batch transactions of what is
// due (at most -batch a transaction), to a fleet of -processes worker processes of
// -slots handlers each, whose handlers sleep -work. The run goes through four phases:
// warm-up, clean, pinned (a session holds a REPEATABLE READ snapshot open, idle in
// transaction, as a report, a stuck session or a replication slot would) and recovery.
// Every -every it records, from the database, the completions and the pickup
// percentiles of the jobs finished in that interval (started minus available, both by
// the database's clock, so the workers' processes need not report anything), the queue
// depth, and the size and dead tuples of every table and index of the system
// (pgstattuple_approx for tables, pg_stat_user_tables for autovacuum runs).
//
// It writes DIR/longhaul.csv (one row per system and sample), DIR/longhaul-relations.csv
// (one row per system, sample and relation), and PNG plots of the main series over
// time, the systems side by side with the phases marked.
//
//	go run ./cmd/longhaul -systems jobc,river -rate 2000 -clean 2m -pin 4m -out results/longhaul
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/bench"
)

type config struct {
	systems   []string
	rate      float64
	batch     int
	processes int
	slots     int
	work      time.Duration
	every     time.Duration
	retention time.Duration
	vacuum    int64 // jobc's Config.VacuumDeadRows
	phases    []phase
	out       string
}

type phase struct {
	name string
	dur  time.Duration
}

func main() {
	role := flag.String("role", "", "internal: worker runs one worker process of the fleet")
	dbURL := flag.String("db", "", "internal: the worker's database")
	systems := flag.String("systems", "jobc,river", "systems to run, one after the other, each on a fresh database: jobc, river, river-fast (River with a 1 ms fetch cooldown)")
	rate := flag.Float64("rate", 2000, "offered jobs per second")
	batch := flag.Int("batch", 100, "at most this many jobs a producer transaction")
	processes := flag.Int("processes", 4, "worker processes")
	slots := flag.Int("slots", 16, "handlers per worker process")
	work := flag.Duration("work", time.Millisecond, "what a handler sleeps")
	every := flag.Duration("every", 5*time.Second, "sampling interval")
	warmup := flag.Duration("warmup", 30*time.Second, "warm-up phase")
	clean := flag.Duration("clean", 2*time.Minute, "clean phase")
	pin := flag.Duration("pin", 4*time.Minute, "phase with a snapshot held open")
	recovery := flag.Duration("recovery", 2*time.Minute, "recovery phase")
	retention := flag.Duration("retention", 0, "how long completed jobs are kept (0: each system's default, a day)")
	vacuum := flag.Int64("vacuum-dead-rows", 0, "jobc's Config.VacuumDeadRows: 0 its default, negative to leave jobc_jobs to autovacuum alone")
	out := flag.String("out", "longhaul", "directory for the CSV files and plots")
	replot := flag.Bool("replot", false, "draw the plots again from -out's longhaul.csv (with the run's -systems, -rate and phases) instead of running")
	flag.Parse()
	if *role == "worker" {
		if err := runWorker(*systems, *dbURL, *slots, *work, *retention, *vacuum); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *role != "" || flag.NArg() > 0 || *rate <= 0 || *batch < 1 || *processes < 1 || *slots < 1 || *every <= 0 {
		fmt.Fprintln(os.Stderr, "longhaul: want -rate > 0, -batch, -processes, -slots >= 1, -every > 0 and no arguments")
		flag.Usage()
		os.Exit(2)
	}
	cfg := config{
		systems: strings.Split(*systems, ","), rate: *rate, batch: *batch, processes: *processes,
		slots: *slots, work: *work, every: *every, retention: *retention, vacuum: *vacuum, out: *out,
		phases: []phase{{"warm-up", *warmup}, {"clean", *clean}, {"pinned", *pin}, {"recovery", *recovery}},
	}
	for _, s := range cfg.systems {
		if s != "jobc" && s != "river" && s != "river-fast" {
			fmt.Fprintf(os.Stderr, "longhaul: -systems %q: want jobc, river or river-fast\n", s)
			os.Exit(2)
		}
	}
	if *replot {
		ss, err := readCSV(cfg.out)
		if err == nil {
			err = plotAll(cfg.out, cfg, ss)
		}
		if err != nil {
			log.Fatal(err)
		}
		printSummary(cfg, ss)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		log.Fatal(err)
	}
	var all []sample
	var rels []relSample
	for _, sys := range cfg.systems {
		s, r, err := run(ctx, cfg, sys)
		all, rels = append(all, s...), append(rels, r...)
		if err != nil {
			log.Printf("%s: %v", sys, err)
			break
		}
	}
	if err := writeCSV(cfg.out, all, rels); err != nil {
		log.Fatal(err)
	}
	if err := plotAll(cfg.out, cfg, all); err != nil {
		log.Fatal(err)
	}
	printSummary(cfg, all)
}

// newSystem is bench.NewSystem, with river-fast: River with a fetch cooldown of 1 ms
// instead of its default 100 ms, which caps a process's fetches at its free slots ten
// times a second.
func newSystem(name string) bench.System {
	if name == "river-fast" {
		name = "river"
	}
	return bench.NewSystem(name)
}

// runWorker is one process of the fleet: a worker of the system until it is signalled.
func runWorker(name, dbURL string, slots int, work, retention time.Duration, vacuum int64) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, err := bench.NewPool(ctx, dbURL, max(4, slots/4+2))
	if err != nil {
		return err
	}
	defer pool.Close()
	wc := bench.WorkerConfig{Concurrency: slots, PollInterval: time.Second, FetchBatch: slots, Retention: retention, VacuumDeadRows: vacuum}
	if name == "river-fast" {
		wc.FetchCooldown = time.Millisecond
	}
	stopWorker, err := newSystem(name).StartWorker(ctx, pool, wc, func(int64) { time.Sleep(work) })
	if err != nil {
		return err
	}
	<-ctx.Done()
	return stopWorker()
}

// sample is one interval of one system.
type sample struct {
	system, phase     string
	at                time.Duration // since the warm-up began
	offered, enqueued float64       // jobs/s over the interval
	completed         float64       // jobs/s
	p50, p95, p99     time.Duration // pickup of the jobs completed in the interval
	depth             int64         // jobs not finished
	hotBytes          int64         // the hot table (jobc_jobs, river_job) and its indexes
	hotDead           int64         // dead tuples in the hot table (pgstattuple_approx)
	historyBytes      int64         // jobc_jobs_finished and its indexes (River keeps history in river_job)
	autovacuums       int64         // autovacuum and autoanalyze runs on the system's tables so far
	workerRSS         int64         // the largest resident set of the fleet's processes, bytes
}

type relSample struct {
	system string
	at     time.Duration
	rel    string
	kind   string // table or index
	bytes  int64
	dead   int64 // tables only: pgstattuple_approx's dead_tuple_count
}

func run(ctx context.Context, cfg config, name string) ([]sample, []relSample, error) {
	db, err := bench.NewDB(ctx, bench.AdminURL(), "longhaul")
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = db.Drop() }()
	pool, err := bench.NewPool(ctx, db.URL, 12)
	if err != nil {
		return nil, nil, err
	}
	defer pool.Close()
	sys := newSystem(name)
	if err := sys.Migrate(ctx, pool); err != nil {
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pgstattuple`); err != nil {
		return nil, nil, fmt.Errorf("pgstattuple: %w", err)
	}
	// What a long horizon depends on most: say it with the figures.
	var settings string
	if err := pool.QueryRow(ctx, `SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) FROM pg_settings
		WHERE name IN ('autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_scale_factor', 'autovacuum_vacuum_threshold',
		               'autovacuum_vacuum_cost_delay', 'fsync', 'synchronous_commit', 'shared_buffers', 'server_version')`).Scan(&settings); err != nil {
		return nil, nil, err
	}
	log.Printf("%s: server %s", name, settings)
	fleet, err := startFleet(ctx, cfg, name, db.URL)
	if err != nil {
		return nil, nil, err
	}
	defer fleet.stop()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var enqueued atomic.Int64
	began := time.Now()
	prodErr := make(chan error, 1)
	go func() { prodErr <- produce(runCtx, cfg, sys, pool, began, &enqueued) }()

	var samples []sample
	var rels []relSample
	total := time.Duration(0)
	for _, p := range cfg.phases {
		total += p.dur
	}
	var pin pgx.Tx
	var pinConn *pgx.Conn
	defer func() {
		if pinConn != nil {
			_ = pinConn.Close(context.Background())
		}
	}()
	prevAt, prevEnq := time.Duration(0), int64(0)
	var prevDB time.Time
	if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&prevDB); err != nil {
		return nil, nil, err
	}
	tick := time.NewTicker(cfg.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return samples, rels, ctx.Err()
		case err := <-prodErr:
			return samples, rels, fmt.Errorf("producer: %w", err)
		case err := <-fleet.failed:
			return samples, rels, fmt.Errorf("worker process: %w", err)
		case <-tick.C:
		}
		at := time.Since(began)
		ph := phaseAt(cfg.phases, at)
		// The snapshot is taken when the pinned phase begins and released when it ends.
		if ph == "pinned" && pin == nil {
			if pinConn, err = pgx.Connect(ctx, db.URL); err != nil {
				return samples, rels, err
			}
			if pin, err = pinConn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}); err != nil {
				return samples, rels, err
			}
			if _, err := pin.Exec(ctx, `SELECT count(*) FROM pg_class`); err != nil {
				return samples, rels, err
			}
			log.Printf("%s: %s: snapshot held from here", name, at.Round(time.Second))
		}
		if ph != "pinned" && pin != nil {
			if err := pin.Rollback(ctx); err != nil {
				return samples, rels, err
			}
			pin = nil
			log.Printf("%s: %s: snapshot released", name, at.Round(time.Second))
		}
		s, r, now, err := measure(ctx, pool, name, prevDB)
		if err != nil {
			return samples, rels, err
		}
		secs := (at - prevAt).Seconds()
		enq := enqueued.Load()
		s.system, s.phase, s.at = name, ph, at
		if s.workerRSS, err = fleet.maxRSS(); err != nil {
			return samples, rels, err
		}
		s.offered = cfg.rate
		s.enqueued = float64(enq-prevEnq) / secs
		s.completed /= now.Sub(prevDB).Seconds()
		for i := range r {
			r[i].system, r[i].at = name, at
		}
		samples, rels = append(samples, s), append(rels, r...)
		log.Printf("%s %-8s %6s enqueued %6.0f/s completed %6.0f/s pickup p50 %s p99 %s depth %d hot %.1f MB dead %d history %.1f MB worker RSS %.1f MB",
			name, ph, at.Round(time.Second), s.enqueued, s.completed, s.p50.Round(time.Millisecond), s.p99.Round(time.Millisecond),
			s.depth, float64(s.hotBytes)/1e6, s.hotDead, float64(s.historyBytes)/1e6, float64(s.workerRSS)/1e6)
		prevAt, prevEnq, prevDB = at, enq, now
		if at >= total {
			return samples, rels, nil
		}
	}
}

func phaseAt(ps []phase, at time.Duration) string {
	for _, p := range ps {
		if at < p.dur {
			return p.name
		}
		at -= p.dur
	}
	return ps[len(ps)-1].name
}

// produce enqueues at cfg.rate, credited on real time: every 10 ms what is due goes
// out in transactions of at most cfg.batch jobs, sent by four goroutines so that one
// slow commit does not hold back the offer.
func produce(ctx context.Context, cfg config, sys bench.System, pool *pgxpool.Pool, began time.Time, enqueued *atomic.Int64) error {
	batches := make(chan int, 1<<16)
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for k := range batches {
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return sys.EnqueueBatchTx(ctx, tx, k) })
				if err != nil {
					if ctx.Err() == nil {
						errc <- err
					}
					return
				}
				enqueued.Add(int64(k))
			}
		})
	}
	defer wg.Wait()
	defer close(batches)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	sent := int64(0)
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case <-tick.C:
		}
		due := int64(cfg.rate*time.Since(began).Seconds()) - sent
		for due > 0 {
			k := int(min(due, int64(cfg.batch)))
			select {
			case batches <- k:
			default:
				return errors.New("the producer's queue of batches is full: the database does not take the offer")
			}
			sent += int64(k)
			due -= int64(k)
		}
	}
}

type fleet struct {
	cmds   []*exec.Cmd
	failed chan error
	once   sync.Once
}

func startFleet(ctx context.Context, cfg config, name, dbURL string) (*fleet, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f := &fleet{failed: make(chan error, cfg.processes)}
	for range cfg.processes {
		cmd := exec.Command(self, "-role", "worker", "-systems", name, "-db", dbURL,
			"-slots", strconv.Itoa(cfg.slots), "-work", cfg.work.String(), "-retention", cfg.retention.String(),
			"-vacuum-dead-rows", strconv.FormatInt(cfg.vacuum, 10))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			f.stop()
			return nil, err
		}
		f.cmds = append(f.cmds, cmd)
		go func() {
			if err := cmd.Wait(); err != nil && ctx.Err() == nil {
				f.failed <- err
			}
		}()
	}
	return f, nil
}

// maxRSS reads each worker process's resident set (VmRSS in /proc) and returns the
// largest.
func (f *fleet) maxRSS() (int64, error) {
	var most int64
	for _, c := range f.cmds {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Process.Pid))
		if err != nil {
			return 0, fmt.Errorf("worker process %d: %w", c.Process.Pid, err)
		}
		for line := range strings.SplitSeq(string(status), "\n") {
			if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("worker process %d: VmRSS %q: %w", c.Process.Pid, kb, err)
				}
				most = max(most, n*1024)
			}
		}
	}
	return most, nil
}

func (f *fleet) stop() {
	f.once.Do(func() {
		for _, c := range f.cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		deadline := time.Now().Add(30 * time.Second)
		for _, c := range f.cmds {
			for c.ProcessState == nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if c.ProcessState == nil {
				_ = c.Process.Kill()
			}
		}
	})
}

// measure reads one sample: the jobs finished since the database time since, and the
// relations now. It returns the database's time the sample was read at.
func measure(ctx context.Context, pool *pgxpool.Pool, name string, since time.Time) (sample, []relSample, time.Time, error) {
	var s sample
	var now time.Time
	finished := `SELECT now(), count(*),
		coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY attempted_at - available_at), '0'),
		coalesce(percentile_disc(0.95) WITHIN GROUP (ORDER BY attempted_at - available_at), '0'),
		coalesce(percentile_disc(0.99) WITHIN GROUP (ORDER BY attempted_at - available_at), '0')
		FROM jobc_jobs_finished WHERE finished_at > $1 AND finished_at <= now()`
	depth := `SELECT count(*) FROM jobc_jobs`
	hot, prefix := "jobc_jobs", "jobc_"
	if name != "jobc" {
		finished = `SELECT now(), count(*),
			coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY attempted_at - scheduled_at), '0'),
			coalesce(percentile_disc(0.95) WITHIN GROUP (ORDER BY attempted_at - scheduled_at), '0'),
			coalesce(percentile_disc(0.99) WITHIN GROUP (ORDER BY attempted_at - scheduled_at), '0')
			FROM river_job WHERE state = 'completed' AND finalized_at > $1 AND finalized_at <= now()`
		depth = `SELECT count(*) FROM river_job WHERE state IN ('available', 'running', 'retryable', 'scheduled', 'pending')`
		hot, prefix = "river_job", "river_"
	}
	var n int64
	if err := pool.QueryRow(ctx, finished, since).Scan(&now, &n, &s.p50, &s.p95, &s.p99); err != nil {
		return s, nil, now, fmt.Errorf("completions: %w", err)
	}
	s.completed = float64(n)
	if err := pool.QueryRow(ctx, depth).Scan(&s.depth); err != nil {
		return s, nil, now, fmt.Errorf("depth: %w", err)
	}
	rows, err := pool.Query(ctx, `
		SELECT c.relname, CASE c.relkind WHEN 'i' THEN 'index' ELSE 'table' END, pg_relation_size(c.oid),
		       coalesce(t.relname, c.relname),
		       CASE WHEN c.relkind = 'r' THEN (pgstattuple_approx(c.oid)).dead_tuple_count ELSE 0 END,
		       coalesce(st.autovacuum_count + st.autoanalyze_count, 0)
		FROM pg_class c
		JOIN pg_namespace ns ON ns.oid = c.relnamespace AND ns.nspname = current_schema()
		LEFT JOIN pg_index i ON i.indexrelid = c.oid
		LEFT JOIN pg_class t ON t.oid = i.indrelid
		LEFT JOIN pg_stat_user_tables st ON st.relid = c.oid
		WHERE c.relkind IN ('r', 'i') AND c.relname LIKE $1
		ORDER BY c.relname`, prefix+"%")
	if err != nil {
		return s, nil, now, fmt.Errorf("relations: %w", err)
	}
	var rels []relSample
	for rows.Next() {
		var r relSample
		var table string
		var av int64
		if err := rows.Scan(&r.rel, &r.kind, &r.bytes, &table, &r.dead, &av); err != nil {
			return s, nil, now, err
		}
		rels = append(rels, r)
		s.autovacuums += av
		switch table {
		case hot:
			s.hotBytes += r.bytes
			if r.kind == "table" {
				s.hotDead = r.dead
			}
		default:
			if strings.HasPrefix(table, "jobc_jobs_finished") { // its partitions
				s.historyBytes += r.bytes
			}
		}
	}
	return s, rels, now, rows.Err()
}

func writeCSV(dir string, ss []sample, rs []relSample) error {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }
	f, err := os.Create(filepath.Join(dir, "longhaul.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"system", "phase", "t_s", "offered_per_s", "enqueued_per_s", "completed_per_s",
		"pickup_p50_ms", "pickup_p95_ms", "pickup_p99_ms", "depth", "hot_bytes", "hot_dead_tuples", "history_bytes", "autovacuum_runs",
		"worker_rss_bytes"})
	for _, s := range ss {
		_ = w.Write([]string{s.system, s.phase, strconv.FormatFloat(s.at.Seconds(), 'f', 1, 64),
			strconv.FormatFloat(s.offered, 'f', 0, 64), strconv.FormatFloat(s.enqueued, 'f', 0, 64),
			strconv.FormatFloat(s.completed, 'f', 0, 64), ms(s.p50), ms(s.p95), ms(s.p99),
			strconv.FormatInt(s.depth, 10), strconv.FormatInt(s.hotBytes, 10), strconv.FormatInt(s.hotDead, 10),
			strconv.FormatInt(s.historyBytes, 10), strconv.FormatInt(s.autovacuums, 10), strconv.FormatInt(s.workerRSS, 10)})
	}
	w.Flush()
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return err
	}
	f, err = os.Create(filepath.Join(dir, "longhaul-relations.csv"))
	if err != nil {
		return err
	}
	w = csv.NewWriter(f)
	_ = w.Write([]string{"system", "t_s", "relation", "kind", "bytes", "dead_tuples"})
	for _, r := range rs {
		_ = w.Write([]string{r.system, strconv.FormatFloat(r.at.Seconds(), 'f', 1, 64), r.rel, r.kind,
			strconv.FormatInt(r.bytes, 10), strconv.FormatInt(r.dead, 10)})
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

// readCSV reads the samples writeCSV wrote to dir.
func readCSV(dir string) ([]sample, error) {
	f, err := os.Open(filepath.Join(dir, "longhaul.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	var ss []sample
	for i, r := range rows[min(1, len(rows)):] {
		if len(r) != 14 && len(r) != 15 { // runs before worker_rss_bytes have 14
			return nil, fmt.Errorf("%s/longhaul.csv: line %d: %d fields, want 15", dir, i+2, len(r))
		}
		var v [13]float64
		for k := range r[2:] {
			if v[k], err = strconv.ParseFloat(r[k+2], 64); err != nil {
				return nil, fmt.Errorf("%s/longhaul.csv: line %d: field %d: %w", dir, i+2, k+3, err)
			}
		}
		ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
		ss = append(ss, sample{system: r[0], phase: r[1], at: time.Duration(v[0] * float64(time.Second)),
			offered: v[1], enqueued: v[2], completed: v[3], p50: ms(v[4]), p95: ms(v[5]), p99: ms(v[6]),
			depth: int64(v[7]), hotBytes: int64(v[8]), hotDead: int64(v[9]), historyBytes: int64(v[10]), autovacuums: int64(v[11]), workerRSS: int64(v[12])})
	}
	return ss, nil
}

// printSummary prints, per system and phase, the medians of the main series and the
// hot table's peak, as a Markdown table.
func printSummary(cfg config, ss []sample) {
	fmt.Printf("\n| system | phase | completed/s (median) | pickup p50 / p99 (median) | depth (median) | hot table MB (median / peak) | dead tuples (peak) |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, sys := range cfg.systems {
		for _, p := range cfg.phases {
			var comp, p50, p99, depth, hot []float64
			peakHot, peakDead := 0.0, int64(0)
			for _, s := range ss {
				if s.system != sys || s.phase != p.name {
					continue
				}
				comp, depth = append(comp, s.completed), append(depth, float64(s.depth))
				p50, p99 = append(p50, float64(s.p50)/1e6), append(p99, float64(s.p99)/1e6)
				hot = append(hot, float64(s.hotBytes)/1e6)
				peakHot, peakDead = max(peakHot, float64(s.hotBytes)/1e6), max(peakDead, s.hotDead)
			}
			if len(comp) == 0 {
				continue
			}
			fmt.Printf("| %s | %s | %.0f | %.1f / %.1f ms | %.0f | %.1f / %.1f | %d |\n", sys, p.name,
				bench.Median(comp), bench.Median(p50), bench.Median(p99), bench.Median(depth), bench.Median(hot), peakHot, peakDead)
		}
	}
	fmt.Printf("\n| system | worker RSS MB at 5 min / end / peak | trend after 5 min (least squares) | hot table MB, last half: min / max | history MB, last half: min / max |\n|---|---:|---:|---:|---:|\n")
	for _, sys := range cfg.systems {
		var own []sample
		for _, s := range ss {
			if s.system == sys && s.workerRSS > 0 {
				own = append(own, s)
			}
		}
		if len(own) == 0 {
			continue
		}
		end := own[len(own)-1]
		var at5 sample
		var xs, ys []float64
		peak := 0.0
		for _, s := range own {
			mb := float64(s.workerRSS) / 1e6
			peak = max(peak, mb)
			if s.at >= 5*time.Minute {
				if at5.at == 0 {
					at5 = s
				}
				xs, ys = append(xs, s.at.Hours()), append(ys, mb)
			}
		}
		half := func(v func(sample) int64) (float64, float64) {
			lo, hi := math.Inf(1), 0.0
			for _, s := range own {
				if s.at >= end.at/2 {
					mb := float64(v(s)) / 1e6
					lo, hi = min(lo, mb), max(hi, mb)
				}
			}
			return lo, hi
		}
		hotLo, hotHi := half(func(s sample) int64 { return s.hotBytes })
		histLo, histHi := half(func(s sample) int64 { return s.historyBytes })
		at5MB, trend := "-", "- (shorter than 5 min)"
		if at5.at > 0 {
			at5MB, trend = fmt.Sprintf("%.1f", float64(at5.workerRSS)/1e6), fmt.Sprintf("%+.1f MB/hour", slope(xs, ys))
		}
		fmt.Printf("| %s | %s / %.1f / %.1f | %s | %.1f / %.1f | %.1f / %.1f |\n", sys,
			at5MB, float64(end.workerRSS)/1e6, peak, trend, hotLo, hotHi, histLo, histHi)
	}
}

// slope is the least-squares slope of ys over xs (0 for fewer than two points).
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}
