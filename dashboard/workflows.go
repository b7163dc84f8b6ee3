package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/jobc-dev/jobc/runtime"
)

type workflowsData struct {
	Workflows []runtime.WorkflowSummary
	Name      string
	State     string
	States    []runtime.WorkflowState
	Next      int64 // the id to list from for the next page; 0: none
}

var workflowStates = []runtime.WorkflowState{runtime.WorkflowRunning, runtime.WorkflowCompleted, runtime.WorkflowFailed, runtime.WorkflowCancelled}

// workflows lists the newest workflows, of a name and in a state when asked.
func (h *handler) workflows(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := runtime.WorkflowFilter{Name: q.Get("name"), State: runtime.WorkflowState(q.Get("state")), Limit: 50}
	if f.State != "" && !slices.Contains(workflowStates, f.State) {
		h.problem(w, r, http.StatusBadRequest, "state: want running, completed, failed or cancelled, got "+strconv.Quote(string(f.State)))
		return
	}
	if s := q.Get("after"); s != "" {
		after, err := strconv.ParseInt(s, 10, 64)
		if err != nil || after <= 0 {
			h.problem(w, r, http.StatusBadRequest, "after: want a workflow id, got "+strconv.Quote(s))
			return
		}
		f.After = runtime.WorkflowID(after)
	}
	page, err := runtime.ListWorkflows(r.Context(), h.db, f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := workflowsData{Workflows: page.Workflows, Name: f.Name, State: string(f.State), States: workflowStates}
	if page.More && len(page.Workflows) > 0 {
		d.Next = int64(page.Workflows[len(page.Workflows)-1].ID)
	}
	h.render(w, r, http.StatusOK, "workflows", "Workflows", true, d)
}

type workflowData struct {
	Workflow *runtime.WorkflowInfo
	DAG      dag
}

// workflow shows one workflow: its steps drawn as a graph, each with its state and
// what it waits on, then the steps' details and results, and the signals it was sent.
func (h *handler) workflow(w http.ResponseWriter, r *http.Request) {
	id, ok := h.workflowID(w, r)
	if !ok {
		return
	}
	info, err := runtime.GetWorkflow(r.Context(), h.db, runtime.WorkflowID(id))
	if errors.Is(err, runtime.ErrWorkflowNotFound) {
		h.problem(w, r, http.StatusNotFound, "workflow "+strconv.FormatInt(id, 10)+" not found (it may have been pruned)")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.opt.HidePayloads {
		// What the page does not have, no template change can show.
		info.Input = nil
		for i := range info.Steps {
			info.Steps[i].Result = nil
		}
		for i := range info.Signals {
			info.Signals[i].Payload = nil
		}
	}
	h.render(w, r, http.StatusOK, "workflow", "Workflow "+strconv.FormatInt(id, 10), info.State == runtime.WorkflowRunning,
		workflowData{Workflow: info, DAG: layoutDAG(info.Steps)})
}

func (h *handler) retryWorkflow(w http.ResponseWriter, r *http.Request) {
	id, ok := h.workflowID(w, r)
	if !ok {
		return
	}
	if err := runtime.RetryWorkflow(r.Context(), h.db, runtime.WorkflowID(id)); err != nil {
		h.workflowActionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: retried workflow", "workflow", id)
	h.done(w, r, "/workflows/"+strconv.FormatInt(id, 10), fmt.Sprintf("Workflow %d runs again from the steps that did not complete.", id))
}

func (h *handler) cancelWorkflow(w http.ResponseWriter, r *http.Request) {
	id, ok := h.workflowID(w, r)
	if !ok {
		return
	}
	if err := runtime.CancelWorkflow(r.Context(), h.db, runtime.WorkflowID(id)); err != nil {
		h.workflowActionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: cancelled workflow", "workflow", id)
	h.done(w, r, "/workflows/"+strconv.FormatInt(id, 10), fmt.Sprintf("Workflow %d is cancelled; its running jobs were asked to stop.", id))
}

func (h *handler) workflowActionError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, runtime.ErrWorkflowNotFound):
		h.problem(w, r, http.StatusNotFound, err.Error())
	case errors.Is(err, runtime.ErrWorkflowEnded), errors.Is(err, runtime.ErrWorkflowNotRetryable):
		h.problem(w, r, http.StatusConflict, err.Error())
	default:
		h.fail(w, r, err)
	}
}

func (h *handler) workflowID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	return h.id(w, r, "workflow id", r.PathValue("id"))
}

// dag is a workflow's steps laid out for drawing: each step in the column of its
// depth (1 + the deepest step it comes after), in declaration order within it, and an
// edge from each step to each step that comes after it.
type dag struct {
	Width, Height int
	Nodes         []dagNode
	Edges         []dagEdge
}

type dagNode struct {
	Step runtime.StepInfo
	X, Y int
}

type dagEdge struct {
	From, To string
	Path     string // the SVG path
	Done     bool   // the step it leaves from completed
}

const (
	dagNodeW, dagNodeH = 180, 56
	dagColW, dagRowH   = 230, 76
	dagPad             = 12
)

func layoutDAG(steps []runtime.StepInfo) dag {
	byName := map[string]runtime.StepInfo{}
	for _, s := range steps {
		byName[s.Name] = s
	}
	depth := map[string]int{}
	var depthOf func(name string, seen int) int
	depthOf = func(name string, seen int) int {
		if d, ok := depth[name]; ok {
			return d
		}
		d := 0
		if seen <= len(steps) { // a cycle cannot be recorded; bounded all the same
			for _, a := range byName[name].After {
				if _, ok := byName[a]; ok {
					d = max(d, depthOf(a, seen+1)+1)
				}
			}
		}
		depth[name] = d
		return d
	}
	rows := map[int]int{}
	pos := map[string][2]int{}
	var g dag
	for _, s := range steps {
		col := depthOf(s.Name, 0)
		row := rows[col]
		rows[col]++
		x, y := dagPad+col*dagColW, dagPad+row*dagRowH
		pos[s.Name] = [2]int{x, y}
		g.Nodes = append(g.Nodes, dagNode{Step: s, X: x, Y: y})
		g.Width = max(g.Width, x+dagNodeW+dagPad)
		g.Height = max(g.Height, y+dagNodeH+dagPad)
	}
	for _, s := range steps {
		to := pos[s.Name]
		for _, a := range s.After {
			from, ok := pos[a]
			if !ok {
				continue
			}
			x1, y1 := from[0]+dagNodeW, from[1]+dagNodeH/2
			x2, y2 := to[0], to[1]+dagNodeH/2
			mid := (x1 + x2) / 2
			g.Edges = append(g.Edges, dagEdge{From: a, To: s.Name, Done: byName[a].State == runtime.StepCompleted,
				Path: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2, y2)})
		}
	}
	return g
}
