package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// Every job leaves two dead row versions in jobc_jobs (the row as enqueued, once
// claimed; the claimed row, once finished), so at thousands of jobs a second the table
// of unfinished jobs holds mostly dead versions. Autovacuum removes them when it
// visits the database, once a minute by default (autovacuum_naptime, a server-wide
// setting no table can shorten): at 8,000 jobs/s the table and its indexes grew to
// 246 MB for a few hundred live rows. The vacuumer removes them as they accumulate:
// with it the same run kept them at 11.5 MB (bench/README.md, "A vacuumer").
//
// Its statements are in queries/maintenance.sql: JobsTableStats (which `jobc status`
// reads too), TryVacuumLock, VacuumUnlock and VacuumJobs.

// VacuumDeadRows is the vacuumer's default threshold: a run vacuums jobc_jobs once it
// holds this many dead row versions (about 4 MB), plus as many as it has live rows. A
// VACUUM reads the live rows' pages and index entries as well as the dead ones, so a
// backlog of live jobs makes each dearer: with this threshold each removes at least
// as many dead versions as it reads live ones. (With a fifth of the live rows,
// autovacuum's default scale factor, a burn-down of 500,000 jobs vacuumed its backlog
// early on and ran 6% slower than without the vacuumer; with this, level with it;
// bench/README.md, "A vacuumer".)
const VacuumDeadRows = 10_000

// VacuumShare bounds the vacuumer's cost: a worker whose own last VACUUM took d starts
// the next no sooner than VacuumShare × d after the table's last VACUUM ended,
// whichever worker ran that one, so vacuuming takes about a twentieth of one server
// process's time (a worker that never vacuumed is not held back: in a fleet the first
// VACUUM of each may follow another's, TestVacuumWaitsItsTurn). Under a held snapshot,
// when VACUUM can remove nothing and takes longer as the table grows, it backs off so.
const VacuumShare = 20

// VacuumInterval is how often each worker's vacuumer runs: a server process reports
// its statistics at most once a second, so the dead row versions it reads change no
// more often.
const VacuumInterval = time.Second

// VacuumTimeout bounds one run, its VACUUM most of it: a VACUUM cancelled keeps what
// it did (the pages it pruned), and the next run goes on.
const VacuumTimeout = time.Minute

// VacuumerConfig tunes the vacuumer.
type VacuumerConfig struct {
	DeadRows int64 // the threshold's constant part; default VacuumDeadRows
}

// Vacuumer vacuums jobc_jobs, the table of unfinished jobs, whenever its dead row
// versions pass the threshold (VacuumDeadRows), one worker of the schema at a time
// (an advisory lock), at most a VacuumShare-th of the time (VacuumShare). A worker
// whose role may not vacuum the table leaves it to autovacuum.
type Vacuumer struct {
	cfg  VacuumerConfig
	pool *pgxpool.Pool
	took time.Duration // how long this worker's last VACUUM took
}

// VacuumerResult is what one run of the vacuumer found and did.
type VacuumerResult struct {
	Dead, Live int64 // the row versions of jobc_jobs the statistics counted
	// Vacuumed: the run vacuumed jobc_jobs (or found autovacuum at it: SKIP_LOCKED);
	// DeadAfter is what the statistics counted after it: the versions a snapshot
	// still open may read.
	Vacuumed  bool
	DeadAfter int64
	// Deferred: past the threshold, but the last VACUUM ended less than VacuumShare
	// times its duration ago, or another worker is vacuuming.
	Deferred bool
	// NotPermitted: the worker's role may not vacuum jobc_jobs (see Vacuumer).
	NotPermitted bool
}

// NewVacuumer returns a vacuumer that vacuums on a connection of pool.
func NewVacuumer(pool *pgxpool.Pool, cfg VacuumerConfig) *Vacuumer {
	if cfg.DeadRows <= 0 {
		cfg.DeadRows = VacuumDeadRows
	}
	return &Vacuumer{cfg: cfg, pool: pool}
}

// due says whether a run that found dead and live row versions in jobc_jobs, since
// seconds after the last VACUUM of it ended (+Inf if none did), vacuums: once past the
// threshold, and then only if VacuumShare times this worker's last VACUUM has passed
// (deferred if not).
func (v *Vacuumer) due(dead, live int64, since float64) (due, deferred bool) {
	if dead < v.cfg.DeadRows+live {
		return false, false
	}
	if since < VacuumShare*v.took.Seconds() {
		return false, true
	}
	return true, false
}

// RunOnce vacuums jobc_jobs if its dead row versions passed the threshold and its
// turn has come.
func (v *Vacuumer) RunOnce(ctx context.Context) (VacuumerResult, error) {
	var res VacuumerResult
	ctx, cancel := context.WithTimeout(ctx, VacuumTimeout)
	defer cancel()
	conn, err := v.pool.Acquire(ctx)
	if err != nil {
		return res, fmt.Errorf("vacuum jobc_jobs: %w", err)
	}
	defer conn.Release()
	q := db.New(conn)
	st, err := q.JobsTableStats(ctx)
	if err != nil {
		return res, fmt.Errorf("vacuum jobc_jobs: read its statistics: %w", err)
	}
	res.Dead, res.Live, res.NotPermitted = st.DeadRows, st.LiveRows, !st.MayVacuum
	if res.NotPermitted {
		return res, nil
	}
	var due bool
	if due, res.Deferred = v.due(res.Dead, res.Live, st.SecondsSinceVacuum); !due {
		return res, nil
	}
	locked, err := q.TryVacuumLock(ctx)
	if err != nil {
		return res, fmt.Errorf("vacuum jobc_jobs: lock: %w", err)
	}
	if !locked {
		res.Deferred = true
		return res, nil
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), VacuumTimeout)
		defer cancel()
		if err := q.VacuumUnlock(uctx); err != nil {
			// The lock goes with the session: close it rather than pool it locked.
			_ = conn.Conn().Close(uctx)
		}
	}()
	began := time.Now()
	err = q.VacuumJobs(ctx)
	v.took = time.Since(began)
	if err != nil {
		return res, fmt.Errorf("vacuum jobc_jobs: %w", err)
	}
	res.Vacuumed = true
	if st, err = q.JobsTableStats(ctx); err != nil {
		return res, fmt.Errorf("vacuum jobc_jobs: read its statistics: %w", err)
	}
	res.DeadAfter = st.DeadRows
	return res, nil
}
