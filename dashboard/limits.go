package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

type limitsData struct {
	Limits []runtime.Limit
}

func (h *handler) limits(w http.ResponseWriter, r *http.Request) {
	ls, err := runtime.ListLimits(r.Context(), h.db)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// No live refresh: it would swap out a form the operator is filling in.
	h.render(w, r, http.StatusOK, "limits", "Limits", false, limitsData{Limits: ls})
}

// errBadLimit is a Limits form whose values are not limits; it answers 400.
var errBadLimit = errors.New("bad limit")

// limitTarget reads the {scope} and {name} of a limit action's path.
func limitTarget(r *http.Request) (runtime.LimitScope, string, error) {
	scope := runtime.LimitScope(r.PathValue("scope"))
	if scope != runtime.LimitKind && scope != runtime.LimitQueue {
		return "", "", fmt.Errorf("%w: scope %q, want kind or queue", errBadLimit, truncate(string(scope), 40))
	}
	return scope, r.PathValue("name"), nil
}

// limitChange reads the Limits page's form: concurrency, and rate with per (a
// duration such as 1m); an empty field leaves that value as it is.
func limitChange(r *http.Request) (runtime.LimitChange, error) {
	var c runtime.LimitChange
	var err error
	c.Scope, c.Name, err = limitTarget(r)
	if err != nil {
		return c, err
	}
	if s := strings.TrimSpace(r.PostFormValue("concurrency")); s != "" {
		if c.Concurrency, err = strconv.Atoi(s); err != nil || c.Concurrency < 1 {
			return c, fmt.Errorf("%w: concurrency %q: want a whole number of at least 1 (Reset restores the spec's)", errBadLimit, truncate(s, 40))
		}
	}
	rate, per := strings.TrimSpace(r.PostFormValue("rate")), strings.TrimSpace(r.PostFormValue("per"))
	if rate != "" || per != "" {
		if c.Rate.Limit, err = strconv.Atoi(rate); err != nil || c.Rate.Limit < 1 {
			return c, fmt.Errorf("%w: rate %q: want a whole number of starts of at least 1, with its period", errBadLimit, truncate(rate, 40))
		}
		if c.Rate.Per, err = time.ParseDuration(per); err != nil || c.Rate.Per <= 0 {
			return c, fmt.Errorf("%w: period %q: want a positive duration such as 1m or 30s", errBadLimit, truncate(per, 40))
		}
	}
	if c.Concurrency == 0 && c.Rate.IsZero() {
		return c, fmt.Errorf("%w: nothing to set: give a concurrency, a rate and its period, or both", errBadLimit)
	}
	return c, nil
}

// actor names who made a change, for the limit's record: "dashboard", with the
// basic-auth user when that is how the request got in.
func (h *handler) actor(r *http.Request) string {
	if u, _, ok := r.BasicAuth(); ok && h.opt.BasicUser != "" && equal(u, h.opt.BasicUser) {
		return "dashboard:" + u
	}
	return "dashboard"
}

func (h *handler) setLimit(w http.ResponseWriter, r *http.Request) {
	c, err := limitChange(r)
	if err != nil {
		h.actionError(w, r, err)
		return
	}
	c.By = h.actor(r)
	if err := runtime.SetLimit(r.Context(), h.db, c); err != nil {
		h.actionError(w, r, err)
		return
	}
	var set []string
	if c.Concurrency > 0 {
		set = append(set, fmt.Sprintf("concurrency %d", c.Concurrency))
	}
	if !c.Rate.IsZero() {
		set = append(set, "rate "+formatRate(c.Rate))
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: set limit", "scope", string(c.Scope), "name", c.Name,
		"concurrency", c.Concurrency, "rate", formatRate(c.Rate), "by", c.By)
	h.done(w, r, "/limits", fmt.Sprintf("Limits of %s %s: %s set; workers apply it from their next claim.", c.Scope, c.Name, strings.Join(set, ", ")))
}

func (h *handler) resetLimit(w http.ResponseWriter, r *http.Request) {
	scope, name, err := limitTarget(r)
	if err != nil {
		h.actionError(w, r, err)
		return
	}
	by := h.actor(r)
	if err := runtime.ResetLimit(r.Context(), h.db, scope, name, by); err != nil {
		h.actionError(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: reset limit", "scope", string(scope), "name", name, "by", by)
	h.done(w, r, "/limits", fmt.Sprintf("Limits of %s %s: the spec's apply again from the next claim.", scope, name))
}

// formatRate prints r as "100/1m", "—" for no limit.
func formatRate(r runtime.Rate) string {
	if r.IsZero() {
		return "—"
	}
	return r.String()
}

// ratePer is r's period as the form takes it: "1m", not "1m0s".
func ratePer(r runtime.Rate) string {
	_, per, _ := strings.Cut(r.String(), "/")
	return per
}

// limitValues prints a limit's numbers: "2 running · 100/1m", "—" for none.
func limitValues(v runtime.LimitValues) string {
	var parts []string
	if v.Concurrency > 0 {
		parts = append(parts, fmt.Sprintf("%d running", v.Concurrency))
	}
	if !v.Rate.IsZero() {
		parts = append(parts, formatRate(v.Rate))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " · ")
}

// throttled returns, per queue, how many of its available jobs wait under flow
// control: the waiting count of the queue's own limit, which counts every job of it
// with a flow key, or else the sum of its kinds' limits. A kind's queue is its job
// type's (Options.JobTypes), or else that of one of its waiting jobs.
func (h *handler) throttled(r *http.Request, limits []runtime.Limit) (map[string]int64, error) {
	out := map[string]int64{}
	byQueue := map[string]bool{}
	for _, l := range limits {
		if l.Scope == runtime.LimitQueue {
			out[l.Name], byQueue[l.Name] = l.Waiting, true
		}
	}
	for _, l := range limits {
		if l.Scope != runtime.LimitKind || l.Waiting == 0 {
			continue
		}
		queue := ""
		if jt := h.jobType(l.Name); jt != nil {
			queue = jt.Queue
		} else {
			page, err := runtime.ListJobSummaries(r.Context(), h.db, runtime.JobFilter{JobSelection: runtime.JobSelection{
				Kinds: []string{l.Name}, States: []runtime.State{runtime.StateAvailable}, Limit: 1}})
			if err != nil {
				return nil, err
			}
			if len(page.Jobs) == 0 {
				continue
			}
			queue = page.Jobs[0].Queue
		}
		if !byQueue[queue] {
			out[queue] += l.Waiting
		}
	}
	return out, nil
}
