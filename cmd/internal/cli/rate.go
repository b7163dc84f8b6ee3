package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// ParseRate reads a rate limit as the CLI takes it, N/DURATION: "100/1m" is at most
// 100 starts in any minute. A unit alone stands for one of it ("100/m" is "100/1m").
func ParseRate(s string) (runtime.Rate, error) {
	n, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return runtime.Rate{}, fmt.Errorf("rate %q: want N/DURATION, such as 100/1m", s)
	}
	limit, err := strconv.Atoi(n)
	if err != nil || limit < 1 {
		return runtime.Rate{}, fmt.Errorf("rate %q: %q is not a count of at least 1 (want N/DURATION, such as 100/1m)", s, n)
	}
	d, err := time.ParseDuration(per)
	if err != nil {
		d, err = time.ParseDuration("1" + per)
	}
	if err != nil || d <= 0 {
		return runtime.Rate{}, fmt.Errorf("rate %q: %q is not a positive duration (want N/DURATION, such as 100/1m)", s, per)
	}
	return runtime.Rate{Limit: limit, Per: d}, nil
}

// FormatRate prints r as ParseRate reads it ("100/1m"), "-" for no limit.
func FormatRate(r runtime.Rate) string {
	if r.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%d/%s", r.Limit, ShortDuration(r.Per))
}

// ShortDuration is d without the zero units time.Duration prints at its end: "1m",
// not "1m0s"; "1h30m", not "1h30m0s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
