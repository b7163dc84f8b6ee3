package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/runtime"
)

// The environment variables that configure the dashboard's authentication: secrets
// stay out of the command line, where `ps` shows them to every user of the machine.
const (
	envUIToken    = "JOBC_UI_TOKEN"
	envUIUser     = "JOBC_UI_USER"
	envUIPassword = "JOBC_UI_PASSWORD"
)

func newUI(o *options) *cobra.Command {
	var (
		addr, prefix           string
		readOnly, hidePayloads bool
		allowedHosts           []string
		tlsCert, tlsKey        string
		queryTimeout           time.Duration
		maxSearches            int
	)
	var db *cli.DBFlags
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web dashboard for the database at $DATABASE_URL",
		Long: `jobc ui serves jobc's web dashboard: queues, jobs, failed groups, versions and periodic
jobs, with retry, cancel, delete and pause. It listens on loopback by default. On any
other address it needs authentication, from the environment:

  ` + envUIToken + `                    a bearer token ("Authorization: Bearer <token>")
  ` + envUIUser + ` and ` + envUIPassword + `   basic-auth credentials (a browser asks for them)

A token or password must be at least 16 bytes, with no white space at either end.

On loopback it answers only requests for localhost, 127.0.0.1 or [::1] at its port,
which defeats DNS rebinding (a page of another site pointing its name at 127.0.0.1);
behind a reverse proxy, allow the name the proxy sends with --allowed-host. With
--tls-cert and --tls-key it serves HTTPS.

The Periodic page reads the schedules from the project's jobc.yaml (see -C).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !strings.HasPrefix(prefix, "/") {
				return cli.Usagef(cmd, "--prefix %q must start with /", prefix)
			}
			opt := dashboard.Options{Prefix: prefix, ReadOnly: readOnly, HidePayloads: hidePayloads,
				BearerToken: os.Getenv(envUIToken), BasicUser: os.Getenv(envUIUser), BasicPassword: os.Getenv(envUIPassword),
				AllowedHosts: allowedHosts, QueryTimeout: queryTimeout, MaxSearches: maxSearches}
			if (opt.BasicUser == "") != (opt.BasicPassword == "") {
				return cli.Usagef(cmd, "set both %s and %s for basic authentication, or neither", envUIUser, envUIPassword)
			}
			if err := opt.Validate(); err != nil {
				// Name the variables and flags the user set, not the Go fields.
				msg := strings.NewReplacer("dashboard: ", "", "Options.BearerToken", envUIToken, "Options.BasicPassword", envUIPassword,
					"Options.AllowedHosts", "--allowed-host").Replace(err.Error())
				return cli.Usagef(cmd, "%s", msg)
			}
			if queryTimeout < 0 {
				return cli.Usagef(cmd, "--query-timeout %s is negative: give a duration such as 10s", queryTimeout)
			}
			if maxSearches < 0 {
				return cli.Usagef(cmd, "--max-searches %d is negative", maxSearches)
			}
			tlsConfig, err := loadTLS(tlsCert, tlsKey)
			if err != nil {
				return cli.Usagef(cmd, "%v", err)
			}
			loopback, err := isLoopback(addr)
			if err != nil {
				return cli.Usagef(cmd, "--addr: %v", err)
			}
			if !loopback && opt.BearerToken == "" && opt.BasicUser == "" {
				return cli.Usagef(cmd, "--addr %s is not a loopback address: anyone who reaches it could retry and delete jobs; "+
					"set %s (a bearer token) or %s and %s (basic auth) in the environment, or listen on 127.0.0.1", addr, envUIToken, envUIUser, envUIPassword)
			}
			types, err := scheduledTypes(o.dir)
			if err != nil {
				return err
			}
			opt.JobTypes = types
			return serveUI(cmd.Context(), cmd, db, addr, opt, tlsConfig)
		},
	}
	// A statement bound as every database command has; QueryTimeout bounds each
	// request's work within it.
	db = cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	cmd.Flags().StringVar(&prefix, "prefix", "/", "path to serve the dashboard under, e.g. /jobs/")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "show everything, change nothing (mutations are refused with 403)")
	cmd.Flags().BoolVar(&hidePayloads, "hide-payloads", false, "never show job payloads, metadata or unique keys")
	cmd.Flags().StringArrayVar(&allowedHosts, "allowed-host", nil, "a host name requests may use besides localhost and the loopback addresses, e.g. the one a proxy sends (NAME or NAME:PORT; repeatable)")
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) file; needs --tls-key")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	cmd.Flags().DurationVar(&queryTimeout, "query-timeout", 10*time.Second, "bound on each request's database work; past it the page answers 503")
	cmd.Flags().IntVar(&maxSearches, "max-searches", 2, "how many searches by error text run at once; more answer 503")
	return cmd
}

// loadTLS reads the certificate and key of --tls-cert and --tls-key: both or neither
// (nil: plain HTTP).
func loadTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key go together: give both (HTTPS) or neither (HTTP)")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// isLoopback reports whether addr (host:port) listens only on the loopback interface.
// An empty host listens on every interface.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// scheduledTypes reads the job types with a schedule from the project in dir. The
// schedules live in the application's spec, not the database, so `jobc ui` reads the
// same jobc.yaml the generated JobTypes() come from (the worker registry records what
// workers decode, not what they schedule). A directory without jobc.yaml gives none:
// the Periodic page then says how to point at one.
func scheduledTypes(dir string) ([]*runtime.JobType, error) {
	if !hasConfig(dir) {
		return nil, nil
	}
	p, err := spec.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("jobc ui: read the schedules from %s: %w", dir, err)
	}
	var out []*runtime.JobType
	for _, j := range p.Jobs {
		if j.Schedule != nil {
			out = append(out, &runtime.JobType{Kind: j.Kind, Queue: j.Queue,
				Schedule: &runtime.Schedule{Cron: j.Schedule.Cron, Timezone: j.Schedule.Timezone}})
		}
	}
	return out, nil
}

func hasConfig(dir string) bool {
	for _, n := range spec.ConfigNames() {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// serveUI serves the dashboard until ctx is cancelled.
func serveUI(ctx context.Context, cmd *cobra.Command, db *cli.DBFlags, addr string, opt dashboard.Options, tlsConfig *tls.Config) error {
	t, err := db.Target(cmd)
	if err != nil {
		return err
	}
	// Connecting here checks at start that the server answers, within the connect timeout.
	pool, err := t.Pool(ctx, "jobc ui", 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := t.CheckSchema(ctx, pool); err != nil {
		return err
	}
	opt.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	h, err := dashboard.New(pool, opt)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(opt.Prefix, h)
	if opt.Prefix != "/" {
		mux.Handle("/{$}", http.RedirectHandler(opt.Prefix, http.StatusFound))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("jobc ui: %w", err)
	}
	scheme := "http"
	if tlsConfig != nil {
		ln, scheme = tls.NewListener(ln, tlsConfig), "https"
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	mode := ""
	if opt.ReadOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "jobc ui: serving %s://%s%s%s\n", scheme, ln.Addr(), opt.Prefix, mode)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("jobc ui: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("jobc ui: shut down: %w", err)
	}
	return nil
}
