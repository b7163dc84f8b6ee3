// Command race runs jobc and River side by side on one PostgreSQL server and prints
// the medians of several runs and the jobc/River ratios. See ../../README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/bench"
)

type variant struct {
	label string
	sys   string
	wcfg  bench.WorkerConfig
}

func main() {
	var (
		only       = flag.String("only", "burndown,enqueue,batch,latency", "measurements to run: burndown, enqueue, batch, latency")
		systems    = flag.String("systems", "jobc,river", "variants: jobc, river (River's default FetchCooldown 100ms), river-fast (FetchCooldown 1ms), jobc-async (Config.AsyncOutcomes: outcomes without waiting for the WAL flush), sql (hand-written SQL on a minimal table: the ceiling), sql-keep (the ceiling with leases and a finished table)")
		runs       = flag.Int("runs", 5, "runs of each measurement; the table shows medians")
		jobs       = flag.Int("jobs", 20000, "burn-down: jobs inserted before the worker starts")
		conc       = flag.Int("concurrency", 100, "burn-down and latency: handlers at once (MaxWorkers of the one queue)")
		poolSize   = flag.Int("pool", 20, "burn-down and latency: pgxpool MaxConns (both systems open one more, unpooled, connection for LISTEN)")
		poll       = flag.Duration("poll", time.Second, "fetch poll interval (jobc PollInterval, River FetchPollInterval)")
		fetchBatch = flag.Int("fetch-batch", 100, "jobc FetchBatch (River has none: it fetches its free slots)")
		analyze    = flag.Bool("analyze", true, "burn-down: ANALYZE the job tables after the bulk insert")
		history    = flag.Int("history", 0, "burn-down: finished jobs made up before the insert (jobc: rows of jobc_jobs_finished; River: completed river_job rows)")
		gs         = flag.String("goroutines", "8,32", "enqueue: concurrent transactions (pool size = goroutines)")
		dur        = flag.Duration("duration", 5*time.Second, "enqueue: measured time per run")
		warmup     = flag.Duration("warmup", time.Second, "enqueue: unmeasured time before each run")
		batch      = flag.Int("batch", 100, "batch: jobs per transaction (jobc EnqueueMany, River InsertManyFastTx)")
		batchG     = flag.Int("batch-goroutines", 8, "batch: concurrent transactions")
		samples    = flag.Int("samples", 100, "latency: jobs per run")
		gap        = flag.Duration("gap", 150*time.Millisecond, "latency: pause before each enqueue (River's insert notifications are limited to one per FetchCooldown)")
		walFlag    = flag.Bool("wal", false, "account WAL (pg_walinspect) and index insertions per job in the first run of burn-down and enqueue")
		syncCommit = flag.String("synchronous-commit", "", "set synchronous_commit on every connection of both systems (e.g. off: commits stop waiting for the WAL flush)")
		baseline   = flag.Bool("baseline", true, "enqueue: also measure the business transaction alone (column none)")
		explain    = flag.String("explain", "", "write auto_explain (ANALYZE, BUFFERS) plans of every statement the systems run to FILE; slows everything down, so use with -runs 1 and small sizes")
		explainMin = flag.Duration("explain-min", 0, "with -explain, only the plans of statements that ran at least this long (auto_explain.log_min_duration), to find the slow ones in a large run")
		cpuprof    = flag.String("cpuprofile", "", "write a CPU profile of each jobc burn-down/enqueue run to DIR/<measurement>-<run>.pprof")
	)
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	bench.DropStale(ctx, bench.AdminURL())
	if *explain != "" {
		f, err := os.Create(*explain)
		fail(err)
		defer f.Close()
		var mu sync.Mutex
		bench.OnNotice = func(c *pgconn.PgConn, n *pgconn.Notice) {
			if !strings.HasPrefix(n.Message, "duration:") {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(f, "-- backend %d\n%s\n\n", c.PID(), n.Message)
		}
		for k, v := range map[string]string{
			"session_preload_libraries": "auto_explain", "auto_explain.log_min_duration": strconv.FormatInt(explainMin.Milliseconds(), 10),
			"auto_explain.log_analyze": "on", "auto_explain.log_buffers": "on", "auto_explain.log_level": "notice",
			"auto_explain.log_verbose": "off", "auto_explain.log_wal": "on", "auto_explain.log_timing": "on",
			"auto_explain.log_nested_statements": "on", // inside jobc_finish
		} {
			bench.SessionSettings[k] = v
		}
	}
	if *syncCommit != "" {
		bench.SessionSettings["synchronous_commit"] = *syncCommit
	}

	base := bench.WorkerConfig{Concurrency: *conc, PollInterval: *poll, FetchBatch: *fetchBatch, FetchCooldown: 100 * time.Millisecond}
	var vs []variant
	for _, s := range strings.Split(*systems, ",") {
		w := base
		switch s {
		case "jobc", "river", "sql", "sql-keep":
			vs = append(vs, variant{s, s, w})
		case "river-fast":
			w.FetchCooldown = time.Millisecond
			vs = append(vs, variant{s, "river", w})
		case "jobc-async":
			w.AsyncOutcomes = true
			vs = append(vs, variant{s, "jobc", w})
		default:
			fail(fmt.Errorf("unknown system %q", s))
		}
	}
	if *baseline {
		vs = append(vs, variant{"none", "none", base})
	}
	want := map[string]bool{}
	for _, m := range strings.Split(*only, ",") {
		want[m] = true
	}
	var goroutines []int
	for _, g := range strings.Split(*gs, ",") {
		n, err := strconv.Atoi(g)
		if err != nil {
			fail(err)
		}
		goroutines = append(goroutines, n)
	}
	if *cpuprof != "" {
		if err := os.MkdirAll(*cpuprof, 0o755); err != nil {
			fail(err)
		}
	}
	t := newTable(vs)
	fmt.Printf("settings: synchronous_commit=%q runs=%d jobs=%d history=%d concurrency=%d pool=%d poll=%s fetch-batch(jobc)=%d goroutines=%v duration=%s batch=%d samples=%d gap=%s\n\n",
		*syncCommit, *runs, *jobs, *history, *conc, *poolSize, *poll, *fetchBatch, goroutines, *dur, *batch, *samples, *gap)

	profile := func(name string, run int, v variant, f func() error) error {
		if *cpuprof == "" || v.sys != "jobc" {
			return f()
		}
		out, err := os.Create(fmt.Sprintf("%s/%s-%s-%d.pprof", *cpuprof, v.label, name, run))
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
		return f()
	}

	for run := 1; run <= *runs; run++ {
		// Alternate the order of the variants so neither always runs first.
		order := vs
		if run%2 == 0 {
			order = reversed(vs)
		}
		if want["burndown"] {
			for _, v := range order {
				if v.sys == "none" {
					continue
				}
				err := withEnv(ctx, v, *poolSize, func(e *bench.Env) error {
					o := bench.BurnDownOptions{Jobs: *jobs, Worker: v.wcfg, Analyze: *analyze, History: *history}
					var start string
					if *walFlag && run == 1 {
						o.BeforeStart = func(ctx context.Context) (err error) { start, err = bench.LSN(ctx, e.Pool); return err }
						o.AfterRecorded = func(ctx context.Context) error {
							rep, err := bench.WALSince(ctx, e.Pool, start)
							if err != nil {
								return err
							}
							printWAL(fmt.Sprintf("%s burn-down (claim + handle + complete), %d jobs", v.label, *jobs), rep, *jobs)
							return nil
						}
					}
					if *cpuprof != "" && v.sys == "jobc" {
						// Profile the burn-down itself, not the bulk insert before it.
						before, after := o.BeforeStart, o.AfterRecorded
						var out *os.File
						o.BeforeStart = func(ctx context.Context) error {
							if before != nil {
								if err := before(ctx); err != nil {
									return err
								}
							}
							var err error
							if out, err = os.Create(fmt.Sprintf("%s/%s-burndown-%d.pprof", *cpuprof, v.label, run)); err != nil {
								return err
							}
							return pprof.StartCPUProfile(out)
						}
						o.AfterRecorded = func(ctx context.Context) error {
							pprof.StopCPUProfile()
							out.Close()
							if after != nil {
								return after(ctx)
							}
							return nil
						}
					}
					return func() error {
						r, err := bench.BurnDown(ctx, e, o)
						if err != nil {
							return err
						}
						t.add("burn-down jobs/s", v.label, r.Rate())
						t.add("  bulk insert jobs/s (untimed setup)", v.label, float64(r.Jobs)/r.Insert.Seconds())
						t.add("  worker start→first handler ms", v.label, ms(r.Startup))
						t.addLower("  PG backend CPU µs/job", v.label, us(r.CPU.PG)/float64(r.Jobs))
						t.addLower("  Go process CPU µs/job", v.label, us(r.CPU.Go)/float64(r.Jobs))
						fmt.Fprintf(os.Stderr, "run %d %-10s burn-down %8.0f jobs/s (insert %s, start %s, burn %s)\n", run, v.label, r.Rate(), r.Insert.Round(time.Millisecond), r.Startup.Round(time.Millisecond), r.BurnDown.Round(time.Millisecond))
						return nil
					}()
				})
				fail(err)
			}
		}
		if want["enqueue"] {
			for _, g := range goroutines {
				for _, v := range order {
					if v.label == "river-fast" || v.label == "jobc-async" {
						continue // worker settings; "river" and "jobc" cover enqueueing
					}
					err := withEnv(ctx, v, g, func(e *bench.Env) error {
						var start string
						if *walFlag && run == 1 {
							var err error
							if start, err = bench.LSN(ctx, e.Pool); err != nil {
								return err
							}
						}
						var r bench.EnqueueResult
						err := profile(fmt.Sprintf("enqueue%d", g), run, v, func() (err error) {
							r, err = bench.Enqueue(ctx, e, bench.EnqueueOptions{Goroutines: g, Duration: *dur, Warmup: *warmup, Batch: 1})
							return err
						})
						if err != nil {
							return err
						}
						name := fmt.Sprintf("tx enqueue G=%d enqueues/s", g)
						t.add(name, v.label, r.Rate())
						t.addLower(fmt.Sprintf("  G=%d PG backend CPU µs/tx", g), v.label, us(r.CPU.PG)/float64(r.Txs))
						t.addLower(fmt.Sprintf("  G=%d Go process CPU µs/tx", g), v.label, us(r.CPU.Go)/float64(r.Txs))
						fmt.Fprintf(os.Stderr, "run %d %-10s %s %8.0f\n", run, v.label, name, r.Rate())
						if start != "" && v.sys != "none" {
							var n int64
							table := map[string]string{"jobc": "jobc_jobs", "river": "river_job", "sql": "sql_jobs", "sql-keep": "sql_jobs"}[v.sys]
							if err := e.Pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
								return err
							}
							rep, err := bench.WALSince(ctx, e.Pool, start)
							if err != nil {
								return err
							}
							printWAL(fmt.Sprintf("%s tx enqueue G=%d (business row + 1 job + commit), %d jobs", v.label, g, n), rep, int(n))
						}
						return nil
					})
					fail(err)
				}
			}
		}
		if want["batch"] {
			for _, v := range order {
				if v.label == "river-fast" || v.label == "jobc-async" || v.sys == "none" {
					continue
				}
				err := withEnv(ctx, v, *batchG, func(e *bench.Env) error {
					r, err := bench.Enqueue(ctx, e, bench.EnqueueOptions{Goroutines: *batchG, Duration: *dur, Warmup: *warmup, Batch: *batch})
					if err != nil {
						return err
					}
					name := fmt.Sprintf("tx batch enqueue G=%d x%d jobs/s", *batchG, *batch)
					t.add(name, v.label, r.Rate())
					t.addLower("  batch PG backend CPU µs/job", v.label, us(r.CPU.PG)/float64(r.Jobs))
					t.addLower("  batch Go process CPU µs/job", v.label, us(r.CPU.Go)/float64(r.Jobs))
					fmt.Fprintf(os.Stderr, "run %d %-10s %s %8.0f\n", run, v.label, name, r.Rate())
					return nil
				})
				fail(err)
			}
		}
		if want["latency"] {
			for _, v := range order {
				if v.sys == "none" || isCeiling(v.sys) {
					continue // sql has no notifications: its idle pickup is its poll interval
				}
				err := withEnv(ctx, v, *poolSize, func(e *bench.Env) error {
					r, err := bench.Latency(ctx, e, bench.LatencyOptions{Samples: *samples, Gap: *gap, Worker: v.wcfg})
					if err != nil {
						return err
					}
					t.addLower("idle commit→handler start p50 ms", v.label, ms(bench.Percentile(r.Start, 50)))
					t.addLower("idle commit→handler start p99 ms", v.label, ms(bench.Percentile(r.Start, 99)))
					t.addLower("idle commit→completion recorded p50 ms", v.label, ms(bench.Percentile(r.Recorded, 50)))
					t.addLower("idle commit→completion recorded p99 ms", v.label, ms(bench.Percentile(r.Recorded, 99)))
					fmt.Fprintf(os.Stderr, "run %d %-10s latency start p50 %.2fms p99 %.2fms recorded p50 %.2fms p99 %.2fms\n", run, v.label,
						ms(bench.Percentile(r.Start, 50)), ms(bench.Percentile(r.Start, 99)), ms(bench.Percentile(r.Recorded, 50)), ms(bench.Percentile(r.Recorded, 99)))
					return nil
				})
				fail(err)
			}
		}
	}
	fmt.Println()
	t.print(os.Stdout)
}

func withEnv(ctx context.Context, v variant, pool int, f func(*bench.Env) error) error {
	e, err := bench.Open(ctx, bench.NewSystem(v.sys), pool)
	if err != nil {
		return err
	}
	defer e.Close()
	return f(e)
}

func printWAL(title string, rep bench.WALReport, jobs int) {
	total, per := bench.WALReport.IndexEntries(rep, jobs)
	fmt.Printf("WAL — %s\n%s", title, rep.Format(jobs))
	fmt.Printf("  index insertions: %.2f/job", total)
	rels := make([]string, 0, len(per))
	for rel, n := range per {
		if n >= 0.01 {
			rels = append(rels, rel)
		}
	}
	sort.Strings(rels)
	for _, rel := range rels {
		fmt.Printf("  %s=%.2f", rel, per[rel])
	}
	fmt.Print("\n\n")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func reversed(vs []variant) []variant {
	out := make([]variant, len(vs))
	for i, v := range vs {
		out[len(vs)-1-i] = v
	}
	return out
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "race:", err)
		os.Exit(1)
	}
}
