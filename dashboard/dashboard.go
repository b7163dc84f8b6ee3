package dashboard

import (
	"context"
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
	// HidePayloads keeps every value that comes from a job's producer off the pages, for
	// data operators must not read: the payload, the metadata and the unique key (which
	// is usually derived from the payload). Error messages still show: handlers write
	// them, and the Failed page groups jobs by them; a handler that puts payload data in
	// its errors shows it there.
	HidePayloads bool
	// JobTypes are the application's job types (its generated JobTypes()): the
	// Periodic page shows the schedules among them, and a failed job's page reads its
	// type's error classes to say why it failed (a permanent class, or a class's own
	// attempt limit).
	JobTypes []*runtime.JobType
	// BearerToken, when set, lets a request in that sends "Authorization: Bearer
	// <token>". It must be at least 16 bytes with no white space at either end.
	BearerToken string
	// BasicUser and BasicPassword, when both set, let a request in that sends them as
	// HTTP basic authentication; a browser asks for them. The password must be at
	// least 16 bytes with no white space at either end.
	BasicUser, BasicPassword string
	// AllowedHosts are the host names, beyond localhost and the loopback addresses,
	// that requests may name in their Host header: the names a reverse proxy in front
	// of the dashboard uses. "name" allows any port, "name:port" that port alone. A
	// request that arrived on a loopback address and names another host is refused
	// with 421 Misdirected Request, which is what defeats DNS rebinding (a page of
	// another site whose name was pointed at 127.0.0.1); once names are given, every
	// request must name one of them or a loopback host.
	AllowedHosts []string
	// QueryTimeout bounds the database work of each page and action: past it, its
	// statements are cancelled and the request answers 503 Service Unavailable. A
	// group action (Retry group, Delete group) gets it for each batch of 1,000 jobs,
	// each committed on its own, so a large group is not cut off half-way for being
	// large. Default 10 seconds; negative: no bound.
	QueryTimeout time.Duration
	// MaxSearches is how many error-text searches of the Jobs page (the only reads no
	// index serves: one can read the whole history) run at once; another one answers
	// 503 Service Unavailable with Retry-After. Keep it below the pool's size, so that
	// searches never hold every connection. Default 2; negative: no cap.
	MaxSearches int
	// OldestAvailableWarn is the age of a queue's oldest available job past which the
	// Overview shows it in red. Default 5 minutes.
	OldestAvailableWarn time.Duration
	// Refresh is how often the Overview, Queues and Versions pages reload their data in
	// the browser. Default 5 seconds; negative turns it off.
	Refresh time.Duration
	// Logger receives errors of database reads and writes. Default slog.Default().
	Logger *slog.Logger
}

// bounded is ctx with Options.QueryTimeout, if any.
func (h *handler) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if h.opt.QueryTimeout > 0 {
		return context.WithTimeout(ctx, h.opt.QueryTimeout)
	}
	return context.WithCancel(ctx)
}

// minSecretLen is the shortest bearer token or basic-auth password accepted: 16 bytes
// is 128 bits when random, and rules out a word or a typo'd empty value.
const minSecretLen = 16

// Validate reports what makes o unusable, naming the field; New calls it.
func (o Options) Validate() error {
	if (o.BasicUser == "") != (o.BasicPassword == "") {
		return errors.New("dashboard: Options.BasicUser and Options.BasicPassword must be set together")
	}
	if o.Prefix != "" && !strings.HasPrefix(o.Prefix, "/") {
		return fmt.Errorf("dashboard: Options.Prefix %q must start with /", o.Prefix)
	}
	for _, s := range []struct{ name, v string }{{"BearerToken", o.BearerToken}, {"BasicPassword", o.BasicPassword}} {
		if s.v == "" {
			continue
		}
		if strings.TrimSpace(s.v) != s.v {
			return fmt.Errorf("dashboard: Options.%s starts or ends with white space: a copy-and-paste slip, refused", s.name)
		}
		if len(s.v) < minSecretLen {
			return fmt.Errorf("dashboard: Options.%s is %d bytes: use at least %d (e.g. openssl rand -hex 16)", s.name, len(s.v), minSecretLen)
		}
	}
	_, err := newHostCheck(o.AllowedHosts)
	return err
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
	flash *flasher
	hosts *hostCheck
	log   *slog.Logger
	// searches holds a token per error-text search under way (nil: no cap).
	searches chan struct{}
}

// New returns the dashboard over db (a *pgxpool.Pool, usually).
func New(db runtime.DBTX, opt Options) (http.Handler, error) {
	if db == nil {
		return nil, errors.New("dashboard: no database")
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	hosts, err := newHostCheck(opt.AllowedHosts)
	if err != nil {
		return nil, err
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
	if opt.QueryTimeout == 0 {
		opt.QueryTimeout = 10 * time.Second
	}
	if opt.MaxSearches == 0 {
		opt.MaxSearches = 2
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c, err := newCSRF()
	if err != nil {
		return nil, err
	}
	fl, err := newFlasher()
	if err != nil {
		return nil, err
	}
	h := &handler{db: db, opt: opt, pages: pages, csrf: c, flash: fl, hosts: hosts, log: opt.Logger}
	if opt.MaxSearches > 0 {
		h.searches = make(chan struct{}, opt.MaxSearches)
	}

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
	mux.HandleFunc("GET /limits", h.limits)
	mux.HandleFunc("GET /workflows", h.workflows)
	mux.HandleFunc("GET /workflows/{id}", h.workflow)
	mux.HandleFunc("GET /events", h.events)
	mux.HandleFunc("POST /jobs/{id}/retry", h.mutation(h.retryJob, true))
	mux.HandleFunc("POST /jobs/{id}/cancel", h.mutation(h.cancelJob, true))
	mux.HandleFunc("POST /jobs/{id}/delete", h.mutation(h.deleteJob, true))
	mux.HandleFunc("POST /workflows/{id}/retry", h.mutation(h.retryWorkflow, true))
	mux.HandleFunc("POST /workflows/{id}/cancel", h.mutation(h.cancelWorkflow, true))
	mux.HandleFunc("POST /queues/{name}/pause", h.mutation(h.pauseQueue, true))
	mux.HandleFunc("POST /queues/{name}/resume", h.mutation(h.resumeQueue, true))
	mux.HandleFunc("POST /limits/{scope}/{name}/set", h.mutation(h.setLimit, true))
	mux.HandleFunc("POST /limits/{scope}/{name}/reset", h.mutation(h.resetLimit, true))
	mux.HandleFunc("POST /failed/retry", h.mutation(h.retryGroup, false)) // bounded per batch
	mux.HandleFunc("POST /failed/delete", h.mutation(h.deleteGroup, false))
	mux.HandleFunc("POST /events/retry", h.mutation(h.retryEvents, true))

	root := h.secure(mux)
	if p := strings.TrimSuffix(opt.Prefix, "/"); p != "" {
		root = http.StripPrefix(p, root)
	}
	return root, nil
}

// secure refuses a request for another host (see hostCheck), authenticates the
// request (when configured), sets headers that keep the pages from being framed,
// sniffed or given scripts from elsewhere, and bounds the request's database work.
func (h *handler) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		if why := h.hosts.refuse(r); why != "" {
			h.log.WarnContext(r.Context(), "jobc dashboard: refused "+r.Method+" "+r.URL.Path+": unknown host", "host", r.Host)
			hd.Set("X-Content-Type-Options", "nosniff")
			http.Error(w, why, http.StatusMisdirectedRequest)
			return
		}
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
		if r.Method != http.MethodPost { // actions bound their own work (see mutation)
			ctx, cancel := h.bounded(r.Context())
			defer cancel()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}
