package cli

import (
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]runtime.Rate{
		"100/1m":   {Limit: 100, Per: time.Minute},
		"100/m":    {Limit: 100, Per: time.Minute},
		"5/30s":    {Limit: 5, Per: 30 * time.Second},
		" 2/1h30m": {Limit: 2, Per: 90 * time.Minute},
		"1/h":      {Limit: 1, Per: time.Hour},
	} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, err := ParseRate(FormatRate(got)); err != nil || back != got {
			t.Errorf("ParseRate(FormatRate(%+v)) = %+v, %v: the printed rate does not read back", got, back, err)
		}
	}
	for _, in := range []string{"", "100", "100/", "/1m", "0/1m", "-1/1m", "x/1m", "100/0s", "100/-1m", "100/soon", "1.5/1m"} {
		if r, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %+v, want an error", in, r)
		}
	}
	for d, want := range map[time.Duration]string{time.Minute: "1m", time.Hour: "1h", 90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s", 61 * time.Second: "1m1s"} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
