package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobc-dev/jobc/runtime"
)

// jobsPageSize is how many jobs the Jobs page lists at once.
const jobsPageSize = 50

type jobsData struct {
	Filter url.Values // the filter as given, for the form and the links
	State  runtime.State
	Kind   string
	Queue  string
	Class  string
	Error  string // text in the last error message
	Page   runtime.JobSummaryPage
	Next   template.URL // "jobs?<query>" of the next page; "" when there is none
	Counts map[runtime.State]int64
}

func (h *handler) jobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, k := range []string{"state", "kind", "queue", "class", "error", "after"} {
		// PostgreSQL text holds neither NUL nor invalid UTF-8: say so here, not with a
		// 500 from the database's refusal.
		if v := q.Get(k); !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			h.problem(w, r, http.StatusBadRequest, k+": not valid text (NUL or invalid UTF-8): "+strconv.QuoteToASCII(truncate(v, 80)))
			return
		}
	}
	d := jobsData{Filter: q, Kind: strings.TrimSpace(q.Get("kind")), Queue: strings.TrimSpace(q.Get("queue")),
		Class: strings.TrimSpace(q.Get("class")), Error: strings.TrimSpace(q.Get("error"))}
	f := runtime.JobFilter{JobSelection: runtime.JobSelection{Limit: jobsPageSize}}
	if s := q.Get("state"); s != "" {
		st, err := runtime.ParseState(s)
		if err != nil {
			h.problem(w, r, http.StatusBadRequest, "state: "+err.Error())
			return
		}
		d.State = st
		f.States = []runtime.State{st}
	}
	if d.Kind != "" {
		f.Kinds = []string{d.Kind}
	}
	if d.Queue != "" {
		f.Queues = []string{d.Queue}
	}
	f.ErrorClass = d.Class
	if a := q.Get("after"); a != "" {
		after, err := strconv.ParseInt(a, 10, 64)
		if err != nil || after <= 0 {
			h.problem(w, r, http.StatusBadRequest, "after: want a job id, got "+strconv.Quote(a))
			return
		}
		f.After = after
	}
	var page runtime.JobSummaryPage
	var err error
	if d.Error != "" {
		if !h.startSearch() {
			w.Header().Set("Retry-After", "5")
			h.problem(w, r, http.StatusServiceUnavailable, fmt.Sprintf(
				"%d searches by error text are running already (the dashboard's cap): try again in a few seconds", cap(h.searches)))
			return
		}
		defer h.endSearch()
		page, err = runtime.ListJobSummariesByError(r.Context(), h.db, d.Error, f)
	} else {
		page, err = runtime.ListJobSummaries(r.Context(), h.db, f)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d.Page = page
	if page.More && len(page.Jobs) > 0 {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("after", strconv.FormatInt(page.Jobs[len(page.Jobs)-1].ID, 10))
		// Encode escapes every value, so the query is a safe URL.
		d.Next = template.URL("jobs?" + next.Encode()) //nolint:gosec // see above
	}
	stats, err := runtime.QueueStats(r.Context(), h.db)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d.Counts = map[runtime.State]int64{}
	for _, s := range stats {
		d.Counts[runtime.StateAvailable] += s.Available
		d.Counts[runtime.StateScheduled] += s.Scheduled
		d.Counts[runtime.StateRunning] += s.Running
		d.Counts[runtime.StateCompleted] += s.CompletedLastHour
		d.Counts[runtime.StateFailed] += s.FailedLastHour
	}
	h.render(w, r, http.StatusOK, "jobs", "Jobs", false, d)
}

// startSearch takes one of the Options.MaxSearches places of error-text searches,
// reporting false when they are all taken; endSearch gives it back.
func (h *handler) startSearch() bool {
	if h.searches == nil {
		return true
	}
	select {
	case h.searches <- struct{}{}:
		return true
	default:
		return false
	}
}

func (h *handler) endSearch() {
	if h.searches != nil {
		<-h.searches
	}
}

type jobData struct {
	Job      *runtime.JobInfo
	Timeline []event
}

// event is one step in a job's life, for its timeline.
type event struct {
	At    time.Time
	What  string
	Class string // for the style: ok, bad or ""
}

// timeline orders what the row records of a job's life: its creation, every failed
// attempt, its last attempt, and how it ended (or when it is due).
func timeline(j *runtime.JobInfo) []event {
	ev := []event{{At: j.CreatedAt, What: "enqueued in " + j.Queue}}
	for _, e := range j.Errors {
		what := fmt.Sprintf("attempt %d failed", e.Attempt)
		if e.Class != "" {
			what += " (" + e.Class + ")"
		}
		ev = append(ev, event{At: e.At, What: what, Class: "bad"})
	}
	if j.AttemptedAt != nil {
		ev = append(ev, event{At: *j.AttemptedAt, What: fmt.Sprintf("attempt %d started", j.Attempt)})
	}
	switch {
	case j.FinishedAt != nil:
		c := "bad"
		if j.State == runtime.StateCompleted {
			c = "ok"
		}
		ev = append(ev, event{At: *j.FinishedAt, What: string(j.State), Class: c})
	case j.State == runtime.StateScheduled || j.State == runtime.StateAvailable:
		ev = append(ev, event{At: j.AvailableAt, What: "available from here on"})
	}
	sort.SliceStable(ev, func(a, b int) bool { return ev[a].At.Before(ev[b].At) })
	return ev
}

func (h *handler) job(w http.ResponseWriter, r *http.Request) {
	id, ok := h.jobID(w, r)
	if !ok {
		return
	}
	info, err := runtime.GetJob(r.Context(), h.db, id)
	if errors.Is(err, runtime.ErrJobNotFound) {
		h.problem(w, r, http.StatusNotFound, "job "+strconv.FormatInt(id, 10)+" not found (it may have been deleted or pruned)")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.opt.HidePayloads {
		// Not merely left out of the template: what the page does not have, no
		// template change can show.
		info.Payload, info.Metadata, info.UniqueKey = nil, nil, ""
	}
	h.render(w, r, http.StatusOK, "job", "Job "+strconv.FormatInt(id, 10), false, jobData{Job: info, Timeline: timeline(info)})
}

// jobID parses the {id} of the path, answering 400 when it is not a job id.
func (h *handler) jobID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	s := r.PathValue("id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		h.problem(w, r, http.StatusBadRequest, "job id: want a positive integer, got "+strconv.Quote(s))
		return 0, false
	}
	return id, true
}
