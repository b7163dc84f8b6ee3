package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// Options configure the dashboard. The zero value serves every page and action at the
// root of the handler, without authentication.
type Options struct {
	// Prefix is the path the handler is mounted at, such as "/jobs/": the handler strips
	// it from requests itself. Leave it empty when the handler is mounted at the root
	// or behind http.StripPrefix; links are right either way, as they are derived from
	// the request's original URI.
	Prefix string
	// ReadOnly shows everything and offers no action; the server refuses every
	// mutation with 403 Forbidden.
	ReadOnly bool
	// HidePayloads keeps job payloads off every page, for data operators must not read.
	HidePayloads bool
	// JobTypes are the application's job types (its generated JobTypes()): the
	// Periodic page shows the schedules among them.
	JobTypes []*runtime.JobType
	// BearerToken, when set, lets a request in that sends "Authorization: Bearer
	// <token>".
	BearerToken string
	// BasicUser and BasicPassword, when both set, let a request in that sends them as
	// HTTP basic authentication; a browser asks for them.
	BasicUser, BasicPassword string
	// OldestAvailableWarn is the age of a queue's oldest available job past which the
	// Overview shows it in red. Default 5 minutes.
	OldestAvailableWarn time.Duration
	// Refresh is how often the Overview, Queues and Versions pages reload their data in
	// the browser. Default 5 seconds; negative turns it off.
	Refresh time.Duration
	// Logger receives errors of database reads and writes. Default slog.Default().
	Logger *slog.Logger
}

// authConfigured reports whether o makes the handler authenticate requests.
func (o Options) authConfigured() bool {
	return o.BearerToken != "" || (o.BasicUser != "" && o.BasicPassword != "")
}

// handler is the dashboard.
type handler struct {
	db    runtime.DBTX
	opt   Options
	pages map[string]*template.Template
	csrf  *csrf
	log   *slog.Logger
}

// New returns the dashboard over db (a *pgxpool.Pool, usually).
func New(db runtime.DBTX, opt Options) (http.Handler, error) {
	if db == nil {
		return nil, errors.New("dashboard: no database")
	}
	if (opt.BasicUser == "") != (opt.BasicPassword == "") {
		return nil, errors.New("dashboard: Options.BasicUser and Options.BasicPassword must be set together")
	}
	if opt.Prefix != "" && !strings.HasPrefix(opt.Prefix, "/") {
		return nil, fmt.Errorf("dashboard: Options.Prefix %q must start with /", opt.Prefix)
	}
	if opt.OldestAvailableWarn <= 0 {
		opt.OldestAvailableWarn = 5 * time.Minute
	}
	if opt.Refresh == 0 {
		opt.Refresh = 5 * time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c, err := newCSRF()
	if err != nil {
		return nil, err
	}
	h := &handler{db: db, opt: opt, pages: pages, csrf: c, log: opt.Logger}

	mux := http.NewServeMux()
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, fmt.Errorf("dashboard: embedded assets: %w", err)
	}
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticFiles(static)))
	mux.HandleFunc("GET /{$}", h.overview)
	mux.HandleFunc("GET /jobs", h.jobs)
	mux.HandleFunc("GET /jobs/{id}", h.job)
	mux.HandleFunc("GET /failed", h.failed)
	mux.HandleFunc("GET /queues", h.queues)
	mux.HandleFunc("GET /versions", h.versions)
	mux.HandleFunc("GET /periodic", h.periodic)
	mux.HandleFunc("POST /jobs/{id}/retry", h.mutation(h.retryJob))
	mux.HandleFunc("POST /jobs/{id}/cancel", h.mutation(h.cancelJob))
	mux.HandleFunc("POST /jobs/{id}/delete", h.mutation(h.deleteJob))
	mux.HandleFunc("POST /queues/{name}/pause", h.mutation(h.pauseQueue))
	mux.HandleFunc("POST /queues/{name}/resume", h.mutation(h.resumeQueue))
	mux.HandleFunc("POST /failed/retry", h.mutation(h.retryGroup))
	mux.HandleFunc("POST /failed/delete", h.mutation(h.deleteGroup))

	root := h.secure(mux)
	if p := strings.TrimSuffix(opt.Prefix, "/"); p != "" {
		root = http.StripPrefix(p, root)
	}
	return root, nil
}

// secure authenticates the request (when configured) and sets headers that keep the
// pages from being framed, sniffed or given scripts from elsewhere.
func (h *handler) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		if h.opt.authConfigured() && !h.authorized(r) {
			if h.opt.BasicUser != "" {
				hd.Set("WWW-Authenticate", `Basic realm="jobc", charset="UTF-8"`)
			}
			http.Error(w, "jobc dashboard: authentication required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
