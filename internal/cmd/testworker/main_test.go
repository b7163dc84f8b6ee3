package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// TestFlowFlags: the flow control flags set chaosjob.Limits, and bad values exit 2
// before anything starts (no DATABASE_URL is needed to tell).
func TestFlowFlags(t *testing.T) {
	o, err := parseFlags([]string{"-concurrency-by-key", "3", "-rate-by-key", "10/1.5s", "-queue-concurrency", "7", "-queue-rate", "100/1m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := chaosjob.Limits{Concurrency: 3, Rate: runtime.Rate{Limit: 10, Per: 1500 * time.Millisecond},
		QueueConcurrency: 7, QueueRate: runtime.Rate{Limit: 100, Per: time.Minute}}
	if o.limits != want {
		t.Errorf("limits %+v, want %+v", o.limits, want)
	}
	if o, err := parseFlags([]string{"-sequence-by-key"}, io.Discard); err != nil || !o.limits.Sequence {
		t.Errorf("-sequence-by-key: %+v, %v; want a sequence", o.limits, err)
	}

	t.Setenv("DATABASE_URL", "")
	for _, args := range [][]string{
		{"-rate-by-key", "10"},
		{"-rate-by-key", "0/1s"},
		{"-rate-by-key", "10/0s"},
		{"-rate-by-key", "10/-1s"},
		{"-queue-rate", "x/1s"},
		{"-queue-rate", "5/soon"},
		{"-concurrency-by-key", "-1"},
		{"-queue-concurrency", "-1"},
		{"-sequence-by-key", "-concurrency-by-key", "2"},
	} {
		var stderr strings.Builder
		if code := run(args, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("testworker %q: exit %d, want 2 with a message; stderr:\n%s", args, code, stderr.String())
		}
	}
}
