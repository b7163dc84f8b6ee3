package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
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
	stats, err := runtime.ListQueueStats(r.Context(), h.db)
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
	// Why says why a failed job ended failed; "" for a job in another state.
	Why string
	// Waiting says why an available or scheduled job is not running; nil for a job
	// in another state.
	Waiting *runtime.Waiting
}

// event is one step in a job's life, for its timeline.
type event struct {
	At     time.Time
	What   string
	Detail string // an attempt's error (its first line), a retry's record, why a job failed
	// Anchor is the id of the entry of the Errors card that holds the whole text, when
	// Detail shows only part of it.
	Anchor string
	Class  string // for the style: ok, bad, retry or ""
}

// The error classes the runtime writes itself, beside those a job type declares.
const (
	classRetried        = "jobc_retried"    // a retry of a finished job (jobc_retry_selected)
	classPoisoned       = "jobc_poisoned"   // a job that made a statement fail (jobc_poison)
	classLeaseExpired   = "lease_expired"   // the rescuer's, for a dead worker's attempt
	classInvalidPayload = "invalid_payload" // the payload does not match its version's schema: never retried
	classUnregistered   = "unregistered"    // no handler for the kind: never retried
)

// detailRunes bounds an error's first line in the timeline; the Errors card below it
// shows every error whole.
const detailRunes = 240

// timeline orders what the row records of a job's life: its creation, every failed
// attempt with its error, every retry, its last attempt, and how it ended and why (or
// when it is due). jt is the job's type, when the dashboard knows it.
func timeline(j *runtime.JobInfo, jt *runtime.JobType) []event {
	ev := []event{{At: j.CreatedAt, What: "enqueued in " + j.Queue}}
	for i, e := range j.Errors {
		x := event{At: e.At, Class: "bad"}
		line, whole := firstLine(e.Error, detailRunes)
		if !whole {
			x.Anchor = errorAnchor(i)
		}
		switch {
		case e.Class == classRetried:
			// The record says it all: "retried after it ended failed at ...".
			x.What, x.Class = line, "retry"
			if strings.TrimSpace(line) == "" {
				x.What = "retried"
			}
			ev = append(ev, x)
			continue
		case e.Attempt > 0:
			x.What = fmt.Sprintf("attempt %d failed", e.Attempt)
		default:
			x.What = "error recorded"
		}
		if e.Class != "" {
			x.What += " (" + e.Class + ")"
		}
		x.Detail = line
		ev = append(ev, x)
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
		x := event{At: *j.FinishedAt, What: string(j.State), Class: c}
		if j.State == runtime.StateFailed {
			x.Detail = whyFailed(j, jt)
		}
		ev = append(ev, x)
	case j.State == runtime.StateScheduled || j.State == runtime.StateAvailable:
		ev = append(ev, event{At: j.AvailableAt, What: "available from here on"})
	}
	sort.SliceStable(ev, func(a, b int) bool { return ev[a].At.Before(ev[b].At) })
	return ev
}

// errorAnchor is the id of the i-th entry (from 0) of the job page's Errors card.
func errorAnchor(i int) string { return "error-" + strconv.Itoa(i+1) }

// firstLine is s up to its first line break and at most n runes, with "…" where
// anything but white space was left out; whole reports that nothing was.
func firstLine(s string, n int) (line string, whole bool) {
	line, rest, found := strings.Cut(s, "\n")
	if found {
		line = strings.TrimSuffix(line, "\r")
	}
	whole = strings.TrimSpace(rest) == ""
	if utf8.RuneCountInString(line) > n {
		line, whole = string([]rune(line)[:n]), false
	}
	if !whole {
		line += " …"
	}
	return line, whole
}

// whyFailed says why a failed job ended failed, from its last error: poisoned, its
// lease expired on its last attempt, an error class that is never retried, or out of
// attempts. jt, when known, tells a permanent class (retry: false) and a class's own
// attempt limit from the job's.
func whyFailed(j *runtime.JobInfo, jt *runtime.JobType) string {
	if len(j.Errors) == 0 {
		return "no error was recorded for it"
	}
	last := j.Errors[len(j.Errors)-1]
	of := fmt.Sprintf("attempt %d of %d", last.Attempt, j.MaxAttempts)
	switch last.Class {
	case classPoisoned:
		return "poisoned: it made a statement of jobc fail, so it was ended alone, out of every other job's way"
	case classLeaseExpired:
		return "its lease expired on its last attempt (" + of + "): the worker stopped extending it (crashed, killed or disconnected)"
	case classInvalidPayload:
		return "its payload does not match its version's schema (" + classInvalidPayload + " is never retried), on " + of
	case classUnregistered:
		return "the worker that took it has no handler for its kind (" + classUnregistered + " is never retried), on " + of
	}
	if jt != nil {
		for _, c := range jt.Classes {
			if c.Name != last.Class {
				continue
			}
			if !c.Retry {
				return fmt.Sprintf("error class %s is permanent (retry: false): it failed on %s", c.Name, of)
			}
			if c.MaxAttempts > 0 && last.Attempt >= c.MaxAttempts && last.Attempt < j.MaxAttempts {
				return fmt.Sprintf("out of attempts for error class %s, which allows %d: it failed on %s", c.Name, c.MaxAttempts, of)
			}
		}
	}
	class := last.Class
	if class == "" {
		class = "(none)"
	}
	if last.Attempt >= j.MaxAttempts {
		return fmt.Sprintf("out of attempts: %s failed, with error class %s", of, class)
	}
	return fmt.Sprintf("it failed on %s with attempts left: its error class %s is not retried, or allows fewer attempts", of, class)
}

// jobType is the job type of the given kind among Options.JobTypes (by its kind or a
// former one), or nil.
func (h *handler) jobType(kind string) *runtime.JobType {
	for _, jt := range h.opt.JobTypes {
		if jt.Kind == kind || slices.Contains(jt.Aliases, kind) {
			return jt
		}
	}
	return nil
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
		info.Payload, info.Metadata, info.UniqueKey, info.Result = nil, nil, "", nil
	}
	jt := h.jobType(info.Kind)
	d := jobData{Job: info, Timeline: timeline(info, jt)}
	if info.State == runtime.StateFailed {
		d.Why = whyFailed(info, jt)
	}
	if info.State == runtime.StateAvailable || info.State == runtime.StateScheduled {
		if d.Waiting, err = h.whyWaiting(r, id); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.render(w, r, http.StatusOK, "job", "Job "+strconv.FormatInt(id, 10), false, d)
}

// whyWaiting says why job id is not running; nil when it runs or ended since it was
// read. With Options.HidePayloads the job's flow key, made of payload values, is left
// out of the answer.
func (h *handler) whyWaiting(r *http.Request, id int64) (*runtime.Waiting, error) {
	wt, err := runtime.WhyWaiting(r.Context(), h.db, id)
	if errors.Is(err, runtime.ErrJobNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if wt.Cause == runtime.WaitRunning || wt.Cause == runtime.WaitFinished {
		return nil, nil
	}
	if h.opt.HidePayloads && wt.Key != "" {
		wt.Reason = strings.ReplaceAll(wt.Reason, wt.Key, "its key (hidden)")
		wt.Key = ""
	}
	return &wt, nil
}

// limitCause reports whether c is a limit an operator can change on the Limits page.
func limitCause(c runtime.WaitCause) bool {
	switch c {
	case runtime.WaitKeyConcurrency, runtime.WaitKeyRate, runtime.WaitQueueConcurrency, runtime.WaitQueueRate:
		return true
	}
	return false
}

// jobID parses the {id} of the path, answering 400 when it is not a job id.
func (h *handler) jobID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	return h.id(w, r, "job id", r.PathValue("id"))
}

// id parses s, an id of what: a positive integer, answering 400 naming what otherwise.
func (h *handler) id(w http.ResponseWriter, r *http.Request, what, s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		h.problem(w, r, http.StatusBadRequest, what+": want a positive integer, got "+strconv.Quote(s))
		return 0, false
	}
	return id, true
}
