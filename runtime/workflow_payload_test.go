package runtime_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// firstStepsMapping is a workflow whose first steps read the input at every kind of
// path: a member, a nested member, a list's element by index (from the start and
// from the end), through a list, past a list's end, past a scalar, the whole input,
// and a missing member.
var firstStepsMapping = map[string]map[string]string{
	"members": {"a": "input.a", "ab": "input.a.b", "none": "input.none", "all": "input"},
	"lists":   {"first": "input.l.0", "last": "input.l.-1", "deep": "input.l.1.x", "past": "input.l.9", "before": "input.l.-9"},
	"scalars": {"through": "input.n.x", "n": "input.n", "null": "input.z", "nullpast": "input.z.y"},
	// Parts a list's index is read from as C's strtol reads them (or an object's
	// member named so).
	"odd": {"zero": "input.o.01", "minus": "input.o.-0", "plus": "input.o.+1", "space": "input.o. 1",
		"tab": "input.o.\t2", "after": "input.o.1 ", "big": "input.o.2147483648", "least": "input.o.-2147483648",
		"word": "input.o.x"},
}

func mappingWorkflow(t testing.TB, names ...string) *runtime.WorkflowType {
	t.Helper()
	jt := runtime.MustJobType(runtime.JobType{Kind: "mapped", Queue: "q", Priority: 5, MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{}`}}})
	wt := runtime.WorkflowType{Name: "mapping", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: `{}`}}}
	for _, name := range names {
		wt.Steps = append(wt.Steps, runtime.Step{Name: name, Job: jt, Map: firstStepsMapping[name]})
	}
	wt.Steps = append(wt.Steps, runtime.Step{Name: "whole", Job: jt}) // no map: the input
	w, err := runtime.NewWorkflowType(wt)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// payloadsAgree checks StartWorkflow's first payloads for input against what
// jobc_workflow_payload builds from the same maps.
func payloadsAgree(t *testing.T, pool *pgxpool.Pool, wt *runtime.WorkflowType, input string) {
	t.Helper()
	got := runtime.FirstPayloads(wt, []byte(input))
	if got == nil {
		t.Fatalf("input %s: StartWorkflow left the mapping to the database", input)
	}
	var def struct {
		Steps []struct {
			Name string          `json:"name"`
			Map  json.RawMessage `json:"map"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(wt.Definition(), &def); err != nil {
		t.Fatal(err)
	}
	var mapped map[string]json.RawMessage
	if err := json.Unmarshal(got, &mapped); err != nil {
		t.Fatalf("input %s: StartWorkflow's payloads %s are no JSON object: %v", input, got, err)
	}
	n := 0
	for _, s := range def.Steps {
		if s.Map == nil {
			continue
		}
		n++
		var same bool
		var want string
		if err := pool.QueryRow(t.Context(), `SELECT p.payload = $3::jsonb, p.payload::text FROM jobc_workflow_payload(NULL, $1::jsonb, NULL, $2::jsonb) p`,
			input, s.Map, mapped[s.Name]).Scan(&same, &want); err != nil {
			t.Fatalf("input %s, step %s: %v", input, s.Name, err)
		}
		if !same {
			t.Errorf("input %s, step %s: StartWorkflow maps %s, jobc_workflow_payload %s", input, s.Name, mapped[s.Name], want)
		}
	}
	if len(mapped) != n {
		t.Errorf("input %s: StartWorkflow mapped %d steps (%s), want the %d with a map", input, len(mapped), got, n)
	}
}

// TestStartPayloadsAgreeWithTheDatabase: the payloads StartWorkflow maps from the input
// for its first steps (so that the start need not) are those jobc_workflow_payload
// builds, on inputs that take every turn of a path, lists indexed as C's strtol reads
// an index among them. A start through StartWorkflow writes them.
func TestStartPayloadsAgreeWithTheDatabase(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	plain := mappingWorkflow(t, "members", "lists", "scalars", "odd")
	for _, input := range []string{
		`{"a": {"b": [1, 2]}, "l": [10, {"x": "y"}, 12], "n": 5, "z": null}`,
		`{"a": 1, "l": {"0": "zero", "-1": "minus one", "1": {"x": 2}}, "n": "s"}`,
		`{"a": {"b": null}, "l": [], "n": {"x": [true]}, "z": {"y": 1}}`,
		`{"a": "dup", "a": {"b": "last"}, "l": [[0], [1]]}`,
		`{"o": {"01": 1, "-0": 2, "+1": 3, " 1": 4, "\t2": 5, "1 ": 6, "x": 7}}`,
		`{"o": [1, 2, 3]}`,
		`[1, 2, 3]`, `"scalar"`, `null`, `{}`,
	} {
		payloadsAgree(t, pool, plain, input)
	}

	id, err := runtime.StartWorkflow(t.Context(), pool, plain, json.RawMessage(`{"a": {"b": 3}, "l": [4, {"x": 5}], "n": 6}`))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(t.Context(), `SELECT j.workflow_step, j.payload::text,
			(SELECT p.payload::text FROM jsonb_array_elements(d.definition->'steps') s,
			        jobc_workflow_payload(NULL, w.input, NULL, s->'map') p WHERE s->>'name' = j.workflow_step)
		FROM jobc_jobs j JOIN jobc_workflows w ON w.id = j.workflow_id JOIN jobc_workflow_definitions d ON d.id = w.definition_id
		WHERE j.workflow_id = $1 ORDER BY j.workflow_step`, int64(id))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seen []string
	for rows.Next() {
		var step, got, want string
		if err := rows.Scan(&step, &got, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("step %s: StartWorkflow's start wrote payload %s; jobc_workflow_payload builds %s", step, got, want)
		}
		seen = append(seen, step)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[lists members odd scalars whole]" {
		t.Errorf("the start ran the jobs of steps %v, want [lists members odd scalars whole]", seen)
	}
}

// FuzzStartPayloadsAgreeWithTheDatabase is that comparison on any input:
// `go test -fuzz FuzzStartPayloadsAgreeWithTheDatabase ./runtime`.
func FuzzStartPayloadsAgreeWithTheDatabase(f *testing.F) {
	for _, seed := range []string{
		`{"a": {"b": [1, 2]}, "l": [10, {"x": "y"}, 12], "n": 5, "z": null}`,
		`{"a": 1, "l": {"0": "zero", "-1": "minus one"}, "o": [1, 2, 3], "n": "s"}`,
		`{"a": "\u00e9\ud83d\ude00", "l": [[0], [1, {"x": 1e400}]], "z": {"y": -0.0}}`,
	} {
		f.Add(seed)
	}
	pool := pgtest.NewSchema(f, migrated)
	plain := mappingWorkflow(f, "members", "lists", "scalars", "odd")
	f.Fuzz(func(t *testing.T, input string) {
		// Only an input both read can be a start's (StartWorkflow encodes it, and the
		// database refuses what it cannot read, failing the start): the rest has no
		// payloads to compare.
		var doc string
		if json.Valid([]byte(input)) && pool.QueryRow(t.Context(), `SELECT $1::jsonb::text`, input).Scan(&doc) == nil {
			payloadsAgree(t, pool, plain, input)
		}
	})
}

// TestFanInReadsResultsOfEveryEnd: a step after two job steps maps both their results,
// whether a predecessor ended in an earlier batch (its result read from its row) or
// in the batch that runs the step (read from the batch's ends); the step runs once.
func TestFanInReadsResultsOfEveryEnd(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := t.Context()
	step := `{"name":%q,"kind":"k","queue":"q","priority":5,"max_attempts":1,"payload_version":1,"after":%s%s}`
	def := `{"steps":[` + fmt.Sprintf(step, "a", `[]`, ``) + `,` + fmt.Sprintf(step, "b", `[]`, ``) + `,` +
		fmt.Sprintf(step, "c", `["a","b"]`, `,"map":{"x":["result","a","n"],"y":["result","b","n"],"z":["input","n"]}`) + `]}`
	start := func() int64 {
		t.Helper()
		var id int64
		if err := pool.QueryRow(ctx, `SELECT jobc_workflow_start('w', $1, 1, '{"n": 0}')`, def).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	apart, together := start(), start()
	if _, err := pool.Exec(ctx, `UPDATE jobc_jobs SET state = 'running', attempt = 1, attempted_at = now(), lease_owner = 'me',
		lease_expires_at = now() + interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	// finish ends the given steps' jobs of the given workflows in one batch, each with
	// result {"n": its workflow's id * 10 + 1 for a, 2 for b}.
	finish := func(steps []string, wfs ...int64) {
		t.Helper()
		if _, err := pool.Exec(ctx, `SELECT count(*)
			FROM (SELECT array_agg(j.id ORDER BY j.id) AS ids, array_agg(1) AS ones,
			             array_agg(jsonb_build_object('n', j.workflow_id * 10 + CASE j.workflow_step WHEN 'a' THEN 1 ELSE 2 END)
			                       ORDER BY j.id) AS results
			      FROM jobc_jobs j WHERE j.workflow_id = ANY($1) AND j.workflow_step = ANY($2)) b
			CROSS JOIN LATERAL jobc_finish(b.ids, 'completed', NULL, 'me', b.ones, b.results, b.ones)`,
			wfs, steps); err != nil {
			t.Fatal(err)
		}
	}
	finish([]string{"a"}, apart)
	finish([]string{"b"}, apart)
	finish([]string{"a", "b"}, together)
	for _, id := range []int64{apart, together} {
		var n int
		var payload string
		if err := pool.QueryRow(ctx, `SELECT count(*), min(j.payload::text) FROM jobc_jobs j WHERE j.workflow_id = $1 AND j.workflow_step = 'c'`,
			id).Scan(&n, &payload); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"x": %d, "y": %d, "z": 0}`, id*10+1, id*10+2)
		if n != 1 || payload != want {
			t.Errorf("workflow %d (a and b ended %s): %d jobs of c, payload %s; want one, %s",
				id, map[bool]string{true: "apart", false: "together"}[id == apart], n, payload, want)
		}
	}
}
