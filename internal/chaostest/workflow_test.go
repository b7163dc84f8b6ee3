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

// TestWorkflowsUnderKillsAndRestart: 1,000 diamond workflows (a, then b and c, then
// d) run by three worker processes, one of which is SIGKILLed every 0.7 s and
// replaced, through a PostgreSQL restart. Every workflow completes; every step ran one completed job
// (attempts killed midway run again, as delivery at least once allows), started after
// the jobs of the steps it comes after completed (by the recorded times), with the
// payload its map makes of the input and its predecessors' results; nothing is lost.
func TestWorkflowsUnderKillsAndRestart(t *testing.T) {
	t.Parallel()
	cluster, pool, connString := newCluster(t)
	ctx := t.Context()
	const workflows, processes = 1000, 3
	step, err := chaosjob.NewStepType(chaosjob.DefaultQueue)
	if err != nil {
		t.Fatal(err)
	}
	diamond, err := chaosjob.Diamond(step)
	if err != nil {
		t.Fatal(err)
	}
	for i := range workflows {
		if _, err := runtime.StartWorkflow(ctx, pool, diamond, chaosjob.StepPayload{N: int64(i), SleepMS: int64(10 + i%30)}); err != nil {
			t.Fatal(err)
		}
	}
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
	kills, restarted := 0, false
	deadline := time.Now().Add(within(processStart, 4*workflows*25*time.Millisecond/(processes*4), 20*o.lease, o.statementTimeout))
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
	// One completed job per step, and no other job of any workflow.
	if bad := queryStrings(t, pool, `SELECT workflow_id || '.' || workflow_step || ': ' || string_agg(state::text, ',')
		FROM jobc_jobs_finished WHERE workflow_id IS NOT NULL GROUP BY workflow_id, workflow_step
		HAVING count(*) <> 1 OR bool_or(state <> 'completed') ORDER BY 1 LIMIT 10`); len(bad) > 0 {
		t.Errorf("steps that did not run one completed job: %q", bad)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE workflow_id IS NOT NULL`); n != 4*workflows {
		t.Errorf("%d jobs of workflows finished; want %d, four per workflow", n, 4*workflows)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs`); n != 0 {
		t.Errorf("%d jobs left unfinished", n)
	}
	// Every execution of a step began after its predecessors' jobs completed.
	if early := queryStrings(t, pool, `SELECT s.workflow_id || '.' || s.step || ' ran at ' || h.at || ', before ' || p.step || ' completed at ' || pj.finished_at
		FROM jobc_workflow_steps s
		JOIN jobc_workflow_steps p ON p.workflow_id = s.workflow_id AND p.step = ANY(s.after)
		JOIN jobc_jobs_finished pj ON pj.id = p.job_id
		JOIN handled h ON h.job_id = s.job_id
		WHERE h.at < pj.finished_at ORDER BY 1 LIMIT 10`); len(early) > 0 {
		t.Errorf("steps that ran before a step they come after completed: %q", early)
	}
	// Each step's payload is what its map makes: n, from the input through a's and
	// b's results.
	if n := queryInt(t, pool, `SELECT count(*) FROM jobc_jobs_finished j JOIN jobc_workflows w ON w.id = j.workflow_id
		WHERE j.payload->'n' IS DISTINCT FROM w.input->'n' OR j.payload->'sleep_ms' IS DISTINCT FROM w.input->'sleep_ms'
		   OR j.result->'n' IS DISTINCT FROM w.input->'n'`); n != 0 {
		t.Errorf("%d step jobs whose payload or result is not the input's n", n)
	}
	for _, w := range workers {
		if _, err := w.stop(w.opts.stopSlack()); err != nil {
			t.Error(err)
		}
	}
}
