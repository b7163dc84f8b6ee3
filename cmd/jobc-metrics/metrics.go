package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
)

func newMetrics() *cobra.Command {
	var (
		dbf          *cli.DBFlags
		addr         string
		ttl, timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Serve the database-side Prometheus gauges of the whole fleet on /metrics",
		Long: `jobc metrics serves, on http://ADDR/metrics, what the database says about every queue:
jobc_jobs{queue,kind,state} for unfinished jobs, jobc_queue_oldest_available_age_seconds,
jobc_queue_paused, jobc_workers, jobc_database_up, and the flow control of each kind and
queue: jobc_limit_waiting_jobs, jobc_limit_running_jobs, jobc_limit_keys, the limits in
force and jobc_limit_utilisation, each {scope,name}. One exporter is enough for a fleet:
the workers' own endpoints (contrib/prometheus WorkerCollector) count what each of them
did. However often it is scraped, it reads the database at most once per --ttl, each
read bounded by --timeout. It exits 1 at start when the database does not answer or
lacks jobc's migrations, rather than serve jobc_database_up 0 for a mistake.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ttl <= 0 || timeout <= 0 {
				return cli.Usagef(cmd, "--ttl and --timeout must be positive (got %s, %s)", ttl, timeout)
			}
			ctx := cmd.Context()
			t, err := dbf.Target(cmd)
			if err != nil {
				return err
			}
			pool, err := t.Pool(ctx, "jobc metrics", 2) // one read at a time, and a spare
			if err != nil {
				return err
			}
			defer pool.Close()
			// A database without jobc's tables would be reported as down on every scrape:
			// say why once, at start, as the relay does.
			if err := t.CheckSchema(ctx, pool); err != nil {
				return err
			}
			reg := prometheus.NewRegistry()
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			reg.MustRegister(jobcprom.NewDBCollector(pool, jobcprom.DBOptions{TTL: ttl, Timeout: timeout, Logger: logger}))
			mux := http.NewServeMux()
			mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("jobc metrics: listen on %s: %w", addr, err)
			}
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.OutOrStdout(), "serving the jobc gauges on http://%s/metrics\n", ln.Addr())
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			select {
			case err := <-served:
				return fmt.Errorf("jobc metrics: %w", err)
			case <-ctx.Done():
			}
			shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
			defer cancel()
			if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("jobc metrics: shut down: %w", err)
			}
			return nil
		},
	}
	dbf = cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:9090", "address to serve /metrics on")
	cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Second, "how long one read of the database serves scrapes")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "bound of one read of the database")
	return cmd
}
