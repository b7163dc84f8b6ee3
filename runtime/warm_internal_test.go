package runtime

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

// TestStartingNeverWaitsForTheApplication: start-up statements go to the application's
// pool only while it has a connection idle and the worker's own first connection is
// not ready; otherwise to the worker's own connections.
func TestStartingNeverWaitsForTheApplication(t *testing.T) {
	t.Parallel()
	base := pgtest.NewSchema(t, nil)
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaConnString(t, pgtest.SchemaOf(base)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	w := NewWorker(pool, Config{})

	a, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	a.Release() // one idle connection now
	if got := w.starting(); got != w.app {
		t.Errorf("with a connection idle and its own not ready, the worker went to %p, want the application's %p", got, w.app)
	}

	var held []*pgxpool.Conn
	for range cfg.MaxConns {
		c, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if got := w.starting(); got != w.q {
		t.Errorf("with every application connection busy, the worker went to %p, want its own", got)
	}
	for _, c := range held {
		c.Release()
	}

	close(w.ownReady)
	if got := w.starting(); got != w.q {
		t.Errorf("with its own connection ready, the worker went to %p, want its own", got)
	}
}
