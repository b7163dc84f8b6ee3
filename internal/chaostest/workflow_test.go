//go:build unix

package chaostest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// TestWorkflowsUnderKillsAndRestart: 1,000 fulfil_order-shaped workflows
// (chaosjob.Order: a, then a wait for signal paid and c side by side, b after the
// signal, a for_each of 5 items after c, then d after b and the items) run by three
// worker processes, one of which is SIGKILLed every 0.7 s and replaced, through a
// PostgreSQL restart, while the test sends each workflow its signal at a random
// moment: a third before any worker runs (before their wait steps begin to wait), the
// rest during the run. Every workflow completes; every step and item ran one completed
// job (attempts killed midway run again, as delivery at least once allows), started
// after the steps it comes after completed (by the recorded times), with the payload
// its map makes of the input, the item, the signal and its predecessors' results;
// each fan-in step ran once; nothing is lost.
func TestWorkflowsUnderKillsAndRestart(t *testing.T) {
	t.Parallel()
	cluster, pool, connString := newCluster(t)
	ctx := t.Context()
	const workflows, processes, items = 1000, 3, 5
	step, err := chaosjob.NewStepType(chaosjob.DefaultQueue)
	if err != nil {
		t.Fatal(err)
	}
	order, err := chaosjob.Order(step)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]runtime.WorkflowID, workflows)
	for i := range workflows {
		in := chaosjob.OrderInput{N: int64(i), SleepMS: int64(10 + i%30)}
		for k := range items {
			in.Items = append(in.Items, int64(i*10+k))
		}
		if ids[i], err = runtime.StartWorkflow(ctx, pool, order, in); err != nil {
			t.Fatal(err)
		}
	}
	signal := func(i int) error {
		return runtime.SignalWorkflow(ctx, pool, order, ids[i], "paid", chaosjob.PaidSignal{N: int64(i)})
	}
	late := rand.Perm(workflows)
	early := late[:workflows/3]
	late = late[workflows/3:]
	for _, i := range early {
		if err := signal(i); err != nil {
			t.Fatal(err)
		}
	}
	// The others, one at a time at random moments of the run, each until it is
	// delivered (the restart makes some attempts fail).
	signalled := make(chan error, 1)
	go func() {
		for _, i := range late {
			time.Sleep(time.Duration(rand.IntN(8)) * time.Millisecond)
			for tries := 0; ; tries++ {
				err := signal(i)
				if err == nil {
					break
				}
				if tries > 100 || ctx.Err() != nil {
					signalled <- fmt.Errorf("signal to workflow %d: %w", ids[i], err)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		signalled <- nil
	}()
	o := workerOpts{connString: connString, concurrency: 4, lease: 2 * time.Second, rescueInterval: 200 * time.Millisecond}
	started := 0
	next := func() *workerProc {
		o.id = fmt.Sprintf("wf-%02d", started)
		started++
		return startWorker(t, o)
	}
	workers := make([]*workerProc, processes)
	for i := range workers {
		workers[i] = next()
	}
	o = workers[0].opts
	ended := func() (int, error) {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM jobc_workflows WHERE state <> 'running'`).Scan(&n)
		return n, err
	}
	jobs := 4 + items // per workflow
	kills, restarted := 0, false
	deadline := time.Now().Add(within(processStart, time.Duration(jobs*workflows)*25*time.Millisecond/(processes*4), 20*o.lease, o.statementTimeout))
	for {
		n, err := ended()
		if err == nil && n == workflows {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workflows ended after %d kills (restarted: %v): %s", n, workflows, kills, restarted, stateCounts(t, pool))
		}
		time.Sleep(700 * time.Millisecond)
		if !restarted && err == nil && n >= workflows/3 {
			if err := cluster.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			pool.Reset()
			restarted = true
			t.Logf("restarted PostgreSQL with %d workflows ended", n)
			continue
		}
		i := rand.IntN(len(workers))
		workers[i].kill(t)
		workers[i] = next()
		kills++
	}
	if err := <-signalled; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d workflows ended after %d kills and a restart (%v); %d executions of %d step jobs, %d cut off", workflows, kills, restarted,
		queryInt(t, pool, `SELECT count(*) FROM handled`), queryInt(t, pool, `SELECT count(DISTINCT job_id) FROM handled`),
		queryInt(t, pool, `SELECT count(*) FROM handled WHERE ended_at IS NULL`))
	if !restarted {
		t.Error("the workflows ended before the restart: nothing was tested across it")
	}

	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workflows WHERE state = 'completed' AND steps_left = 0`); n != workflows {
		t.Errorf("%d of %d workflows completed", n, workflows)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workflow_steps WHERE state <> 'completed'`); n != 0 {
		t.Errorf("%d steps not completed", n)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workflow_steps`); n != len(order.Steps)*workflows {
		t.Errorf("%d rows of steps; want %d, one per step of each workflow", n, len(order.Steps)*workflows)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workflows WHERE jobs <> '{}'`); n != 0 {
		t.Errorf("%d ended workflows still name jobs as running", n)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workflow_items WHERE state = 'completed'`); n != items*workflows {
		t.Errorf("%d items completed; want %d", n, items*workflows)
	}
	// One completed job per job step and per item, and no other job of any workflow.
	if bad := queryStrings(t, pool, `SELECT workflow_id || '.' || workflow_step || coalesce('#' || workflow_item, '') || ': ' || string_agg(state::text, ',')
		FROM jobc_jobs_finished WHERE workflow_id IS NOT NULL GROUP BY workflow_id, workflow_step, workflow_item
		HAVING count(*) <> 1 OR bool_or(state <> 'completed') ORDER BY 1 LIMIT 10`); len(bad) > 0 {
		t.Errorf("steps that did not run one completed job: %q", bad)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE workflow_id IS NOT NULL`); n != jobs*workflows {
		t.Errorf("%d jobs of workflows finished; want %d, %d per workflow", n, jobs*workflows, jobs)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left unfinished", n)
	}
	// Every execution of a step's jobs began after the steps it comes after had
	// completed (a for_each step when its last item did, a wait when its signal came).
	if early := queryStrings(t, pool, `SELECT s.workflow_id || '.' || s.step || ' ran at ' || h.at || ', before ' || p.step || ' completed at ' || p.finished_at
		FROM jobc_workflow_steps s
		JOIN jobc_workflows w ON w.id = s.workflow_id
		JOIN jobc_workflow_definitions d ON d.id = w.definition_id
		JOIN jsonb_array_elements(d.definition->'steps') e ON e->>'name' = s.step
		JOIN jobc_workflow_steps p ON p.workflow_id = s.workflow_id AND e->'after' ? p.step
		JOIN jobc_jobs_finished j ON j.workflow_id = s.workflow_id AND j.workflow_step = s.step
		JOIN handled h ON h.job_id = j.id
		WHERE h.at < p.finished_at ORDER BY 1 LIMIT 10`); len(early) > 0 {
		t.Errorf("steps that ran before a step they come after completed: %q", early)
	}
	// A step's finish time is its job's, or its last item's.
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workflow_steps s WHERE s.finished_at < coalesce(
		(SELECT j.finished_at FROM jobc_jobs_finished j WHERE j.id = s.job_id),
		(SELECT max(i.finished_at) FROM jobc_workflow_items i WHERE i.workflow_id = s.workflow_id AND i.step = s.step), s.finished_at)`); n != 0 {
		t.Errorf("%d steps recorded as completed before their jobs were", n)
	}
	// Each job's payload is what its map makes: n, from the input through a's result,
	// the signal and b's result; an item's from its item; the signal taken once.
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished j JOIN jobc_workflows w ON w.id = j.workflow_id
		WHERE j.payload->'n' IS DISTINCT FROM CASE WHEN j.workflow_item IS NULL THEN w.input->'n' ELSE w.input->'items'->j.workflow_item END
		   OR j.payload->'sleep_ms' IS DISTINCT FROM w.input->'sleep_ms' OR j.result->'n' IS DISTINCT FROM j.payload->'n'`); n != 0 {
		t.Errorf("%d step jobs whose payload or result is not what their map makes", n)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_workflows w
		WHERE (SELECT count(*) FROM jobc_workflow_signals g WHERE g.workflow_id = w.id) <> 1
		   OR (SELECT s.result->'n' FROM jobc_workflow_steps s WHERE s.workflow_id = w.id AND s.step = 'pay') IS DISTINCT FROM w.input->'n'
		   OR jsonb_array_length((SELECT s.result FROM jobc_workflow_steps s WHERE s.workflow_id = w.id AND s.step = 'pack')) <> $1`, items); n != 0 {
		t.Errorf("%d workflows without one signal taken by pay, or without %d results of pack", n, items)
	}
	for _, w := range workers {
		if _, err := w.stop(w.opts.stopSlack()); err != nil {
			t.Error(err)
		}
	}
}
