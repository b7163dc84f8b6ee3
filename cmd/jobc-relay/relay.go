package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
	jobckafka "github.com/jobc-dev/jobc/contrib/kafka"
	jobcnats "github.com/jobc-dev/jobc/contrib/nats"
	jobcamqp "github.com/jobc-dev/jobc/contrib/rabbitmq"
	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// relayFlags are the flags of `jobc relay`.
type relayFlags struct {
	db                         *cli.DBFlags
	to, exchange, msgIDPrefix  string
	batch, concurrency         int
	lease, retention, logStats time.Duration
}

func newRelay(dir *string) *cobra.Command {
	var f relayFlags
	cmd := &cobra.Command{
		Use:   "relay --to URL",
		Short: "Publish the outbox's events to NATS JetStream, RabbitMQ or Kafka until stopped",
		Long: `jobc relay claims the events Publish<Event> wrote to the outbox (jobc_events) and publishes
them to the broker named by --to, marking each published once the broker confirmed it:

  nats://host:4222[,nats://host2:4222]   JetStream; a stream must bind each relayed subject
  amqp://user:pass@host:5672/vhost       RabbitMQ; --exchange names the exchange (default "")
  kafka://host:9092[,host2:9092]         Kafka; the event's subject is the topic

The relay publishes only the events jobc.yaml declares (in the directory -C names, the
working directory by default): an outbox row of an undeclared event or version, with
another subject than its event's, or with a payload its version's schema rejects is
never sent; it is kept as failed with the reason. Run the relay with a spec at least
as new as the producers'. The relay connects before it claims anything: a NATS or
RabbitMQ broker that does not answer, or a relayed subject no JetStream stream binds,
exits 1 at once.

Run as many relays as you like: claims never overlap, and each ordering key has one
event in flight at a time. SIGINT or SIGTERM stops claiming, lets the batches in flight
finish and exits 0. Events the broker refuses for good are kept as failed: see them with
'jobc relay failed' or 'jobc status', and send them again with 'jobc relay retry'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.to == "" {
				return cli.Usagef(cmd, "--to is required (nats://, amqp:// or kafka://)")
			}
			if f.batch <= 0 || f.concurrency <= 0 || f.lease <= 0 {
				return cli.Usagef(cmd, "--batch, --concurrency and --lease must be positive")
			}
			ctx := cmd.Context()
			open, err := sinkFor(f)
			if err != nil {
				return cli.Usagef(cmd, "--to %s: %v", redact(f.to), err)
			}
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			t, err := f.db.Target(cmd)
			if err != nil {
				return err
			}
			// A connection per batch in flight and a spare.
			pool, err := t.Pool(ctx, "jobc relay", int32(f.concurrency+2))
			if err != nil {
				return err
			}
			defer pool.Close()
			if err := t.CheckSchema(ctx, pool); err != nil {
				return err
			}
			// The database first, as every database command checks it; then the spec.
			events, err := declaredEvents(*dir)
			if err != nil {
				return err
			}
			var subjects []string
			for _, e := range events {
				if e.Relay && !slices.Contains(subjects, e.Subject) {
					subjects = append(subjects, e.Subject)
				}
			}
			sink, err := open(ctx, subjects)
			if err != nil {
				return fmt.Errorf("jobc relay: %w", err)
			}
			defer sink.Close()
			cfg := relay.Config{Sink: sink, Events: events, Logger: logger, BatchSize: f.batch, Concurrency: f.concurrency,
				LeaseDuration: f.lease, Retention: f.retention}
			if f.logStats > 0 {
				cfg.Hooks, cfg.StatsInterval = []runtime.Hook{statsLogger{logger}}, f.logStats
			}
			r, err := relay.New(pool, cfg)
			if err != nil {
				return cli.Usagef(cmd, "%v", err)
			}
			logger.InfoContext(ctx, "jobc relay: publishing the outbox", slog.String("to", redact(f.to)),
				slog.Int("batch", f.batch), slog.Int("concurrency", f.concurrency), slog.Int("declared_events", len(events)))
			if err := r.Run(ctx); err != nil {
				return t.Explain(ctx, pool, err)
			}
			logger.InfoContext(context.WithoutCancel(ctx), "jobc relay: stopped")
			return nil
		},
	}
	fl := cmd.Flags()
	f.db = cli.AddDBFlags(fl, cli.DefaultStatementTimeout)
	fl.StringVar(&f.to, "to", "", "the broker: nats://…, amqp://… or kafka://…")
	fl.StringVar(&f.exchange, "exchange", "", "RabbitMQ: the exchange to publish to (default: the default exchange)")
	fl.StringVar(&f.msgIDPrefix, "msg-id-prefix", "", "NATS: put before the event id in Nats-Msg-Id (several databases, one stream)")
	fl.IntVar(&f.batch, "batch", 500, "events per claim and per publication")
	fl.IntVar(&f.concurrency, "concurrency", 2, "batches in flight at once")
	fl.DurationVar(&f.lease, "lease", 30*time.Second, "how long a claimed batch is this relay's before another may send it")
	fl.DurationVar(&f.retention, "retention", 0, "delete events published longer ago than this (0: keep them)")
	fl.DurationVar(&f.logStats, "log-stats", time.Minute, "log the relay lag and the pending and failed counts this often (0: never)")
	cmd.AddCommand(newRelayFailed(), newRelayRetry())
	return cmd
}

// declaredEvents loads the spec in dir and describes its events to the relay as the
// generated code does: runtime.NewEventType over each version's canonical JSON Schema,
// the text the generator writes into the generated package. Subscribers and upcasts
// are left out: the relay checks rows, it does not decode or fan them out.
func declaredEvents(dir string) ([]*runtime.EventType, error) {
	p, err := spec.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("jobc relay: the relay publishes only the events the spec declares: %w", err)
	}
	var events []*runtime.EventType
	relayed := 0
	for _, e := range p.Events {
		t := runtime.EventType{Name: e.Name, Subject: e.Subject, OrderingKey: e.Key, Relay: e.Relay, WriteVersion: e.Payload.WriteVersion}
		for _, v := range e.Payload.Versions {
			canon, err := v.Schema.Canonical()
			if err != nil {
				return nil, fmt.Errorf("jobc relay: %s: events.%s version %d: %w", v.Pos, e.Name, v.Number, err)
			}
			t.Versions = append(t.Versions, runtime.Version{Number: v.Number, Schema: string(canon)})
		}
		et, err := runtime.NewEventType(t)
		if err != nil {
			return nil, fmt.Errorf("jobc relay: %s: %w", e.Pos, err)
		}
		events = append(events, et)
		if e.Relay {
			relayed++
		}
	}
	if relayed == 0 {
		return nil, fmt.Errorf("jobc relay: %s declares no relayed event (relay: true): there is nothing to publish", filepath.Join(dir, p.File))
	}
	return events, nil
}

// sinkFor returns what opens the sink --to names, or why it names none. Opening it
// connects, so that a broker that does not answer stops the relay before it starts
// rather than leaving it retrying; for NATS it also checks that a stream binds each
// of the subjects the relay publishes to.
func sinkFor(f relayFlags) (func(ctx context.Context, subjects []string) (relay.Sink, error), error) {
	u, err := url.Parse(strings.SplitN(f.to, ",", 2)[0])
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "nats", "tls":
		return func(ctx context.Context, subjects []string) (relay.Sink, error) {
			sink, err := jobcnats.Connect(f.to, jobcnats.Options{MsgIDPrefix: f.msgIDPrefix})
			if err != nil {
				return nil, err
			}
			if err := sink.CheckStreams(ctx, subjects...); err != nil {
				sink.Close()
				return nil, err
			}
			return sink, nil
		}, nil
	case "amqp", "amqps":
		return func(ctx context.Context, _ []string) (relay.Sink, error) {
			return jobcamqp.Dial(ctx, f.to, jobcamqp.Options{Exchange: f.exchange})
		}, nil
	case "kafka":
		var seeds []string
		for _, s := range strings.Split(f.to, ",") {
			s = strings.TrimPrefix(s, "kafka://")
			if s == "" || strings.Contains(s, "/") {
				return nil, fmt.Errorf("want kafka://host:port[,host:port...], got seed %q", s)
			}
			seeds = append(seeds, s)
		}
		return func(context.Context, []string) (relay.Sink, error) { return jobckafka.Connect(seeds) }, nil
	}
	return nil, fmt.Errorf("unknown scheme %q: want nats://, amqp:// or kafka://", u.Scheme)
}

// redact hides a URL's password, for logs.
func redact(to string) string {
	u, err := url.Parse(to)
	if err != nil || u.User == nil {
		return to
	}
	return u.Redacted()
}

// statsLogger logs the relay's periodic stats (a runtime.Hook).
type statsLogger struct{ logger *slog.Logger }

func (h statsLogger) OnEvent(ctx context.Context, e runtime.Event) {
	if s, ok := e.Result.(relay.Stats); ok && e.Err == nil {
		h.logger.InfoContext(ctx, "jobc relay: outbox", slog.String("lag", s.Lag.Round(time.Millisecond).String()),
			slog.Int64("pending", s.Pending), slog.Int64("failed", s.Failed))
	}
}

func newRelayFailed() *cobra.Command {
	var (
		dbf    *cli.DBFlags
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "failed",
		Short: "List the events the broker refused for good, newest first, with their errors",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit <= 0 {
				return cli.Usagef(cmd, "--limit must be positive")
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				failed, err := relay.ListFailed(ctx, db, limit)
				if err != nil {
					return err
				}
				if asJSON {
					return cli.WriteJSON(cmd.OutOrStdout(), cli.ToFailedEventsJSON(failed))
				}
				return cli.PrintFailedEvents(cmd, failed, "")
			})
		},
	}
	dbf = cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
	cmd.Flags().IntVar(&limit, "limit", 50, "list at most this many")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newRelayRetry() *cobra.Command {
	var (
		dbf *cli.DBFlags
		all bool
	)
	cmd := &cobra.Command{
		Use:   "retry {ID... | --all}",
		Short: "Make failed events pending again, for the relays to send",
		Long: `jobc relay retry makes failed events pending again, for the relays to send. A relay checks each
again against its spec: an event the spec does not declare (or of another subject, or
with an invalid payload) fails again without reaching the broker, until the relay runs
with a spec that declares it.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return cli.Usagef(cmd, "name event ids or pass --all")
			}
			ids := []int64{}
			for _, a := range args {
				id, err := strconv.ParseInt(a, 10, 64)
				if err != nil || id <= 0 {
					return cli.Usagef(cmd, "%q is not an event id", a)
				}
				ids = append(ids, id)
			}
			return cli.WithConn(cmd, dbf, func(ctx context.Context, db runtime.DBTX) error {
				n, err := relay.RetryFailed(ctx, db, ids)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d failed event(s) pending again\n", n)
				if !all && n < int64(len(ids)) {
					return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("jobc relay retry: %d of the %d ids name no failed event", int64(len(ids))-n, len(ids))}
				}
				return nil
			})
		},
	}
	dbf = cli.AddDBFlags(cmd.Flags(), cli.DefaultStatementTimeout)
	cmd.Flags().BoolVar(&all, "all", false, "retry every failed event")
	return cmd
}
