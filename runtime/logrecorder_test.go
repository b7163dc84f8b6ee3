package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// logRecorder is a slog.Handler that keeps every record as one line of text,
// "LEVEL message key=value ...", for tests that assert what a service logged.
type logRecorder struct {
	mu    *sync.Mutex
	lines *[]string
	attrs []slog.Attr
}

func newLogRecorder() (*slog.Logger, *logRecorder) {
	r := &logRecorder{mu: &sync.Mutex{}, lines: &[]string{}}
	return slog.New(r), r
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", rec.Level, rec.Message)
	for _, a := range r.attrs {
		fmt.Fprintf(&b, " %s=%s", a.Key, a.Value)
	}
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%s", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.lines = append(*r.lines, b.String())
	return nil
}

func (r *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{mu: r.mu, lines: r.lines, attrs: append(append([]slog.Attr{}, r.attrs...), attrs...)}
}

func (r *logRecorder) WithGroup(string) slog.Handler { return r }

// matching returns the recorded lines that contain every one of parts.
func (r *logRecorder) matching(parts ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range *r.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

// all returns every recorded line.
func (r *logRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, *r.lines...)
}
