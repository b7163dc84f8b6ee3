// Command flow measures jobc's fleet-wide flow control (issue 22) against its targets:
// that a limit's allowance is used (rate, concurrency), that fairness keeps small keys'
// waits short behind a big key, and that limits cost little when they do not bind, when
// many keys each bind, and with a large throttled backlog. It prints medians of several
// runs; ratios are taken within one run. See ../../README.md, "Flow control".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/bench"
	"github.com/jobc-dev/jobc/runtime"
)

func main() {
	var (
		only     = flag.String("only", "rate,concurrency,fair,burndown,keys,throttled", "measurements: rate, concurrency, fair, burndown, keys, throttled; or explain (one claim's plans), probe (leave a database to try claims in)")
		runs     = flag.Int("runs", 3, "runs of each measurement; the table shows medians")
		window   = flag.Duration("window", 10*time.Second, "rate, concurrency: measured time from the first handler call")
		poll     = flag.Duration("poll", time.Second, "Config.PollInterval")
		concPoll = flag.String("concurrency-polls", "1s,50ms", "concurrency: the poll intervals to measure")
		concWork = flag.Int("concurrency-workers", 4, "concurrency: workers in this process, 200 slots between them")
		bdJobs   = flag.String("burndown-jobs", "20000,100000", "burndown: jobs per burn-down")
		keysJobs = flag.Int("keys-jobs", 20000, "keys: jobs over 1,000 keys")
		throttle = flag.Int("throttled", 100000, "throttled: available jobs of the key at its limit")
		explain  = flag.String("explain", "", "explain: write auto_explain plans of one jobc_claim_flow call's statements to FILE")
		patch    = flag.String("patch", "", "run this SQL file in every fresh database after the migration (a patched jobc_claim_flow, say)")
		capFlag  = flag.Duration("cap", 20*time.Second, "burn-downs, fair, throttled: stop a measurement after this long and report what was done by then")
		fairSc   = flag.String("fair-scenarios", "absent,fair,fifo,fifo-absent", "fair: the scenarios to measure")
		probe    = flag.String("probe-db", "flowprobe", "probe: the database to leave behind")
		slow     = flag.Duration("slow", 0, "write auto_explain (ANALYZE) plans of every statement, nested ones included, that ran at least this long, to -slow-file")
		slowFile = flag.String("slow-file", "/tmp/flow-slow.txt", "where -slow writes")
		cpuProf  = flag.String("cpuprofile", "", "write a CPU profile of this process (workers and all) to FILE")
	)
	flag.Parse()
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		fail(err)
		fail(pprof.StartCPUProfile(f))
		defer func() { pprof.StopCPUProfile(); fail(f.Close()) }()
	}
	if *slow > 0 {
		f, err := os.Create(*slowFile)
		fail(err)
		defer f.Close()
		var mu sync.Mutex
		notify = func(n *pgconn.Notice) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(f, "-- %s\n%s\n\n", time.Now().Format("15:04:05.000"), n.Message)
		}
		for k, v := range map[string]string{
			"session_preload_libraries": "auto_explain", "auto_explain.log_min_duration": fmt.Sprint(slow.Milliseconds()),
			"auto_explain.log_analyze": "on", "auto_explain.log_buffers": "on", "auto_explain.log_level": "notice",
			"auto_explain.log_timing": "on", "auto_explain.log_nested_statements": "on",
		} {
			bench.SessionSettings[k] = v
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	bench.DropStale(ctx, bench.AdminURL())
	if *patch != "" {
		b, err := os.ReadFile(*patch)
		fail(err)
		patchSQL = string(b)
	}
	capAt = *capFlag
	want := map[string]bool{}
	for _, m := range strings.Split(*only, ",") {
		want[m] = true
	}
	t := &table{vals: map[string][]float64{}}
	up, _ := exec.Command("uptime").Output()
	fmt.Printf("settings: runs=%d window=%s poll=%s burndown-jobs=%s keys-jobs=%d throttled=%d cap=%s patch=%q; fetch batch 100, pool 20\nload at start: %s\n",
		*runs, *window, *poll, *bdJobs, *keysJobs, *throttle, *capFlag, *patch, strings.TrimSpace(string(up)))
	base := bench.WorkerConfig{Concurrency: 100, PollInterval: *poll, FetchBatch: 100}

	for run := 1; run <= *runs; run++ {
		if want["rate"] {
			// One key at 200 per second, and 50 keys at 20 per second each.
			for _, c := range []struct {
				name                string
				keys, limit, perKey int
			}{{"1 key × 200/s", 1, 200, 5000}, {"50 keys × 20/s", 50, 20, 400}} {
				r, err := rate(ctx, base, c.keys, c.limit, c.perKey, *window)
				fail(err)
				t.add(fmt.Sprintf("1a rate %s: starts / allowed", c.name), r)
				logf("run %d rate %s: %.3f of the limit", run, c.name, r)
			}
		}
		if want["concurrency"] {
			for _, p := range strings.Split(*concPoll, ",") {
				pi, err := time.ParseDuration(p)
				fail(err)
				w := base
				w.PollInterval = pi
				tracer.take()
				at, mean, db, err := concurrency(ctx, w, *concWork, *window)
				fail(err)
				cs := tracer.take()
				name := fmt.Sprintf("1b concurrency 20 keys × 2, %d workers, poll %s: ", *concWork, p)
				t.add(name+"time at the limit (handlers)", at)
				t.add(name+"mean running / limit (handlers)", mean)
				t.add(name+"samples at the limit (database)", float64(db.atLimit)/float64(db.n))
				t.add(name+"mean running / limit (database)", float64(db.sum)/float64(db.n)/40)
				t.add(name+"jobc_claim_flow calls/s", float64(cs.calls)/window.Seconds())
				t.add(name+"jobc_claim_flow mean ms", cs.meanMS())
				logf("run %d concurrency poll %s: at limit %.3f of the time, mean %.3f of the limit; database: %.3f of samples at the limit, mean %.3f; %s",
					run, p, at, mean, float64(db.atLimit)/float64(db.n), float64(db.sum)/float64(db.n)/40, cs)
			}
		}
		if want["fair"] {
			order := strings.Split(*fairSc, ",")
			if run%2 == 0 {
				slices.Reverse(order)
			}
			p99 := map[string]float64{}
			for _, sc := range order {
				ws, err := fair(ctx, base, sc)
				fail(err)
				p99[sc] = ms(bench.Percentile(ws, 99))
				t.add("2 fair: small keys' wait p50 ms, "+sc, ms(bench.Percentile(ws, 50)))
				t.add("2 fair: small keys' wait p99 ms, "+sc, p99[sc])
				logf("run %d fair %-11s small keys' wait p50 %s p99 %s max %s", run, sc, bench.Percentile(ws, 50), bench.Percentile(ws, 99), bench.Percentile(ws, 100))
			}
			if p99["absent"] > 0 && p99["fair"] > 0 {
				t.add("2 fair: p99 with the big key / without (fair)", p99["fair"]/p99["absent"])
			}
			if p99["fifo-absent"] > 0 && p99["fifo"] > 0 {
				t.add("2 fair: p99 with the big key / without (fifo)", p99["fifo"]/p99["fifo-absent"])
			}
		}
		if want["burndown"] {
			for _, js := range strings.Split(*bdJobs, ",") {
				var n int
				_, err := fmt.Sscan(js, &n)
				fail(err)
				rates, err := burndowns(ctx, t, fmt.Sprintf("3a burn-down %d", n), run, n, base, []sysVariant{
					{"plain", nil, 100},
					{"kind100k", &runtime.Flow{Concurrency: 100000}, 100},
					{"key1m", &runtime.Flow{By: []string{"key"}, Concurrency: 1000000}, 100},
				})
				fail(err)
				t.add(fmt.Sprintf("3a burn-down %d: kind concurrency 100,000 / none", n), rates["kind100k"]/rates["plain"])
				t.add(fmt.Sprintf("3a burn-down %d: by key (100 keys) concurrency 1,000,000 / none", n), rates["key1m"]/rates["plain"])
			}
		}
		if want["keys"] {
			rates, err := burndowns(ctx, t, fmt.Sprintf("3b burn-down %d over 1,000 keys", *keysJobs), run, *keysJobs, base, []sysVariant{
				{"plain", nil, 1000},
				{"key1", &runtime.Flow{By: []string{"key"}, Concurrency: 1}, 1000},
			})
			fail(err)
			t.add("3b 1,000 keys × concurrency 1 / none", rates["key1"]/rates["plain"])
		}
		if want["throttled"] {
			order := []int{0, *throttle}
			if run%2 == 0 {
				slices.Reverse(order)
			}
			rates := map[int]float64{}
			for _, n := range order {
				r, err := throttled(ctx, base, n)
				fail(err)
				rates[n] = r.rate
				t.add(fmt.Sprintf("3c other keys' jobs/s, %d throttled jobs waiting", n), r.rate)
				t.add(fmt.Sprintf("3c PG CPU µs per other key's job, %d throttled", n), us(r.cpu.PG)/float64(r.jobs))
				t.add(fmt.Sprintf("3c jobc_claim_flow mean ms per call, %d throttled", n), r.claimMS)
				logf("run %d throttled %d: other keys %.0f jobs/s, PG %.1f µs/job, claim %.3f ms/call", run, n, r.rate, us(r.cpu.PG)/float64(r.jobs), r.claimMS)
			}
			t.add("3c other keys' jobs/s with / without the throttled backlog", rates[*throttle]/rates[0])
		}
	}
	if want["probe"] {
		fail(probeDB(ctx, *probe))
		return
	}
	if want["explain"] {
		fail(explainClaim(ctx, *throttle, *explain))
	}
	up, _ = exec.Command("uptime").Output()
	fmt.Printf("load at end: %s\n\n", strings.TrimSpace(string(up)))
	t.print(os.Stdout)
}

// rate measures, with a backlog, the starts of keys keys each limited to limit per
// second within window from the first start, as a share of what the limit allows.
func rate(ctx context.Context, w bench.WorkerConfig, keys, limit, perKey int, window time.Duration) (float64, error) {
	jt := bench.FlowJobType(&runtime.Flow{By: []string{"key"}, Rate: runtime.Rate{Limit: limit, Per: time.Second}}, nil)
	var res float64
	err := withEnv(ctx, "flow_rate", func(e *bench.Env) error {
		if err := bench.EnqueueFlow(ctx, e.Pool, jt, keys*perKey, func(i int) string { return bench.FlowKey(i, keys) }); err != nil {
			return err
		}
		if _, err := e.Pool.Exec(ctx, "ANALYZE jobc_jobs"); err != nil {
			return err
		}
		var mu sync.Mutex
		var starts []time.Time
		stop, err := bench.StartFlowWorkers(ctx, e.Pool, jt, 1, w, func(context.Context, *runtime.Job, bench.FlowPayload) error {
			now := time.Now()
			mu.Lock()
			starts = append(starts, now)
			mu.Unlock()
			return nil
		})
		if err != nil {
			return err
		}
		defer func() { _ = stop() }() // on an early return; the run stops them itself and checks the error
		t0, err := waitFirst(ctx, &mu, &starts)
		if err != nil {
			return err
		}
		time.Sleep(time.Until(t0.Add(window + time.Second)))
		if err := stop(); err != nil {
			return err
		}
		// Count starts as the limit does: by the attempted_at the claims gave the jobs
		// (handler calls lag them, by more at start-up than later).
		rows, err := e.Pool.Query(ctx, `SELECT flow_key, attempted_at FROM jobc_jobs WHERE attempted_at IS NOT NULL
			UNION ALL SELECT flow_key, attempted_at FROM jobc_jobs_finished WHERE attempted_at IS NOT NULL ORDER BY 2`)
		if err != nil {
			return err
		}
		byKey := map[string][]time.Time{}
		var all []time.Time
		for rows.Next() {
			var k string
			var at time.Time
			if err := rows.Scan(&k, &at); err != nil {
				return err
			}
			byKey[k] = append(byKey[k], at)
			all = append(all, at)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(all) == 0 {
			return fmt.Errorf("rate: no job started")
		}
		n := 0
		for _, at := range all {
			if at.Before(all[0].Add(window)) {
				n++
			}
		}
		res = float64(n) / (float64(keys*limit) * window.Seconds())
		// The most starts of one key in any window of a second: at most the limit.
		most := 0
		for _, ts := range byKey {
			j := 0
			for i := range ts {
				for ts[i].Sub(ts[j]) >= time.Second {
					j++
				}
				most = max(most, i-j+1)
			}
		}
		if most > limit {
			logf("rate: LIMIT EXCEEDED: %d starts of one key within a second, limit %d", most, limit)
		}
		return nil
	})
	return res, err
}

// waitFirst waits for the first of starts, appended under mu, and returns it.
func waitFirst(ctx context.Context, mu *sync.Mutex, starts *[]time.Time) (time.Time, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		var first time.Time
		if len(*starts) > 0 {
			first = (*starts)[0]
		}
		mu.Unlock()
		if !first.IsZero() {
			return first, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("no job started within 30s")
		}
		time.Sleep(time.Millisecond)
	}
}

// concurrency runs 20 keys limited to 2 jobs at once each, with a backlog, handlers
// sleeping 20ms, on workers in this process sharing 200 slots (4 × 50 by default), and returns the share of
// window (from the first start) during which 40 handlers ran, and the mean number
// running as a share of 40.
func concurrency(ctx context.Context, w bench.WorkerConfig, workers int, window time.Duration) (atLimit, mean float64, db dbSamples, err error) {
	const keys, limit, perKey, sleep = 20, 2, 1500, 20 * time.Millisecond
	jt := bench.FlowJobType(&runtime.Flow{By: []string{"key"}, Concurrency: limit}, nil)
	w.Concurrency = 200 / workers
	err = withEnv(ctx, "flow_conc", func(e *bench.Env) error {
		if err := bench.EnqueueFlow(ctx, e.Pool, jt, keys*perKey, func(i int) string { return bench.FlowKey(i, keys) }); err != nil {
			return err
		}
		if _, err := e.Pool.Exec(ctx, "ANALYZE jobc_jobs"); err != nil {
			return err
		}
		type ev struct {
			at    time.Time
			delta int
		}
		var mu sync.Mutex
		var evs []ev
		var starts []time.Time
		stop, err := bench.StartFlowWorkers(ctx, e.Pool, jt, workers, w, func(ctx context.Context, _ *runtime.Job, _ bench.FlowPayload) error {
			now := time.Now()
			mu.Lock()
			evs = append(evs, ev{now, 1})
			starts = append(starts, now)
			mu.Unlock()
			time.Sleep(sleep)
			mu.Lock()
			evs = append(evs, ev{time.Now(), -1})
			mu.Unlock()
			return nil
		})
		if err != nil {
			return err
		}
		defer func() { _ = stop() }() // on an early return; the run stops them itself and checks the error
		t0, err := waitFirst(ctx, &mu, &starts)
		if err != nil {
			return err
		}
		// The running jobs as the database counts them (what the claims see), sampled
		// every 10ms over the window.
		for time.Now().Before(t0.Add(window)) {
			var n int
			if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM jobc_jobs WHERE state = 'running'`).Scan(&n); err != nil {
				return err
			}
			db.n++
			db.sum += n
			if n >= keys*limit {
				db.atLimit++
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Until(t0.Add(window + 100*time.Millisecond)))
		mu.Lock()
		es := slices.Clone(evs)
		mu.Unlock()
		slices.SortStableFunc(es, func(a, b ev) int { return a.at.Compare(b.at) })
		end := t0.Add(window)
		running, at, area := 0, time.Duration(0), 0.0
		prev := t0
		for _, x := range es {
			if x.at.After(end) {
				break
			}
			if !x.at.Before(t0) {
				d := x.at.Sub(prev)
				if running >= keys*limit {
					at += d
				}
				area += float64(running) * d.Seconds()
				prev = x.at
			}
			running += x.delta
		}
		if d := end.Sub(prev); d > 0 {
			if running >= keys*limit {
				at += d
			}
			area += float64(running) * d.Seconds()
		}
		atLimit = at.Seconds() / window.Seconds()
		mean = area / window.Seconds() / float64(keys*limit)
		return stop()
	})
	return atLimit, mean, db, err
}

// dbSamples are samples of the number of running jobs as the database counts them.
type dbSamples struct{ n, sum, atLimit int }

// fair enqueues 100 small keys' 10 jobs each to a worker of 100 slots (handlers
// sleeping 3ms) 1s after it started, and returns the small jobs' waits from their
// enqueue to their handler's start. scenario: "absent" (fair kind, no big key), "fair"
// (fair kind, 50,000 jobs of one big key enqueued before the worker started), "fifo"
// (no flow control, the big key's jobs first), "fifo-absent".
func fair(ctx context.Context, w bench.WorkerConfig, scenario string) ([]time.Duration, error) {
	const big, smallKeys, perSmall, sleep = 50000, 100, 10, 3 * time.Millisecond
	var flow *runtime.Flow
	if scenario == "absent" || scenario == "fair" {
		flow = &runtime.Flow{By: []string{"key"}, Fair: true}
	}
	jt := bench.FlowJobType(flow, nil)
	var waits []time.Duration
	err := withEnv(ctx, "flow_fair", func(e *bench.Env) error {
		if scenario == "fair" || scenario == "fifo" {
			if err := bench.EnqueueFlow(ctx, e.Pool, jt, big, func(int) string { return "big" }); err != nil {
				return err
			}
		}
		if _, err := e.Pool.Exec(ctx, "ANALYZE jobc_jobs"); err != nil {
			return err
		}
		var mu sync.Mutex
		var got []time.Duration
		var enqueued time.Time
		var left atomic.Int64
		left.Store(smallKeys * perSmall)
		done := make(chan struct{})
		stop, err := bench.StartFlowWorkers(ctx, e.Pool, jt, 1, w, func(ctx context.Context, _ *runtime.Job, p bench.FlowPayload) error {
			if p.Key != "big" {
				now := time.Now()
				mu.Lock()
				got = append(got, now.Sub(enqueued))
				mu.Unlock()
				if left.Add(-1) == 0 {
					close(done)
				}
			}
			time.Sleep(sleep)
			return nil
		})
		if err != nil {
			return err
		}
		defer func() { _ = stop() }() // a failure to stop changes nothing measured
		time.Sleep(time.Second)
		mu.Lock()
		enqueued = time.Now()
		mu.Unlock()
		// Interleaved: job i of the batch is key i % 100.
		if err := bench.EnqueueFlow(ctx, e.Pool, jt, smallKeys*perSmall, func(i int) string { return fmt.Sprintf("s%03d", i%smallKeys) }); err != nil {
			return err
		}
		select {
		case <-done:
		case <-time.After(capAt):
			// The jobs not started yet have waited at least this long.
			mu.Lock()
			for range left.Load() {
				got = append(got, time.Since(enqueued))
			}
			mu.Unlock()
			logf("fair %s: CAPPED: %d small jobs not started after %s", scenario, left.Load(), capAt)
		}
		mu.Lock()
		defer mu.Unlock()
		waits = slices.Clone(got)
		return nil
	})
	return waits, err
}

type sysVariant struct {
	label string
	flow  *runtime.Flow
	keys  int
}

// burndowns burns n jobs down with each variant (in alternating order) and adds rates
// and CPU per job to t; it returns the rates.
func burndowns(ctx context.Context, t *table, name string, run, n int, w bench.WorkerConfig, vs []sysVariant) (map[string]float64, error) {
	if run%2 == 0 {
		vs = slices.Clone(vs)
		slices.Reverse(vs)
	}
	rates := map[string]float64{}
	for _, v := range vs {
		sys := &bench.FlowJobc{Label: "flow_" + v.label, JT: bench.FlowJobType(v.flow, nil), Keys: v.keys}
		e, err := open(ctx, sys)
		if err != nil {
			return nil, err
		}
		r, err := burnDown(ctx, e, sys, n, w)
		e.Close()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", name, v.label, err)
		}
		rates[v.label] = r.rate
		t.add(fmt.Sprintf("%s jobs/s, %s", name, v.label), r.rate)
		t.add(fmt.Sprintf("%s PG CPU µs/job, %s", name, v.label), us(r.cpu.PG)/float64(r.handled))
		t.add(fmt.Sprintf("%s Go CPU µs/job, %s", name, v.label), us(r.cpu.Go)/float64(r.handled))
		capped := ""
		if r.handled < n {
			capped = fmt.Sprintf(" CAPPED: %d of %d jobs in %s", r.handled, n, capAt)
		}
		logf("run %d %s %-8s %8.0f jobs/s, PG %.1f µs/job, Go %.1f µs/job; %s%s", run, name, v.label, r.rate, us(r.cpu.PG)/float64(r.handled), us(r.cpu.Go)/float64(r.handled), tracer.take(), capped)
	}
	return rates, nil
}

type burnResult struct {
	handled int
	rate    float64 // jobs per second from the first handler call
	cpu     bench.CPU
}

// burnDown is bench.BurnDown with a cap: it inserts n jobs, starts one worker with a
// no-op handler and measures from the first handler call until every completion is
// recorded, or, if that takes longer than capAt, the jobs handled by then.
func burnDown(ctx context.Context, e *bench.Env, sys *bench.FlowJobc, n int, w bench.WorkerConfig) (burnResult, error) {
	var res burnResult
	if err := sys.BulkInsert(ctx, e.Pool, n); err != nil {
		return res, err
	}
	if _, err := e.Pool.Exec(ctx, "ANALYZE jobc_jobs"); err != nil {
		return res, err
	}
	tracer.take()
	meter, err := bench.StartCPU(ctx, e.Pool)
	if err != nil {
		return res, err
	}
	var handled, first atomic.Int64
	all := make(chan struct{})
	stop, err := bench.StartFlowWorkers(ctx, e.Pool, sys.JT, 1, w, func(context.Context, *runtime.Job, bench.FlowPayload) error {
		first.CompareAndSwap(0, time.Now().UnixNano())
		if handled.Add(1) == int64(n) {
			close(all)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	defer func() { _ = stop() }() // on an early return; the run stops them itself and checks the error
	capped := time.NewTimer(capAt)
	defer capped.Stop()
	select {
	case <-all:
		for {
			p, err := sys.Pending(ctx, e.Pool)
			if err != nil {
				return res, err
			}
			if p == 0 {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	case <-capped.C:
	}
	end := time.Now()
	res.handled = int(handled.Load())
	if res.handled == 0 {
		return res, fmt.Errorf("no job ran within %s", capAt)
	}
	if res.cpu, err = meter.Since(ctx); err != nil {
		return res, err
	}
	res.rate = float64(res.handled) / end.Sub(time.Unix(0, first.Load())).Seconds()
	return res, stop()
}

type throttledResult struct {
	jobs    int
	rate    float64
	cpu     bench.CPU
	claimMS float64
}

// throttled: 100 keys with 200 no-op jobs each and one key "hot" (sorting before them)
// at its concurrency limit of 5, whose 5 running jobs block until the end, with
// waiting jobs of its own behind them; every key is limited to 5 at once, which never
// binds the others (100 slots). It returns how fast the other keys' jobs burn down
// (first start to last handler return) and the PG CPU per job; claimMS is the mean
// time of a jobc_claim_flow call as the worker saw it.
func throttled(ctx context.Context, w bench.WorkerConfig, waiting int) (throttledResult, error) {
	const keys, perKey, limit = 100, 200, 5
	jt := bench.FlowJobType(&runtime.Flow{By: []string{"key"}, Concurrency: limit}, nil)
	res := throttledResult{jobs: keys * perKey}
	err := withEnv(ctx, "flow_thr", func(e *bench.Env) error {
		if err := bench.EnqueueFlow(ctx, e.Pool, jt, limit+waiting, func(int) string { return "hot" }); err != nil {
			return err
		}
		if err := bench.EnqueueFlow(ctx, e.Pool, jt, keys*perKey, func(i int) string { return bench.FlowKey(i, keys) }); err != nil {
			return err
		}
		if _, err := e.Pool.Exec(ctx, "ANALYZE jobc_jobs"); err != nil {
			return err
		}
		tracer.take()
		meter, err := bench.StartCPU(ctx, e.Pool)
		if err != nil {
			return err
		}
		release := make(chan struct{})
		var first, last atomic.Int64
		var left atomic.Int64
		left.Store(int64(res.jobs))
		done := make(chan struct{})
		stop, err := bench.StartFlowWorkers(ctx, e.Pool, jt, 1, w, func(ctx context.Context, _ *runtime.Job, p bench.FlowPayload) error {
			if p.Key == "hot" {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}
			first.CompareAndSwap(0, time.Now().UnixNano())
			if left.Add(-1) == 0 {
				last.Store(time.Now().UnixNano())
				close(done)
			}
			return nil
		})
		if err != nil {
			return err
		}
		defer func() { _ = stop() }() // on an early return; the run stops them itself and checks the error
		select {
		case <-done:
		case <-time.After(capAt):
			last.Store(time.Now().UnixNano())
			logf("throttled %d: CAPPED: %d of the other keys' jobs left after %s", waiting, left.Load(), capAt)
		}
		if res.cpu, err = meter.Since(ctx); err != nil {
			return err
		}
		res.jobs -= int(max(left.Load(), 0))
		res.rate = float64(res.jobs) / time.Duration(last.Load()-first.Load()).Seconds()
		res.claimMS = tracer.take().meanMS()
		close(release)
		return stop()
	})
	return res, err
}

// explainClaim sets up the throttled measurement's database (without running any
// worker: the hot key's 5 jobs are made running by hand) and writes the auto_explain
// plans of the statements of one jobc_claim_flow call, rolled back.
func explainClaim(ctx context.Context, waiting int, file string) error {
	const keys, perKey, limit = 100, 200, 5
	jt := bench.FlowJobType(&runtime.Flow{By: []string{"key"}, Concurrency: limit}, nil)
	out := io.Writer(os.Stdout)
	if file != "" {
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	return withEnv(ctx, "flow_expl", func(e *bench.Env) error {
		if err := bench.EnqueueFlow(ctx, e.Pool, jt, limit+waiting, func(int) string { return "hot" }); err != nil {
			return err
		}
		if err := bench.EnqueueFlow(ctx, e.Pool, jt, keys*perKey, func(i int) string { return bench.FlowKey(i, keys) }); err != nil {
			return err
		}
		// The limits a worker would register, and the hot key's jobs at its limit.
		if _, err := e.Pool.Exec(ctx, `INSERT INTO jobc_limits (scope, name, by_fields, spec_concurrency) VALUES ('kind', 'bench_flow', '{key}', $1)`, limit); err != nil {
			return err
		}
		if _, err := e.Pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, attempted_at = now(), lease_owner = 'x', lease_expires_at = now() + interval '1 hour'
			WHERE id IN (SELECT id FROM jobc_jobs WHERE flow_key = '["hot"]' ORDER BY id LIMIT $1)`, limit); err != nil {
			return err
		}
		if _, err := e.Pool.Exec(ctx, "ANALYZE jobc_jobs"); err != nil {
			return err
		}
		conn, err := e.Pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		for _, after := range []string{"", `["k0050"]`} {
			for _, s := range []string{"SET plan_cache_mode = force_generic_plan", "SET jit = off", "LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_analyze = on",
				"SET auto_explain.log_buffers = on", "SET auto_explain.log_nested_statements = on", "SET auto_explain.log_level = notice", "SET auto_explain.log_timing = on", "BEGIN"} {
				if _, err := conn.Exec(ctx, s); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "==== jobc_claim_flow(max 100, after %q), %d throttled jobs of key hot\n", after, waiting)
			notify = func(n *pgconn.Notice) { fmt.Fprintf(out, "%s\n\n", n.Message) }
			rows, err := conn.Query(ctx, `SELECT id FROM jobc_claim_flow('default', '{bench_flow}', '{bench_flow}', '{1}', '{1}', ARRAY[$1::text], 'x', 30, 100)`, after)
			if err != nil {
				return err
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			notify = nil
			fmt.Fprintf(out, "---- claimed %d\n\n", n)
			if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
				return err
			}
		}
		return nil
	})
}

// probeDB leaves behind a database named name for trying jobc_claim_flow by hand:
// the concurrency measurement's 20 keys × 1,500 jobs limited to 2 at once, analyzed,
// with the limits a worker registers. Drop it when done.
func probeDB(ctx context.Context, name string) error {
	const keys, perKey, limit = 20, 1500, 2
	jt := bench.FlowJobType(&runtime.Flow{By: []string{"key"}, Concurrency: limit}, nil)
	db, err := bench.NewDB(ctx, bench.AdminURL(), "probe")
	if err != nil {
		return err
	}
	pool, err := bench.NewPool(ctx, db.URL, 4)
	if err != nil {
		return err
	}
	err = func() error {
		if _, err := runtime.Migrate(ctx, pool); err != nil {
			return err
		}
		if err := bench.EnqueueFlow(ctx, pool, jt, keys*perKey, func(i int) string { return bench.FlowKey(i, keys) }); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, `INSERT INTO jobc_limits (scope, name, by_fields, spec_concurrency) VALUES ('kind', 'bench_flow', '{key}', $1)`, limit); err != nil {
			return err
		}
		_, err := pool.Exec(ctx, "ANALYZE jobc_jobs")
		return err
	}()
	pool.Close()
	if err != nil {
		_ = db.Drop()
		return err
	}
	conn, err := pgx.Connect(ctx, bench.AdminURL())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{db.Name}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize())
	logf("left database %s", name)
	return err
}

// notify receives the notices of every connection while set (explain).
var notify func(*pgconn.Notice)

// tracer times every jobc_claim_flow call (bench.Tracer).
var tracer = &claimTracer{debug: os.Getenv("FLOW_DEBUG") != ""}

func init() {
	bench.Tracer = tracer
	bench.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if f := notify; f != nil {
			f(n)
		}
	}
}

// withEnv runs f in a fresh, migrated database named after label.
func withEnv(ctx context.Context, label string, f func(*bench.Env) error) error {
	e, err := open(ctx, &bench.FlowJobc{Label: label})
	if err != nil {
		return err
	}
	defer e.Close()
	return f(e)
}

// patchSQL runs in every fresh database after the migration (-patch).
var patchSQL string

// capAt is how long a burn-down, a fair run or a throttled run may take (-cap).
var capAt time.Duration

// open opens a fresh database for sys and applies -patch.
func open(ctx context.Context, sys bench.System) (*bench.Env, error) {
	e, err := bench.Open(ctx, sys, 20)
	if err != nil {
		return nil, err
	}
	if patchSQL != "" {
		if _, err := e.Pool.Exec(ctx, patchSQL); err != nil {
			e.Close()
			return nil, fmt.Errorf("-patch: %w", err)
		}
	}
	return e, nil
}

type table struct {
	order []string
	vals  map[string][]float64
}

func (t *table) add(name string, v float64) {
	if _, ok := t.vals[name]; !ok {
		t.order = append(t.order, name)
	}
	t.vals[name] = append(t.vals[name], v)
}

func (t *table) print(w io.Writer) {
	fmt.Fprintf(w, "| measurement | median | runs |\n|---|---:|---|\n")
	for _, name := range t.order {
		vs := t.vals[name]
		runs := make([]string, len(vs))
		for i, v := range vs {
			runs[i] = num(v)
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", name, num(bench.Median(vs)), strings.Join(runs, ", "))
	}
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "flow:", err)
		os.Exit(1)
	}
}
