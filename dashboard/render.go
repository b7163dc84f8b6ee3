package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

//go:embed templates/*.html static/*
var assets embed.FS

// page is what every template gets.
type page struct {
	Base         string // the dashboard's mount path, ending in "/"
	Path         string // the request path inside the dashboard, for the nav and "next"
	Title        string
	Nav          string
	ReadOnly     bool
	HidePayloads bool
	CSRF         string
	Flash        string
	Refresh      int64 // milliseconds; 0: no live refresh
	Now          time.Time
	Data         any
}

// parsePages parses each page template together with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: templates: %w", err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// basePath is the path the dashboard is mounted at, ending in "/". It is what the
// original request URI has in front of the path this handler sees, which covers both
// Options.Prefix and an http.StripPrefix of the application.
func basePath(r *http.Request) string {
	orig := r.URL.Path
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		orig = u.Path
	}
	base := strings.TrimSuffix(orig, r.URL.Path)
	if base == orig && r.URL.Path != orig { // not a suffix: someone rewrote the path
		base = ""
	}
	return strings.TrimSuffix(base, "/") + "/"
}

// render writes the page tmpl with data, or a 500 if rendering fails. It renders into
// a buffer first, so a failure half-way sends no half page.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, tmpl, title string, refresh bool, data any) {
	token, err := h.csrf.issue(w, r, basePath(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := page{Base: basePath(r), Path: r.URL.Path, Title: title, Nav: tmpl, ReadOnly: h.opt.ReadOnly,
		HidePayloads: h.opt.HidePayloads, CSRF: token, Flash: h.flash.get(r.URL.Query()), Now: time.Now(), Data: data}
	if refresh && h.opt.Refresh > 0 {
		p.Refresh = h.opt.Refresh.Milliseconds()
	}
	var buf bytes.Buffer
	if err := h.pages[tmpl].ExecuteTemplate(&buf, "layout.html", p); err != nil {
		h.fail(w, r, fmt.Errorf("dashboard: render %s: %w", tmpl, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail logs err and answers 500 without the details, which may name internals; or 503
// when the request ran out of its Options.QueryTimeout.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		h.log.WarnContext(r.Context(), "jobc dashboard: "+r.Method+" "+r.URL.Path+": out of time", "timeout", h.opt.QueryTimeout, "error", err)
		w.Header().Set("Retry-After", "10")
		h.problem(w, r.WithContext(context.WithoutCancel(r.Context())), http.StatusServiceUnavailable,
			fmt.Sprintf("the database did not answer within %s (the dashboard's query timeout): narrow the filter, or try again later", h.opt.QueryTimeout))
		return
	}
	h.log.ErrorContext(r.Context(), "jobc dashboard: "+r.Method+" "+r.URL.Path, "error", err)
	http.Error(w, "jobc dashboard: internal error (see the server's log)", http.StatusInternalServerError)
}

// problem answers a request that could not be done, with a page saying why.
func (h *handler) problem(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "problem", http.StatusText(status), false, msg)
}

// staticFiles serves the embedded assets; they change only with the binary.
func staticFiles(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

var funcs = template.FuncMap{
	"path": url.PathEscape,
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return humanDuration(time.Since(t)) + " ago"
	},
	"agep": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return humanDuration(time.Since(*t)) + " ago"
	},
	"in":  func(t time.Time) string { return "in " + humanDuration(time.Until(t)) },
	"dur": humanDuration,
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"tsp": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"pretty":   prettyJSON,
	"chart":    chart,
	"sum":      sum,
	"plural":   plural,
	"inc":      func(i int) int { return i + 1 },
	"states":   func() []runtime.State { return allStates },
	"finished": func(s runtime.State) bool { return s.Finished() },
	"retryable": func(s runtime.State) bool {
		return s == runtime.StateFailed || s == runtime.StateCancelled || s == runtime.StateScheduled
	},
	"deletable":   func(s runtime.State) bool { return s != runtime.StateRunning },
	"cancellable": func(s runtime.State) bool { return !s.Finished() },
	"join":        strings.Join,
	"groupkey":    groupKey,
	"limitvalues": limitValues,
	"rateper":     ratePer,
	"limitcause":  limitCause,
}

var allStates = []runtime.State{runtime.StateAvailable, runtime.StateScheduled, runtime.StateRunning,
	runtime.StateCompleted, runtime.StateFailed, runtime.StateCancelled}

// humanDuration prints d to two units at most: "3h12m", "4m05s", "12s", "850ms".
func humanDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// prettyJSON indents raw JSON for display; what is not JSON shows as it is.
func prettyJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// plural is n and the noun phrase for n: "1 job", "12 jobs". one and many may carry a
// verb that agrees ("job waits", "jobs wait").
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}
