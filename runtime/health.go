package runtime

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// HealthReport says whether a worker is healthy and, when it is not, why.
type HealthReport struct {
	Healthy bool     `json:"healthy"`
	Worker  string   `json:"worker"`
	Reasons []string `json:"reasons"` // empty when healthy
}

// workerStatus is what Health reads: the worker's loops write it as they go, with
// atomics, so that a probe costs the hot path nothing.
type workerStatus struct {
	running       atomic.Bool
	listening     atomic.Bool
	lastHeartbeat atomic.Int64 // unix nanoseconds of the last registry heartbeat that succeeded
	claimFailing  atomic.Bool  // claimErr != nil, read without the lock
	mu            sync.Mutex   // guards claimErr and claimFailed
	claimErr      error        // the last claim's error, nil once a claim succeeds
	claimFailed   time.Time    // when claims started failing
}

func (s *workerStatus) claimed(err error) {
	if err == nil && !s.claimFailing.Load() {
		return // the common case: no lock
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimFailing.Store(err != nil)
	if err == nil {
		s.claimErr = nil
		return
	}
	if s.claimErr == nil {
		s.claimFailed = time.Now()
	}
	s.claimErr = err
}

func (s *workerStatus) heartbeat() { s.lastHeartbeat.Store(time.Now().UnixNano()) }

// Health reports whether the worker is running, its claims succeed, its heartbeats
// are on time (the last one is at most two heartbeat intervals old, so a single slow
// one does not flap the probe) and its notification listener is connected. A worker
// whose listener is down still works by polling, but picks jobs up late: it is
// reported unhealthy so that the probe shows it.
func (w *Worker) Health() HealthReport {
	r := HealthReport{Worker: w.cfg.ID, Reasons: []string{}}
	s := &w.status
	if !s.running.Load() {
		r.Reasons = append(r.Reasons, "not running")
		return r
	}
	s.mu.Lock()
	if s.claimErr != nil {
		r.Reasons = append(r.Reasons, fmt.Sprintf("claims failing for %s: %v",
			time.Since(s.claimFailed).Round(time.Millisecond), dberr.Describe(s.claimErr)))
	}
	s.mu.Unlock()
	interval := w.cfg.LeaseDuration / 3
	if age := time.Since(time.Unix(0, s.lastHeartbeat.Load())); age > 2*interval {
		r.Reasons = append(r.Reasons, fmt.Sprintf("last heartbeat %s ago (every %s)",
			age.Round(time.Millisecond), interval))
	}
	if !s.listening.Load() {
		r.Reasons = append(r.Reasons, "notification listener not connected")
	}
	r.Healthy = len(r.Reasons) == 0
	return r
}

// HealthHandler serves Health for readiness probes: 200 when healthy, 503 when not,
// with the report as JSON.
func (w *Worker) HealthHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		r := w.Health()
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Cache-Control", "no-store")
		if !r.Healthy {
			rw.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(rw).Encode(r)
	})
}
