package claim

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/runtime/internal/migrate"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// migrated is a pgtest setup that applies jobc's migrations.
func migrated(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := migrate.Up(ctx, pool)
	return err
}

// newDB gives the test its own migrated schema.
func newDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return pgtest.NewSchema(t, migrated)
}

// testQueue is the claims of queue name for the given kinds, each with its versions
// min..max, as a worker that registered them builds them.
func testQueue(name string, kinds map[string][2]int) *Queue {
	q := NewQueue(name)
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		q.AddKind(k, kinds[k][0], kinds[k][1])
	}
	return q
}

// claimIDs claims up to max jobs of q on dbtx, as a fetch loop does, and returns the
// ids leased in claim order.
func claimIDs(ctx context.Context, dbtx db.DBTX, q *Queue, max int) ([]int64, error) {
	rows, err := q.Claim(ctx, db.New(dbtx), slog.New(slog.DiscardHandler), "claim-test", 30*time.Second, max)
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, err
}
