package dashboard

import (
	"net/http"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// throughputWindow and throughputBucket shape the Overview's charts: the last hour in
// five-minute bars.
const (
	throughputWindow = time.Hour
	throughputBucket = 5 * time.Minute
)

// queueRow is a queue on the Overview and Queues pages.
type queueRow struct {
	runtime.QueueStat
	Late       bool // its oldest available job is older than Options.OldestAvailableWarn
	Throughput runtime.Throughput
	// Throttled is how many of its available jobs wait under flow control (the
	// Limits page): held back on purpose, not a backlog no worker keeps up with.
	Throttled int64
}

type overviewData struct {
	Queues  []queueRow
	Workers []runtime.WorkerInfo
	Warn    time.Duration
	Totals  runtime.QueueStat // the sums over every queue
	// Throttled is the sum of the queues' throttled jobs.
	Throttled int64
	// Unserved are the queues whose available jobs no live worker serves: nothing
	// claims them until one starts, however long they wait.
	Unserved []queueRow
	// History is how each finished state's history is kept (runtime.ListHistory);
	// Uncovered are the states none of whose dated partitions takes the jobs that
	// finish now: they go to the DEFAULT partition, which the pruner empties row by
	// row, because no worker's pruner has run for two partitions' time.
	History, Uncovered []runtime.History
	Now                time.Time // when Uncovered was decided
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	qs, err := h.queueRows(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ws, err := runtime.ListWorkers(r.Context(), h.db, 0)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	history, err := runtime.ListHistory(r.Context(), h.db)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := overviewData{Queues: qs, Workers: ws, Warn: h.opt.OldestAvailableWarn, History: history, Now: time.Now()}
	for _, s := range history {
		if !s.Covers(d.Now) {
			d.Uncovered = append(d.Uncovered, s)
		}
	}
	for _, q := range qs {
		if q.Available > 0 && q.Workers == 0 {
			d.Unserved = append(d.Unserved, q)
		}
		d.Totals.Available += q.Available
		d.Throttled += q.Throttled
		d.Totals.Running += q.Running
		d.Totals.CompletedLastHour += q.CompletedLastHour
		d.Totals.FailedLastHour += q.FailedLastHour
	}
	h.render(w, r, http.StatusOK, "overview", "Overview", true, d)
}

// queueRows joins the queue statistics with the last hour's throughput and the jobs
// flow control holds back.
func (h *handler) queueRows(r *http.Request) ([]queueRow, error) {
	stats, err := runtime.ListQueueStats(r.Context(), h.db)
	if err != nil {
		return nil, err
	}
	limits, err := runtime.ListLimits(r.Context(), h.db)
	if err != nil {
		return nil, err
	}
	throttled, err := h.throttled(r, limits)
	if err != nil {
		return nil, err
	}
	tps, err := runtime.ListQueueThroughput(r.Context(), h.db, throughputWindow, throughputBucket)
	if err != nil {
		return nil, err
	}
	byQueue := map[string]runtime.Throughput{}
	for _, t := range tps {
		byQueue[t.Queue] = t
	}
	n := int(throughputWindow / throughputBucket)
	out := make([]queueRow, len(stats))
	for i, s := range stats {
		t, ok := byQueue[s.Queue]
		if !ok {
			t = runtime.Throughput{Queue: s.Queue, Bucket: throughputBucket,
				Completed: make([]int64, n), Failed: make([]int64, n), Cancelled: make([]int64, n)}
		}
		out[i] = queueRow{QueueStat: s, Late: s.OldestAvailableAge > h.opt.OldestAvailableWarn, Throughput: t,
			Throttled: min(throttled[s.Queue], s.Available)}
	}
	return out, nil
}
