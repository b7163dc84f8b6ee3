package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/dberr"
)

// Throughput is how many jobs of one queue finished in each of a series of equal time
// buckets, oldest bucket first, ending now.
type Throughput struct {
	Queue     string
	Bucket    time.Duration
	Completed []int64 // per bucket, oldest first
	Failed    []int64 // failed for good (retries are not counted)
	Cancelled []int64
}

// ListQueueThroughput returns, for every queue that finished a job within window, the jobs
// finished per bucket of that width, ordered by queue. window must be a positive
// multiple of bucket, at most 1,000 buckets.
func ListQueueThroughput(ctx context.Context, dbtx DBTX, window, bucket time.Duration) ([]Throughput, error) {
	if bucket <= 0 || window < bucket || window%bucket != 0 || window/bucket > 1000 {
		return nil, fmt.Errorf("jobc: queue throughput: window %s is not a positive multiple (at most 1000) of bucket %s", window, bucket)
	}
	n := int(window / bucket)
	rows, err := db.New(dbtx).QueueThroughput(ctx, db.QueueThroughputParams{BucketSecs: bucket.Seconds(), WindowSecs: window.Seconds()})
	if err != nil {
		return nil, fmt.Errorf("jobc: queue throughput: %w", dberr.Describe(err))
	}
	var out []Throughput
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Queue != r.Queue {
			out = append(out, Throughput{Queue: r.Queue, Bucket: bucket,
				Completed: make([]int64, n), Failed: make([]int64, n), Cancelled: make([]int64, n)})
		}
		b := int(r.Bucket)
		if b < 0 || b >= n { // a row finished exactly at the window's edge, or a clock step
			continue
		}
		t := &out[len(out)-1]
		i := n - 1 - b // bucket 0 is the newest: store oldest first
		switch State(r.State) {
		case StateCompleted:
			t.Completed[i] += r.Jobs
		case StateFailed:
			t.Failed[i] += r.Jobs
		case StateCancelled:
			t.Cancelled[i] += r.Jobs
		}
	}
	return out, nil
}
