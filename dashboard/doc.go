// Package dashboard is jobc's web dashboard: an [http.Handler] that shows where the
// queues stand, what failed and why, the state of a rolling deploy and the periodic
// jobs, and lets an operator retry, cancel and delete jobs and pause queues.
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
// pages and refuses them on the server; [Options.HidePayloads] keeps payloads off the
// pages. The handler does no authentication of its own unless a token or basic-auth
// credentials are set in [Options]: an application mounting it puts it behind its own.
package dashboard
