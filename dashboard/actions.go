package dashboard

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/jobc-dev/jobc/runtime"
)

// maxFormBytes bounds a mutation's form: a group's key is the largest field.
const maxFormBytes = 1 << 20

// mutation guards an action: read-only dashboards refuse it, and so does a request
// without this dashboard's CSRF token; both answer 403 before anything changes. With
// bound, the whole action gets Options.QueryTimeout; without, the action bounds its
// own statements.
func (h *handler) mutation(do func(w http.ResponseWriter, r *http.Request), bound bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if bound {
			ctx, cancel := h.bounded(r.Context())
			defer cancel()
			r = r.WithContext(ctx)
		}
		if h.opt.ReadOnly {
			h.problem(w, r, http.StatusForbidden, "this dashboard is read-only: it changes nothing")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			h.problem(w, r, http.StatusBadRequest, "bad form: "+err.Error())
			return
		}
		if why := h.csrf.check(r); why != "" {
			h.log.WarnContext(r.Context(), "jobc dashboard: refused "+r.Method+" "+r.URL.Path+": "+why)
			h.problem(w, r, http.StatusForbidden, "refused: "+why)
			return
		}
		do(w, r)
	}
}

// done redirects to the page named by the form's "next" (a path inside the dashboard),
// or to fallback, with msg shown at its top.
func (h *handler) done(w http.ResponseWriter, r *http.Request, fallback, msg string) {
	next := r.PostFormValue("next")
	// Only paths of this dashboard: "//host" or "/\host" would leave it.
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		next = fallback
	}
	u, err := url.Parse(next)
	if err != nil || u.Host != "" || u.Scheme != "" {
		u = &url.URL{Path: fallback}
	}
	q := u.Query()
	h.flash.set(q, msg)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, strings.TrimSuffix(basePath(r), "/")+u.String(), http.StatusSeeOther)
}

// actionError answers a refused action with a status that says whose fault it is.
func (h *handler) actionError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, runtime.ErrJobNotFound), errors.Is(err, runtime.ErrNoLimit):
		h.problem(w, r, http.StatusNotFound, err.Error())
	case errors.Is(err, runtime.ErrJobRunning), errors.Is(err, runtime.ErrUniqueConflict),
		errors.Is(err, runtime.ErrNothingToRetry), errors.Is(err, runtime.ErrJobFinished):
		h.problem(w, r, http.StatusConflict, err.Error())
	case errors.Is(err, runtime.ErrEmptyQueueName), errors.Is(err, runtime.ErrNoFilter), errors.Is(err, errBadLimit):
		h.problem(w, r, http.StatusBadRequest, err.Error())
	default:
		h.fail(w, r, err)
	}
}

func (h *handler) retryJob(w http.ResponseWriter, r *http.Request) {
	id, ok := h.jobID(w, r)
	if !ok {
		return
	}
	if _, err := runtime.RetryJob(r.Context(), h.db, id); err != nil {
		h.actionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: retried job", "job", id)
	h.done(w, r, "/jobs/"+strconv.FormatInt(id, 10), fmt.Sprintf("Job %d is available again.", id))
}

func (h *handler) cancelJob(w http.ResponseWriter, r *http.Request) {
	id, ok := h.jobID(w, r)
	if !ok {
		return
	}
	st, err := runtime.CancelJob(r.Context(), h.db, id)
	if err != nil {
		h.actionError(w, r, err)
		return
	}
	msg := fmt.Sprintf("Job %d is cancelled.", id)
	if st == runtime.StateRunning {
		msg = fmt.Sprintf("Job %d is running: its handler was asked to stop; it ends cancelled when it returns.", id)
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: cancelled job", "job", id, "state", string(st))
	h.done(w, r, "/jobs/"+strconv.FormatInt(id, 10), msg)
}

func (h *handler) deleteJob(w http.ResponseWriter, r *http.Request) {
	id, ok := h.jobID(w, r)
	if !ok {
		return
	}
	if err := runtime.DeleteJob(r.Context(), h.db, id); err != nil {
		h.actionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: deleted job", "job", id)
	// The job's own page is gone: go back to the list even if the form said otherwise.
	h.done(w, r, "/jobs", fmt.Sprintf("Job %d is deleted.", id))
}

func (h *handler) pauseQueue(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := runtime.PauseQueue(r.Context(), h.db, name); err != nil {
		h.actionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: paused queue", "queue", name)
	h.done(w, r, "/queues", fmt.Sprintf("Queue %s is paused: workers stop claiming from it; running jobs finish.", name))
}

func (h *handler) resumeQueue(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := runtime.ResumeQueue(r.Context(), h.db, name); err != nil {
		h.actionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: resumed queue", "queue", name)
	h.done(w, r, "/queues", fmt.Sprintf("Queue %s is resumed.", name))
}

// groupBatch is how many of a failed group's jobs one bulk call changes.
const groupBatch = 1000

// A failed group travels in its forms as one opaque field, "group": the base64 of its
// kind and message (its exact last_error), NUL between them (PostgreSQL text holds no
// NUL). Sent as they are, a browser rewrites them: form submission turns every line
// break of a value into CRLF, so a message with a newline (every panic's stack) named
// no job and "Retry group" retried none. Base64 is letters, digits, - and _ alone.
const groupField = "group"

// groupKey is the "group" field of the failed group of kind and message.
func groupKey(kind, message string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "\x00" + message))
}

// parseGroupKey is the kind and message a "group" field names.
func parseGroupKey(key string) (kind, message string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return "", "", fmt.Errorf("%w: the group field %q is not a group of the Failed page", runtime.ErrNoFilter, truncate(key, 40))
	}
	kind, message, ok := strings.Cut(string(b), "\x00")
	if !ok || kind == "" {
		return "", "", fmt.Errorf("%w: the group field %q names no kind", runtime.ErrNoFilter, truncate(key, 40))
	}
	return kind, message, nil
}

// truncate cuts s to n bytes for a message, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// eachGroupBatch calls do with the ids of the failed group named by the form's "group"
// field, a batch at a time, and adds up the results. A group is read in id order from
// where the previous batch ended, so jobs that do leaves failed (skipped ones) are not
// read twice. It returns the group's kind.
func (h *handler) eachGroupBatch(r *http.Request, do func(ctx context.Context, ids []int64) (runtime.BulkResult, error)) (string, runtime.BulkResult, error) {
	var total runtime.BulkResult
	kind, msg, err := parseGroupKey(r.PostFormValue(groupField))
	if err != nil {
		return "", total, err
	}
	var after int64
	for {
		ids, res, err := h.groupBatch(r.Context(), kind, msg, after, do)
		total.Changed += res.Changed
		total.Skipped += res.Skipped
		if err != nil || len(ids) == 0 {
			return kind, total, err
		}
		after = ids[len(ids)-1]
	}
}

// groupBatch reads the next batch of a group's ids after after and calls do with them,
// within Options.QueryTimeout.
func (h *handler) groupBatch(ctx context.Context, kind, msg string, after int64,
	do func(ctx context.Context, ids []int64) (runtime.BulkResult, error)) ([]int64, runtime.BulkResult, error) {
	ctx, cancel := h.bounded(ctx)
	defer cancel()
	ids, err := runtime.ListFailedGroupJobIDs(ctx, h.db, kind, msg, after, groupBatch)
	if err != nil || len(ids) == 0 {
		return nil, runtime.BulkResult{}, err
	}
	res, err := do(ctx, ids)
	return ids, res, err
}

func (h *handler) retryGroup(w http.ResponseWriter, r *http.Request) {
	kind, res, err := h.eachGroupBatch(r, func(ctx context.Context, ids []int64) (runtime.BulkResult, error) {
		return runtime.RetryJobs(ctx, h.db, runtime.JobSelection{IDs: ids, States: []runtime.State{runtime.StateFailed}})
	})
	if err != nil {
		h.actionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: retried failed group", "kind", kind, "changed", res.Changed, "skipped", res.Skipped)
	h.done(w, r, "/failed", fmt.Sprintf("Retried %d jobs of kind %s (%d skipped).", res.Changed, kind, res.Skipped))
}

func (h *handler) deleteGroup(w http.ResponseWriter, r *http.Request) {
	kind, res, err := h.eachGroupBatch(r, func(ctx context.Context, ids []int64) (runtime.BulkResult, error) {
		return runtime.DeleteJobs(ctx, h.db, runtime.JobSelection{IDs: ids, States: []runtime.State{runtime.StateFailed}})
	})
	if err != nil {
		h.actionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: deleted failed group", "kind", kind, "changed", res.Changed)
	h.done(w, r, "/failed", fmt.Sprintf("Deleted %d jobs of kind %s.", res.Changed, kind))
}
