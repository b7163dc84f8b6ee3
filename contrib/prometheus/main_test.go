package jobcprom_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return pgtest.NewSchema(t, func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := runtime.Migrate(ctx, pool)
		return err
	})
}

// testConfig has short intervals, so that waits derived from them are short.
func testConfig() runtime.Config {
	return runtime.Config{
		Logger:            slog.New(slog.DiscardHandler),
		PollInterval:      50 * time.Millisecond,
		SchedulerInterval: 20 * time.Millisecond,
		LeaseDuration:     5 * time.Second,
		ShutdownGrace:     5 * time.Second,
	}
}

type payload struct {
	N int `json:"n"`
}

func jobType(t testing.TB, kind, queue string) *runtime.JobType {
	t.Helper()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: kind, Queue: queue, Priority: 5, MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return jt
}

// startWorker runs w until the test ends.
func startWorker(t testing.TB, w *runtime.Worker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

// waitFor polls cond every tick until it holds or timeout passes, then fails with what
// state reports.
func waitFor(t testing.TB, what string, tick, timeout time.Duration, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; saw %s", timeout, what, state())
		}
		time.Sleep(tick)
	}
}

// scrape fetches url and returns every sample by its series, as written in the text
// format: name{label="value",...}.
func scrape(t testing.TB, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape %s: line %q: %v", url, line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return out
}

// series names a series as the text format writes it, labels in the order given
// (the client writes them sorted by name).
func series(name string, labels ...string) string {
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name + "{")
	for i := 0; i < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", labels[i], labels[i+1])
	}
	b.WriteByte('}')
	return b.String()
}
