package runtime

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/runtime/internal/dbconn"
	"github.com/jobc-dev/jobc/runtime/internal/notifier"
)

// listenLoop runs the worker's notification listener (package notifier) until ctx is
// done: it wakes the queue named by each jobc notification, cancels the handler named
// by each jobc_cancel notification, and pauses or resumes the queue named by each
// jobc_queues notification. After each (re)connect it wakes every queue, since
// notifications sent while it was away are lost (cancellations also arrive through
// heartbeats).
func (w *Worker) listenLoop(ctx context.Context, queues []*queue) {
	byName := make(map[string]*queue, len(queues))
	for _, q := range queues {
		byName[q.name] = q
	}
	notifier.Run(ctx, notifier.Config{
		// A connection of its own, made from the pool's configuration.
		ConnConfig: func() *pgx.ConnConfig {
			cfg := w.pool.Config().ConnConfig.Copy()
			dbconn.Configure(cfg)
			dbconn.Name(cfg, w.cfg.ID)
			return cfg
		},
		StatementTimeout: w.cfg.StatementTimeout,
		Check:            w.cfg.LeaseDuration / 3, // as often as the heartbeat
		Retired: func() <-chan struct{} {
			_, retired := w.health.Current()
			return retired
		},
		Stalled: w.health.Stalled,
		Log:     w.log,
	}, &listener{w: w, byName: byName})
}

// listener is what the worker does with its notifications.
type listener struct {
	w      *Worker
	byName map[string]*queue
}

func (l *listener) Connected(context.Context) {
	l.w.status.listening.Store(true)
	for _, q := range l.byName {
		signal(q.wake)
	}
}

func (l *listener) Disconnected(context.Context) { l.w.status.listening.Store(false) }

func (l *listener) Notified(ctx context.Context, n *pgconn.Notification) {
	switch n.Channel {
	case "jobc":
		if q := l.byName[n.Payload]; q != nil {
			q.notified.Add(1)
			signal(q.wake)
		}
	case "jobc_queues":
		l.w.onQueueNotification(ctx, l.byName, n.Payload)
	case "jobc_cancel":
		if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil && l.w.running.Cancel(id, errCancelled) {
			l.w.log.InfoContext(ctx, "jobc worker: cancelling a running job on request", "job_id", id)
		}
	}
}
