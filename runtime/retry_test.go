package runtime_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestBackoffShapesAndJitterSpread: the three shapes grow as documented, the cap holds,
// and jitter spreads delays uniformly over ±Jitter around the nominal delay.
func TestBackoffShapesAndJitterSpread(t *testing.T) {
	zero := func() float64 { return 0.5 } // no jitter offset
	cases := []struct {
		b       runtime.Backoff
		attempt int
		want    time.Duration
	}{
		{runtime.Backoff{Kind: runtime.BackoffExponential, Initial: time.Second}, 1, time.Second},
		{runtime.Backoff{Kind: runtime.BackoffExponential, Initial: time.Second}, 4, 8 * time.Second},
		{runtime.Backoff{Kind: runtime.BackoffExponential, Initial: time.Second, Max: 5 * time.Second}, 4, 5 * time.Second},
		{runtime.Backoff{Kind: runtime.BackoffLinear, Initial: time.Second}, 4, 4 * time.Second},
		{runtime.Backoff{Kind: runtime.BackoffConstant, Initial: time.Second}, 9, time.Second},
		{runtime.Backoff{Kind: runtime.BackoffExponential, Initial: time.Second, Max: time.Hour}, 200, time.Hour},
	}
	for _, c := range cases {
		if got := c.b.Delay(c.attempt, zero); got != c.want {
			t.Errorf("%v attempt %d: %s, want %s", c.b, c.attempt, got, c.want)
		}
	}

	b := runtime.Backoff{Kind: runtime.BackoffConstant, Initial: 10 * time.Second, Jitter: 0.2}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	var sum float64
	minD, maxD := time.Duration(math.MaxInt64), time.Duration(0)
	buckets := make([]int, 10)
	for range n {
		d := b.Delay(1, r.Float64)
		sum += float64(d)
		minD, maxD = min(minD, d), max(maxD, d)
		buckets[int((float64(d)-8e9)/4e9*10)]++
	}
	if minD < 8*time.Second || maxD > 12*time.Second {
		t.Errorf("jitter 0.2 around 10s gave [%s, %s], want within [8s, 12s]", minD, maxD)
	}
	if maxD-minD < 3800*time.Millisecond {
		t.Errorf("jitter spread only [%s, %s]", minD, maxD)
	}
	if mean := time.Duration(sum / n); mean < 9900*time.Millisecond || mean > 10100*time.Millisecond {
		t.Errorf("mean %s, want about 10s", mean)
	}
	for i, c := range buckets {
		if c < n/10*8/10 || c > n/10*12/10 {
			t.Errorf("bucket %d has %d of %d delays: not uniform (%v)", i, c, n, buckets)
		}
	}
}

// classTypes returns a job type with the usual three classes.
func classTypes(t *testing.T, defaultClass string) *runtime.JobType {
	return emailType(t, func(jt *runtime.JobType) {
		jt.MaxAttempts = 5
		jt.Classes = []runtime.ErrorClass{
			{Name: "transient", Retry: true},
			{Name: "rate_limited", Retry: true, DelayFromError: true},
			{Name: "invalid", Retry: false},
		}
		jt.DefaultClass = defaultClass
	})
}

// runOne enqueues one job, runs a worker with handler h, and waits until the job
// reaches a state for which done returns true.
func runOne(t *testing.T, jt *runtime.JobType, cfg runtime.Config, h func(context.Context, *runtime.Job, emailPayload) error, done func(*runtime.JobInfo) bool) *runtime.JobInfo {
	t.Helper()
	pool := newDB(t)
	ctx := context.Background()
	e, err := runtime.Enqueue(ctx, pool, jt, emailPayload{N: 1, Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, jt, h); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	var info *runtime.JobInfo
	waitFor(t, "the job's expected state", 15*time.Second, func() bool {
		info, err = runtime.GetJob(ctx, pool, e.ID)
		return err == nil && done(info)
	})
	return info
}

func isState(s runtime.State) func(*runtime.JobInfo) bool {
	return func(i *runtime.JobInfo) bool { return i.State == s }
}

// TestRetryAfterSetsTheNextRun: a rate-limited error's retry-after, not the backoff,
// decides when the job runs again.
func TestRetryAfterSetsTheNextRun(t *testing.T) {
	t.Parallel()
	jt := classTypes(t, "")
	var first time.Time
	var gap time.Duration
	info := runOne(t, jt, testConfig(nil), func(ctx context.Context, job *runtime.Job, _ emailPayload) error {
		if job.Attempt == 1 {
			first = time.Now()
			return runtime.RetryAfter("rate_limited", 1500*time.Millisecond, errors.New("429 too many requests"))
		}
		gap = time.Since(first)
		return nil
	}, isState(runtime.StateCompleted))
	if gap < 1500*time.Millisecond || gap > 4*time.Second {
		t.Errorf("second attempt %s after the first, want about 1.5s (the retry-after)", gap)
	}
	if len(info.Errors) != 1 || info.Errors[0].Class != "rate_limited" || !strings.Contains(info.Errors[0].Error, "429") {
		t.Errorf("errors %+v", info.Errors)
	}
}

// TestPermanentClassFailsAtOnce: an error of a class without retries fails the job on
// its first attempt, and the job stays visible with its error.
func TestPermanentClassFailsAtOnce(t *testing.T) {
	t.Parallel()
	info := runOne(t, classTypes(t, "transient"), testConfig(nil), func(context.Context, *runtime.Job, emailPayload) error {
		return runtime.Classify("invalid", errors.New("no such customer"))
	}, isState(runtime.StateFailed))
	if info.Attempt != 1 || len(info.Errors) != 1 || info.Errors[0].Class != "invalid" {
		t.Errorf("attempt %d, errors %+v; want one invalid error", info.Attempt, info.Errors)
	}
}

// TestUnclassifiedErrorsUseTheDefaultClass: an error without a class is handled as the
// job's default class.
func TestUnclassifiedErrorsUseTheDefaultClass(t *testing.T) {
	t.Parallel()
	info := runOne(t, classTypes(t, "invalid"), testConfig(nil), func(context.Context, *runtime.Job, emailPayload) error {
		return errors.New("plain error")
	}, isState(runtime.StateFailed))
	if info.Attempt != 1 || info.Errors[0].Class != "invalid" {
		t.Errorf("attempt %d, errors %+v; want one error of the default class invalid", info.Attempt, info.Errors)
	}
}

// TestClassAttemptCapReplacesTheJobs: a class's max_attempts decides when errors of
// that class stop being retried.
func TestClassAttemptCapReplacesTheJobs(t *testing.T) {
	t.Parallel()
	jt := emailType(t, func(jt *runtime.JobType) {
		jt.MaxAttempts = 10
		jt.Classes = []runtime.ErrorClass{{Name: "flaky", Retry: true, MaxAttempts: 2}}
	})
	info := runOne(t, jt, testConfig(nil), func(context.Context, *runtime.Job, emailPayload) error {
		return runtime.Classify("flaky", errors.New("again"))
	}, isState(runtime.StateFailed))
	if info.Attempt != 2 {
		t.Errorf("failed after %d attempts, want the class cap 2", info.Attempt)
	}
}

// TestPanicIsRecordedAndRetried: a panicking handler does not take the worker down;
// the panic and its stack are recorded and the job is retried.
func TestPanicIsRecordedAndRetried(t *testing.T) {
	t.Parallel()
	info := runOne(t, emailType(t, nil), testConfig(nil), func(_ context.Context, job *runtime.Job, _ emailPayload) error {
		if job.Attempt == 1 {
			var m map[string]int
			m["boom"]++ //nolint:staticcheck // the nil map write is the panic under test
		}
		return nil
	}, isState(runtime.StateCompleted))
	if len(info.Errors) != 1 || info.Errors[0].Class != "panic" || !strings.Contains(info.Errors[0].Error, "assignment to entry in nil map") || !strings.Contains(info.Errors[0].Error, "retry_test.go") {
		t.Errorf("errors %+v; want the panic with its stack", info.Errors)
	}
}

// TestTimeoutCancelsTheHandler: a handler that passes its timeout gets its context
// cancelled, and the attempt is recorded as a timeout.
func TestTimeoutCancelsTheHandler(t *testing.T) {
	t.Parallel()
	jt := emailType(t, func(jt *runtime.JobType) { jt.Timeout = 100 * time.Millisecond; jt.MaxAttempts = 1 })
	var waited time.Duration
	info := runOne(t, jt, testConfig(nil), func(ctx context.Context, _ *runtime.Job, _ emailPayload) error {
		start := time.Now()
		<-ctx.Done()
		waited = time.Since(start)
		return ctx.Err()
	}, isState(runtime.StateFailed))
	if waited < 90*time.Millisecond || waited > 2*time.Second {
		t.Errorf("handler context cancelled after %s, want about 100ms", waited)
	}
	if info.Errors[0].Class != "timeout" || !strings.Contains(info.Errors[0].Error, "exceeded its timeout of 100ms") {
		t.Errorf("errors %+v", info.Errors)
	}
}
