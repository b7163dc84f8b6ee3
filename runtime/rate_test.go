package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestParseRate: the LIMIT/PERIOD notation the CLI, the dashboard and the tests
// share reads what Rate.String writes, and refuses what is not a rate.
func TestParseRate(t *testing.T) {
	for in, want := range map[string]runtime.Rate{
		"100/1m":   {Limit: 100, Per: time.Minute},
		"100/m":    {Limit: 100, Per: time.Minute},
		"5/30s":    {Limit: 5, Per: 30 * time.Second},
		" 2/1h30m": {Limit: 2, Per: 90 * time.Minute},
		"1/h":      {Limit: 1, Per: time.Hour},
		"3/1.5s":   {Limit: 3, Per: 1500 * time.Millisecond},
	} {
		got, err := runtime.ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, err := runtime.ParseRate(got.String()); err != nil || back != got {
			t.Errorf("ParseRate(%q) = %+v, %v: the printed rate does not read back", got.String(), back, err)
		}
	}
	for _, in := range []string{"", "100", "100/", "/1m", "0/1m", "-1/1m", "x/1m", "100/0s", "100/-1m", "100/soon", "1.5/1m"} {
		if r, err := runtime.ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %+v, want an error", in, r)
		}
	}
	for r, want := range map[runtime.Rate]string{
		{Limit: 100, Per: time.Minute}:    "100/1m",
		{Limit: 1, Per: time.Hour}:        "1/1h",
		{Limit: 2, Per: 90 * time.Minute}: "2/1h30m",
		{Limit: 7, Per: 61 * time.Second}: "7/1m1s",
		{}:                                "none",
	} {
		if got := r.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", r, got, want)
		}
	}
}

// TestLimitsOutOfRange: numbers the database cannot hold, or a window below what it
// keeps, are refused by name before anything is stored, in the spec's flow control and
// in an operator's change alike.
func TestLimitsOutOfRange(t *testing.T) {
	for _, f := range []runtime.Flow{
		{Concurrency: 1 << 31},
		{Concurrency: -1},
		{Rate: runtime.Rate{Limit: 1 << 31, Per: time.Second}},
		{Rate: runtime.Rate{Limit: 5, Per: time.Microsecond}},
		{Rate: runtime.Rate{Limit: 5}},
	} {
		_, err := runtime.NewJobType(runtime.JobType{
			Kind: "k", Queue: "q", MaxAttempts: 1, WriteVersion: 1, Flow: &f,
			Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object"}`}},
		})
		if err == nil || !strings.Contains(err.Error(), "job type k") {
			t.Errorf("flow %+v: %v, want a refusal naming the job type", f, err)
		}
		err = runtime.SetLimit(context.Background(), nil, runtime.LimitChange{Scope: runtime.LimitKind, Name: "k", Concurrency: f.Concurrency, Rate: f.Rate})
		if err == nil || !strings.Contains(err.Error(), "set limit of kind k") {
			t.Errorf("set limit %+v: %v, want a refusal before any statement", f, err)
		}
	}
}
