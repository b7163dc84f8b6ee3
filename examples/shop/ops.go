package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// reportOps reads the worker's /readyz and /metrics the way a probe and a scraper
// would, and says what they show.
func (d *demo) reportOps(ctx context.Context, base string) {
	ready, err := get(ctx, base+"/readyz")
	if err != nil {
		d.say("readiness probe failed: %v", err)
		return
	}
	ready.Body.Close()
	resp, err := get(ctx, base+"/metrics")
	if err != nil {
		d.say("scrape failed: %v", err)
		return
	}
	defer resp.Body.Close()
	byOutcome := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "jobc_jobs_finished_total{") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		if _, rest, ok := strings.Cut(line, `outcome="`); ok {
			outcome, _, _ := strings.Cut(rest, `"`)
			byOutcome[outcome] += v
		}
	}
	d.say("readiness probe: %d; /metrics: jobc_jobs_finished_total completed %.0f, retried %.0f, failed %.0f",
		ready.StatusCode, byOutcome["completed"], byOutcome["retried"], byOutcome["failed"])
}

func get(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	return resp, nil
}
