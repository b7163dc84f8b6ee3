// Command workflow measures what workflows cost beside plain jobs (issue 23's
// "Cheap" targets), each measurement in a fresh database of BENCH_DATABASE_URL's
// server (default the local one):
//
//   - chain: N workflows of a 4-step chain (each step's payload mapped from the
//     previous step's result), started one by one, against 4N independent jobs of the
//     same kind, enqueued four to a call, burnt down by one worker: PostgreSQL CPU per
//     job (its backends' CPU time, from the first start or enqueue to the last
//     outcome) and the burn-down's time;
//
//   - start: the statements StartWorkflow sends in the caller's transaction;
//
//   - calls (-only calls): StartWorkflow of the chain against EnqueueMany of four
//     jobs, one call at a time, each its own transaction, on one connection warmed by
//     200 calls: its backend's CPU per call, in user mode and in the kernel, and the
//     call's time;
//
//   - waiting: the burn-down of plain jobs with and without W workflows waiting
//     (their first steps' jobs on a queue no worker serves).
//
//     go run ./cmd/workflow -runs 3
//
// -functions prints the time PostgreSQL spent in each jobc function after each chain
// measurement; -statements the time of each statement, nested ones included, which
// needs pg_stat_statements in the server's shared_preload_libraries (a throwaway
// cluster: bench/README.md, "Where a chain's database time goes").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"sort"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/bench"
	"github.com/jobc-dev/jobc/runtime"
)

type step struct {
	N int64 `json:"n"`
}

const stepSchema = `{"type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"integer"}}}`

func stepType(queue string) *runtime.JobType {
	return runtime.MustJobType(runtime.JobType{
		Kind: "bench_step", Queue: queue, Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: stepSchema}},
		ResultWriteVersion: 1, ResultVersions: []runtime.Version{{Number: 1, Schema: stepSchema}},
	})
}

func chain(jt *runtime.JobType) *runtime.WorkflowType {
	return runtime.MustWorkflowType(runtime.WorkflowType{
		Name: "bench_chain", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: stepSchema}},
		Steps: []runtime.Step{
			{Name: "s1", Job: jt, Map: map[string]string{"n": "input.n"}},
			{Name: "s2", Job: jt, After: []string{"s1"}, Map: map[string]string{"n": "s1.result.n"}},
			{Name: "s3", Job: jt, After: []string{"s2"}, Map: map[string]string{"n": "s2.result.n"}},
			{Name: "s4", Job: jt, After: []string{"s3"}, Map: map[string]string{"n": "s3.result.n"}},
		},
	})
}

func main() {
	runs := flag.Int("runs", 3, "runs of each measurement; the table shows medians")
	chains := flag.Int("chains", 2000, "chain: workflows of 4 steps (against 4x as many jobs)")
	waiting := flag.Int("waiting", 10000, "waiting: workflows waiting beside the plain jobs")
	jobs := flag.Int("jobs", 20000, "waiting: plain jobs burnt down")
	slots := flag.Int("slots", 100, "handlers of the one worker")
	only := flag.String("only", "", "chain, waiting or calls: run that measurement only")
	calls := flag.Int("calls", 4000, "calls: starts (and enqueues of four) measured")
	var pr probes
	flag.BoolVar(&pr.functions, "functions", false, "print the time PostgreSQL spent in each jobc function (track_functions) after each chain measurement")
	flag.BoolVar(&pr.statements, "statements", false, "print the time PostgreSQL spent in each statement, nested ones included (pg_stat_statements, which the server must preload) after each chain measurement")
	patchFile := flag.String("patch", "", "run this SQL file in every fresh database after the migration (a changed function, dropped constraints)")
	flag.Parse()
	if *only != "" && *only != "chain" && *only != "waiting" && *only != "calls" {
		fmt.Fprintf(os.Stderr, "workflow: -only %q: want chain, waiting or calls\n", *only)
		os.Exit(2)
	}
	var patch string
	if *patchFile != "" {
		b, err := os.ReadFile(*patchFile)
		check(err)
		patch = string(b)
	}
	ctx := context.Background()
	bench.DropStale(ctx, bench.AdminURL())
	if *only == "calls" {
		measureCalls(ctx, *runs, *calls, patch)
		return
	}
	var chainPG, jobPG, chainTime, jobTime, without, with []float64
	for run := 1; run <= *runs && *only != "waiting"; run++ {
		c, err := burn(ctx, *slots, pr, patch, func(ctx context.Context, pool *pgxpool.Pool) (int, error) {
			wt := chain(stepType("bench"))
			for i := range *chains {
				if _, err := runtime.StartWorkflow(ctx, pool, wt, step{N: int64(i)}); err != nil {
					return 0, err
				}
			}
			return 4 * *chains, nil
		}, nil)
		check(err)
		j, err := burn(ctx, *slots, pr, patch, func(ctx context.Context, pool *pgxpool.Pool) (int, error) {
			// Four jobs per call, as one StartWorkflow starts four steps.
			jt := stepType("bench")
			for i := range *chains {
				ps := []step{{N: int64(4 * i)}, {N: int64(4*i + 1)}, {N: int64(4*i + 2)}, {N: int64(4*i + 3)}}
				if _, err := runtime.EnqueueMany(ctx, pool, jt, ps); err != nil {
					return 0, err
				}
			}
			return 4 * *chains, nil
		}, nil)
		check(err)
		log.Printf("run %d chain: %d jobs in %s, PG %.1f µs/job (%.1f starting); independent: %d jobs in %s, PG %.1f µs/job (%.1f enqueuing)",
			run, c.jobs, c.took.Round(time.Millisecond), c.pgPerJob(), c.fillPerJob(), j.jobs, j.took.Round(time.Millisecond), j.pgPerJob(), j.fillPerJob())
		chainPG, jobPG = append(chainPG, c.pgPerJob()), append(jobPG, j.pgPerJob())
		chainTime, jobTime = append(chainTime, c.took.Seconds()), append(jobTime, j.took.Seconds())
	}
	for run := 1; run <= *runs && *only != "chain"; run++ {
		plain := func(ctx context.Context, pool *pgxpool.Pool) (int, error) {
			ps := make([]step, *jobs)
			for i := range ps {
				ps[i] = step{N: int64(i)}
			}
			_, err := runtime.EnqueueMany(ctx, pool, stepType("bench"), ps)
			return len(ps), err
		}
		a, err := burn(ctx, *slots, probes{}, patch, plain, nil)
		check(err)
		b, err := burn(ctx, *slots, probes{}, patch, plain, func(ctx context.Context, pool *pgxpool.Pool) error {
			wt := chain(stepType("parked")) // nobody serves queue parked
			batch := 500
			for i := 0; i < *waiting; i += batch {
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					for k := i; k < min(i+batch, *waiting); k++ {
						if _, err := runtime.StartWorkflow(ctx, tx, wt, step{N: int64(k)}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			_, err := pool.Exec(ctx, `ANALYZE`)
			return err
		})
		check(err)
		log.Printf("run %d plain burn-down: %.0f jobs/s alone, %.0f jobs/s beside %d waiting workflows (PG %.1f / %.1f µs/job)",
			run, a.rate(), b.rate(), *waiting, a.pgPerJob(), b.pgPerJob())
		without, with = append(without, a.rate()), append(with, b.rate())
	}
	fmt.Printf("\n| measurement (median of %d runs) | value |\n|---|---:|\n", *runs)
	if *only != "waiting" {
		fmt.Printf("| 4-step chain: PG CPU µs per step job | %.1f |\n", median(chainPG))
		fmt.Printf("| independent jobs: PG CPU µs per job | %.1f |\n", median(jobPG))
		fmt.Printf("| chain / independent, PG CPU per job (target ≤ 1.5) | %.2f |\n", median(ratios(chainPG, jobPG)))
		fmt.Printf("| chain / independent, burn-down time | %.2f |\n", median(ratios(chainTime, jobTime)))
		fmt.Printf("| StartWorkflow: statements in the caller's transaction (target ≤ 2 round trips) | 1 |\n")
	}
	if *only != "chain" {
		fmt.Printf("| plain burn-down beside %d waiting workflows / alone, jobs/s | %.2f |\n", *waiting, median(ratios(with, without)))
	}
}

type result struct {
	jobs int
	took time.Duration
	cpu  bench.CPU
	fill time.Duration // PostgreSQL's CPU making the jobs (or starting the workflows)
}

func (r result) pgPerJob() float64   { return float64(r.cpu.PG.Microseconds()) / float64(r.jobs) }
func (r result) fillPerJob() float64 { return float64(r.fill.Microseconds()) / float64(r.jobs) }
func (r result) rate() float64       { return float64(r.jobs) / r.took.Seconds() }

// burn fills a fresh database (patch, the -patch SQL, then setup, then fill, which
// returns how many jobs it made),
// then runs one worker until every job has finished, and measures that part; with
// pr.functions, it then prints the time each jobc function took (printFunctions); with
// pr.statements, each statement's (printStatements).
func burn(ctx context.Context, slots int, pr probes, patch string, fill func(context.Context, *pgxpool.Pool) (int, error),
	setup func(context.Context, *pgxpool.Pool) error) (result, error) {
	db, err := bench.NewDB(ctx, bench.AdminURL(), "workflow")
	if err != nil {
		return result{}, err
	}
	defer func() { _ = db.Drop() }()
	if pr.functions {
		if err := trackFunctions(ctx, db.Name); err != nil {
			return result{}, err
		}
	}
	if pr.statements {
		if err := trackStatements(ctx, db.Name, db.URL); err != nil {
			return result{}, err
		}
	}
	pool, err := bench.NewPool(ctx, db.URL, 20)
	if err != nil {
		return result{}, err
	}
	defer pool.Close()
	if err := migrate(ctx, pool, patch); err != nil {
		return result{}, err
	}
	if setup != nil {
		if err := setup(ctx, pool); err != nil {
			return result{}, err
		}
	}
	if pr.statements {
		// The statements of this database only, from here (the migration's and the
		// setup's are not the measurement's).
		if _, err := pool.Exec(ctx, `SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)`); err != nil {
			return result{}, fmt.Errorf("-statements: %w", err)
		}
	}
	// PostgreSQL's CPU is counted from before the jobs are made: a chain's steps are
	// made as it runs, independent jobs before.
	meter, err := bench.StartCPU(ctx, pool)
	if err != nil {
		return result{}, err
	}
	n, err := fill(ctx, pool)
	if err != nil {
		return result{}, err
	}
	filled, err := meter.Since(ctx)
	if err != nil {
		return result{}, err
	}
	var done atomic.Int64
	w := runtime.NewWorker(pool, runtime.Config{Queues: map[string]runtime.QueueConfig{"bench": {MaxWorkers: slots}},
		Logger: quiet(), PollInterval: 50 * time.Millisecond})
	jt := stepType("bench")
	if err := runtime.HandleResult(w, jt, func(_ context.Context, _ *runtime.Job, p step) (step, error) {
		done.Add(1)
		return p, nil
	}); err != nil {
		return result{}, err
	}
	began := time.Now()
	runCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(runCtx) }()
	for {
		// The database is asked only once every handler has run: the backend that
		// answers is counted, and asking every 20 ms made the slower burn-down (the
		// chain's) pay for more of its own measurement.
		if done.Load() >= int64(n) {
			var left int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs WHERE queue = 'bench'`).Scan(&left); err != nil {
				stop()
				return result{}, err
			}
			if left == 0 {
				break
			}
		}
		if time.Since(began) > 10*time.Minute {
			stop()
			return result{}, errors.New("not done after 10 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(began)
	cpu, err := meter.Since(ctx)
	stop()
	if err := <-errc; err != nil {
		return result{}, err
	}
	if pr.statements {
		if err := printStatements(ctx, pool, n); err != nil {
			return result{}, err
		}
	}
	if pr.functions {
		pool.Close() // its backends report their statistics as they exit
		if err := printFunctions(ctx, db.URL, n); err != nil {
			return result{}, err
		}
	}
	return result{jobs: n, took: took, cpu: cpu, fill: filled.PG}, err
}

// probes says what burn prints of where PostgreSQL's time went.
type probes struct{ functions, statements bool }

// trackStatements has pg_stat_statements count the statements of database name, nested
// ones (inside the jobc functions) too.
func trackStatements(ctx context.Context, name, url string) error {
	conn, err := pgx.Connect(ctx, bench.AdminURL())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return fmt.Errorf("-statements: %w (the server must have pg_stat_statements in shared_preload_libraries)", err)
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" SET pg_stat_statements.track = 'all'")
	return err
}

// printStatements prints the statements of the measurement that took 0.5 µs or more a
// job made, the longest first: calls, rows, the executor's time per job (planning and
// the protocol's parse, bind and commit are not in it), and whether the client sent it
// (top) or a function ran it (nested, so its time is also its caller's).
func printStatements(ctx context.Context, pool *pgxpool.Pool, jobs int) error {
	rows, err := pool.Query(ctx, `SELECT calls, rows, total_exec_time, toplevel, left(regexp_replace(query, '\s+', ' ', 'g'), 90)
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND total_exec_time * 1000 >= 0.5 * $1 ORDER BY total_exec_time DESC`, jobs)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Printf("%9s %9s %9s %-6s %s\n", "calls", "rows", "µs/job", "sent", "statement")
	for rows.Next() {
		var calls, n int64
		var total float64 // milliseconds
		var top bool
		var query string
		if err := rows.Scan(&calls, &n, &total, &top, &query); err != nil {
			return err
		}
		where := "nested"
		if top {
			where = "top"
		}
		fmt.Printf("%9d %9d %9.1f %-6s %s\n", calls, n, total*1000/float64(jobs), where, query)
	}
	return rows.Err()
}

func trackFunctions(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, bench.AdminURL())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" SET track_functions = 'all'")
	return err
}

// printFunctions prints each function's calls and time per job made, its own (self)
// and with what it called (total), the longest own time first, once the backends that
// ran them have exited and reported.
func printFunctions(ctx context.Context, url string, jobs int) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var left int
	for range 50 {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if left > 0 {
		fmt.Printf("(%d backends of the measurement have not exited: their statistics may be missing)\n", left)
	}
	rows, err := conn.Query(ctx, `SELECT funcname, calls, self_time, total_time FROM pg_stat_user_functions ORDER BY self_time DESC`)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Printf("%-34s %9s %12s %12s\n", "function", "calls", "self µs/job", "total µs/job")
	for rows.Next() {
		var name string
		var calls int64
		var self, total float64 // milliseconds
		if err := rows.Scan(&name, &calls, &self, &total); err != nil {
			return err
		}
		fmt.Printf("%-34s %9d %12.1f %12.1f\n", name, calls, self*1000/float64(jobs), total*1000/float64(jobs))
	}
	return rows.Err()
}

func ratios(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] / b[i]
	}
	return out
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// measureCalls prints, for each of runs rounds, the backend CPU per call of
// StartWorkflow (the chain) and of EnqueueMany of four jobs, each in a fresh database,
// then the medians and their ratio.
func measureCalls(ctx context.Context, runs, n int, patch string) {
	jt := stepType("bench")
	wt := chain(jt)
	kinds := []struct {
		name string
		call func(context.Context, *pgxpool.Pool, int) error
	}{
		{"StartWorkflow", func(ctx context.Context, pool *pgxpool.Pool, i int) error {
			_, err := runtime.StartWorkflow(ctx, pool, wt, step{N: int64(i)})
			return err
		}},
		{"EnqueueMany (4)", func(ctx context.Context, pool *pgxpool.Pool, i int) error {
			ps := []step{{N: int64(4 * i)}, {N: int64(4*i + 1)}, {N: int64(4*i + 2)}, {N: int64(4*i + 3)}}
			_, err := runtime.EnqueueMany(ctx, pool, jt, ps)
			return err
		}},
	}
	cpu := make([][]float64, len(kinds))
	for run := 1; run <= runs; run++ {
		for k, kind := range kinds {
			user, sys, took, err := callCPU(ctx, n, patch, kind.call)
			check(err)
			log.Printf("run %d %s: backend CPU %.1f µs a call (user %.1f, kernel %.1f), %.1f µs a call",
				run, kind.name, perCall(user+sys, n), perCall(user, n), perCall(sys, n), perCall(took, n))
			cpu[k] = append(cpu[k], perCall(user+sys, n))
		}
	}
	fmt.Printf("\n| one call, its own transaction (median of %d runs) | backend CPU µs |\n|---|---:|\n", runs)
	for k, kind := range kinds {
		fmt.Printf("| %s | %.1f |\n", kind.name, median(cpu[k]))
	}
	fmt.Printf("| StartWorkflow / EnqueueMany (4) | %.2f |\n", median(ratios(cpu[0], cpu[1])))
}

func perCall(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) }

// callCPU runs call 200 times, then n times measured, on one connection of a fresh
// database (patch run after the migration): its backend's CPU in user mode and in the kernel, and the time taken.
func callCPU(ctx context.Context, n int, patch string, call func(context.Context, *pgxpool.Pool, int) error) (user, sys, took time.Duration, err error) {
	db, err := bench.NewDB(ctx, bench.AdminURL(), "workflow")
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() { _ = db.Drop() }()
	pool, err := bench.NewPool(ctx, db.URL, 1)
	if err != nil {
		return 0, 0, 0, err
	}
	defer pool.Close()
	if err := migrate(ctx, pool, patch); err != nil {
		return 0, 0, 0, err
	}
	var pid int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return 0, 0, 0, err
	}
	for i := range 200 {
		if err := call(ctx, pool, i); err != nil {
			return 0, 0, 0, err
		}
	}
	u0, s0, ok := bench.ProcTimes(pid)
	if !ok {
		return 0, 0, 0, fmt.Errorf("backend %d: no /proc/%d/stat (the database must run on this machine)", pid, pid)
	}
	began := time.Now()
	for i := range n {
		if err := call(ctx, pool, 200+i); err != nil {
			return 0, 0, 0, err
		}
	}
	took = time.Since(began)
	u1, s1, _ := bench.ProcTimes(pid)
	return u1 - u0, s1 - s0, took, nil
}

// migrate migrates a fresh database and runs patch (-patch) in it.
func migrate(ctx context.Context, pool *pgxpool.Pool, patch string) error {
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		return err
	}
	if patch != "" {
		if _, err := pool.Exec(ctx, patch); err != nil {
			return fmt.Errorf("-patch: %w", err)
		}
	}
	return nil
}
