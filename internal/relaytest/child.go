// Package relaytest holds what the tests of every broker sink share: a relay run as a
// separate process (the test binary itself, re-executed), outbox writes in business
// transactions, and the chaos scenario that kills the relay and restarts the broker
// while events flow, then checks what the broker received. It depends on no broker
// client: each sink's tests bring the broker-specific parts (ChaosBroker).
package relaytest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// The environment of a relay child process.
const (
	envChild    = "JOBC_RELAYTEST_CHILD" // set: the test binary runs a relay instead of tests
	envDatabase = "JOBC_RELAYTEST_DATABASE"
	envBroker   = "JOBC_RELAYTEST_BROKER"
	envTarget   = "JOBC_RELAYTEST_TARGET" // sink-specific: a stream, an exchange, ...
	envPrefix   = "JOBC_RELAYTEST_PREFIX" // of the subject of the one declared event
	envSettings = "JOBC_RELAYTEST_SETTINGS"
)

// ChildSettings are the relay settings of a child process; the chaos test derives its
// waits from them.
type ChildSettings struct {
	BatchSize      int
	Concurrency    int
	Poll           time.Duration
	Lease          time.Duration
	PublishTimeout time.Duration
	RetryInitial   time.Duration
	RetryMax       time.Duration
}

// DefaultSettings keep the chaos test quick: short leases and backoffs.
func DefaultSettings() ChildSettings {
	return ChildSettings{
		BatchSize: 200, Concurrency: 2, Poll: 20 * time.Millisecond, Lease: 3 * time.Second,
		PublishTimeout: time.Second, RetryInitial: 100 * time.Millisecond, RetryMax: time.Second,
	}
}

func (s ChildSettings) encode() string {
	return fmt.Sprintf("%d %d %s %s %s %s %s", s.BatchSize, s.Concurrency, s.Poll, s.Lease, s.PublishTimeout, s.RetryInitial, s.RetryMax)
}

func decodeSettings(text string) (ChildSettings, error) {
	var s ChildSettings
	var poll, lease, pub, ri, rm string
	if _, err := fmt.Sscan(text, &s.BatchSize, &s.Concurrency, &poll, &lease, &pub, &ri, &rm); err != nil {
		return s, fmt.Errorf("relaytest: settings %q: %w", text, err)
	}
	for _, d := range []struct {
		text string
		to   *time.Duration
	}{{poll, &s.Poll}, {lease, &s.Lease}, {pub, &s.PublishTimeout}, {ri, &s.RetryInitial}, {rm, &s.RetryMax}} {
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return s, fmt.Errorf("relaytest: settings %q: %w", text, err)
		}
		*d.to = v
	}
	return s, nil
}

// NewSink opens a sink on broker (a URL) publishing to target (sink-specific).
type NewSink func(ctx context.Context, broker, target string) (relay.Sink, error)

// MaybeRunChild runs a relay and exits when the test binary was started as a relay
// child process (StartRelay); otherwise it returns at once. Call it first in TestMain.
// The child relays until SIGTERM, then shuts down gracefully and exits 0.
func MaybeRunChild(newSink NewSink) {
	if os.Getenv(envChild) == "" {
		return
	}
	if err := runChild(newSink); err != nil {
		fmt.Fprintln(os.Stderr, "relay child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runChild(newSink NewSink) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	settings, err := decodeSettings(os.Getenv(envSettings))
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	pool, err := pgxpool.New(ctx, os.Getenv(envDatabase))
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer pool.Close()
	sink, err := newSink(ctx, os.Getenv(envBroker), os.Getenv(envTarget))
	if err != nil {
		return fmt.Errorf("open the sink: %w", err)
	}
	defer sink.Close()
	r, err := relay.New(pool, relay.Config{
		Sink: sink, Events: []*runtime.EventType{ChaosEventType(os.Getenv(envPrefix))}, Logger: logger, BatchSize: settings.BatchSize, Concurrency: settings.Concurrency,
		PollInterval: settings.Poll, LeaseDuration: settings.Lease, PublishTimeout: settings.PublishTimeout,
		RetryInitial: settings.RetryInitial, RetryMax: settings.RetryMax,
	})
	if err != nil {
		return err
	}
	logger.Info("relay child running", slog.Int("pid", os.Getpid()))
	return r.Run(ctx)
}

// childEnv is the environment that makes the test binary a relay child.
func childEnv(database, broker, target, prefix string, s ChildSettings) []string {
	return append(os.Environ(),
		envChild+"=1", envDatabase+"="+database, envBroker+"="+broker, envTarget+"="+target, envPrefix+"="+prefix,
		envSettings+"="+s.encode(), "JOBC_RELAYTEST_PARENT="+strconv.Itoa(os.Getpid()))
}
