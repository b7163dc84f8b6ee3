package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	jobcprom "github.com/jobc-dev/jobc/contrib/prometheus"
)

func newMetrics() *cobra.Command {
	var (
		url, addr    string
		ttl, timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Serve the database-side Prometheus gauges of the whole fleet on /metrics",
		Long: `Metrics serves, on http://ADDR/metrics, what the database says about every queue:
jobc_jobs{queue,kind,state} for unfinished jobs, jobc_queue_oldest_available_age_seconds,
jobc_queue_paused, jobc_workers and jobc_database_up. One exporter is enough for a fleet:
the workers' own endpoints (contrib/prometheus WorkerCollector) count what each of them
did. However often it is scraped, it reads the database at most once per --ttl, each
read bounded by --timeout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ttl <= 0 || timeout <= 0 {
				return &exitError{code: 2, err: fmt.Errorf("jobc metrics: --ttl and --timeout must be positive (got %s, %s)", ttl, timeout)}
			}
			ctx := cmd.Context()
			pool, err := metricsPool(ctx, url)
			if err != nil {
				return err
			}
			defer pool.Close()
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
	cmd.Flags().StringVar(&url, "database-url", "", "PostgreSQL connection string (default $DATABASE_URL)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:9090", "address to serve /metrics on")
	cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Second, "how long one read of the database serves scrapes")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "bound of one read of the database")
	return cmd
}

// metricsPool opens a small pool to url (or $DATABASE_URL) named in pg_stat_activity.
func metricsPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if url == "" {
		url = os.Getenv("DATABASE_URL")
	}
	if url == "" {
		return nil, fmt.Errorf("jobc: no database: set DATABASE_URL or pass --database-url")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("jobc metrics: --database-url: %w", err)
	}
	cfg.MaxConns = 2 // one read at a time, and a spare
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "jobc metrics"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobc metrics: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("jobc: cannot reach PostgreSQL (%w): check DATABASE_URL and that the server is running", err)
	}
	return pool, nil
}
