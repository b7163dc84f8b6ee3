package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/runtime"
)

// wfStep is the job of the workflows of these tests; no worker runs it.
var wfStep = runtime.MustJobType(runtime.JobType{
	Kind: "wf_step", Queue: "wf", Priority: 5, MaxAttempts: 1, WriteVersion: 1,
	Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
})

var wfType = runtime.MustWorkflowType(runtime.WorkflowType{
	Name: "dash_flow", InputWriteVersion: 1, InputVersions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
	Signals: []runtime.Signal{{Name: "go", WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}}}},
	Steps: []runtime.Step{
		{Name: "first", Job: wfStep},
		{Name: "gate", Wait: &runtime.Wait{Signal: "go"}},
		{Name: "last", Job: wfStep, After: []string{"first", "gate"}},
	},
})

func (e *env) startWorkflow(input string) runtime.WorkflowID {
	e.t.Helper()
	id, err := runtime.StartWorkflow(e.t.Context(), e.pool, wfType, json.RawMessage(input))
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// TestWorkflowPages: the Workflows page lists workflows and filters them by name and
// state; a workflow's page draws its steps with their states and what they wait on,
// shows its input and signals (not with HidePayloads), and refuses a bad or unknown
// id.
func TestWorkflowPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	id := e.startWorkflow(`{"order":"o-secret"}`)
	if err := runtime.SignalWorkflow(t.Context(), e.pool, wfType, id, "go", map[string]string{"by": "ops-secret"}); err != nil {
		t.Fatal(err)
	}
	status, body := e.get("/workflows")
	wantStatus(t, "workflows", status, http.StatusOK, body)
	wantContains(t, "workflows", body, fmt.Sprintf(`href="/workflows/%d"`, id), "dash_flow", "state-running", "2/3")
	status, body = e.get("/workflows?state=completed")
	wantStatus(t, "workflows?state=completed", status, http.StatusOK, body)
	if strings.Contains(body, fmt.Sprintf(`href="/workflows/%d"`, id)) {
		t.Errorf("the completed filter lists running workflow %d", id)
	}
	status, body = e.get(fmt.Sprintf("/workflows/%d", id))
	wantStatus(t, "workflow", status, http.StatusOK, body)
	wantContains(t, "workflow", body, `<svg class="dag"`, `data-step="first" data-state="running"`, `data-step="gate" data-state="completed"`,
		`data-step="last" data-state="waiting"`, "steps first", `data-from="gate" data-to="last"`, "o-secret", "ops-secret", `id="cancel"`)

	hidden := newEnv(t, dashboard.Options{HidePayloads: true})
	hid := hidden.startWorkflow(`{"order":"o-secret"}`)
	if err := runtime.SignalWorkflow(t.Context(), hidden.pool, wfType, hid, "go", map[string]string{"by": "ops-secret"}); err != nil {
		t.Fatal(err)
	}
	status, body = hidden.get(fmt.Sprintf("/workflows/%d", hid))
	wantStatus(t, "workflow with hidden payloads", status, http.StatusOK, body)
	if strings.Contains(body, "o-secret") || strings.Contains(body, "ops-secret") {
		t.Errorf("a dashboard that hides payloads shows a workflow's input or signal:\n%s", body)
	}

	for path, want := range map[string]int{
		"/workflows/abc":         http.StatusBadRequest,
		"/workflows/0":           http.StatusBadRequest,
		"/workflows/999999":      http.StatusNotFound,
		"/workflows?state=stuck": http.StatusBadRequest,
		"/workflows?after=-1":    http.StatusBadRequest,
	} {
		status, body := e.get(path)
		wantStatus(t, path, status, want, body)
	}
}

// TestWorkflowActions: Cancel and Retry on a workflow's page act through forms with
// the CSRF token, refuse a workflow in the wrong state (409), and a read-only
// dashboard refuses both.
func TestWorkflowActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dashboard.Options{})
	id := e.startWorkflow(`{}`)
	page := fmt.Sprintf("/workflows/%d", id)
	tok := e.token(page)
	status, body := e.do(http.MethodPost, page+"/cancel", url.Values{}, nil)
	wantStatus(t, "cancel without a token", status, http.StatusForbidden, body)
	status, body = e.post(page+"/cancel", url.Values{"next": {page}}, tok)
	wantStatus(t, "cancel", status, http.StatusSeeOther, body)
	info, err := runtime.GetWorkflow(t.Context(), e.pool, id)
	if err != nil || info.State != runtime.WorkflowCancelled {
		t.Fatalf("after Cancel: %+v, %v; want cancelled", info, err)
	}
	status, body = e.post(page+"/cancel", nil, tok)
	wantStatus(t, "cancel of a cancelled workflow", status, http.StatusConflict, body)

	_, body = e.get(page)
	wantContains(t, "the cancelled workflow's page", body, `id="retry"`)
	status, body = e.post(page+"/retry", url.Values{"next": {page}}, tok)
	wantStatus(t, "retry", status, http.StatusSeeOther, body)
	if info, err = runtime.GetWorkflow(t.Context(), e.pool, id); err != nil || info.State != runtime.WorkflowRunning {
		t.Fatalf("after Retry: %+v, %v; want running", info, err)
	}
	status, body = e.post(page+"/retry", nil, tok)
	wantStatus(t, "retry of a running workflow", status, http.StatusConflict, body)
	status, body = e.post("/workflows/999999/retry", nil, tok)
	wantStatus(t, "retry of an unknown workflow", status, http.StatusNotFound, body)

	ro := newEnv(t, dashboard.Options{ReadOnly: true})
	rid := ro.startWorkflow(`{}`)
	status, body = ro.get(fmt.Sprintf("/workflows/%d", rid))
	if strings.Contains(body, `id="cancel"`) {
		t.Errorf("a read-only dashboard offers Cancel (%d)", status)
	}
	status, body = ro.do(http.MethodPost, fmt.Sprintf("/workflows/%d/cancel", rid), url.Values{}, nil)
	wantStatus(t, "cancel on a read-only dashboard", status, http.StatusForbidden, body)
}
