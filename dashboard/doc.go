// Package dashboard is jobc's web dashboard: an [http.Handler] that shows where the
// queues stand, what failed and why, why a waiting job waits, the flow control in
// force, the state of a rolling deploy, the periodic jobs, the workflows and the
// outbox's events, and lets an operator retry, cancel and delete jobs, pause queues,
// override limits, retry and cancel workflows and send failed events again.
//
// It renders HTML on the server with html/template; its stylesheet and its little
// JavaScript (live refresh, confirmations) are embedded, so it needs no network and no
// build step. It reads and changes jobs only through the runtime's control and
// inspection API and never builds SQL of its own.
//
// Mount it in an application, under a prefix:
//
//	h, err := dashboard.New(pool, dashboard.Options{Prefix: "/jobs/", JobTypes: jobs.JobTypes()})
//	mux.Handle("/jobs/", h)
//
// or serve it on its own with `jobc ui`. Every mutation is a POST carrying a CSRF
// token (a double-submitted SameSite=Strict cookie, and the Origin and Sec-Fetch-Site
// headers must name this site); [Options.ReadOnly] removes every mutation from the
// pages and refuses them on the server; [Options.HidePayloads] keeps payloads,
// metadata and unique keys off the pages, and a waiting job's flow key (made of
// payload values) out of why it waits. The handler does no authentication of its
// own unless a token or basic-auth credentials are set in [Options]: an application
// mounting it puts it behind its own.
//
// Against hostile browsers and data: a request that arrived on a loopback address
// must name a loopback host or one of [Options.AllowedHosts] (DNS rebinding); the
// banner after an action shows only text the server signed; a failed group's forms
// carry an opaque key, not its message; each request's database work is bounded by
// [Options.QueryTimeout] and error-text searches by [Options.MaxSearches]; lists
// never read payloads.
package dashboard
