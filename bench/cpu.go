package bench

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CPU is CPU time spent by the PostgreSQL backends serving one database and by this
// process. On a shared, noisy machine CPU time per job varies much less than rates do.
type CPU struct {
	PG, Go time.Duration
}

// CPUMeter snapshots CPU time; Since returns what was spent after the snapshot.
type CPUMeter struct {
	pool   *pgxpool.Pool
	pg     map[int]time.Duration
	goTime time.Duration
}

// clock ticks per second of /proc/<pid>/stat; 100 on every Linux this runs on.
const clkTck = 100

func procCPU(pid int) (time.Duration, bool) {
	user, sys, ok := ProcTimes(pid)
	return user + sys, ok
}

// ProcTimes returns the CPU time process pid (of this machine) has spent in user mode
// and in the kernel, in clock ticks (10 ms).
func ProcTimes(pid int) (user, sys time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	// After the comm field: state is f[0]; utime and stime are fields 14 and 15 of the
	// whole line, f[11] and f[12] here.
	if len(f) < 13 {
		return 0, 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u) * time.Second / clkTck, time.Duration(st) * time.Second / clkTck, true
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func backendCPU(ctx context.Context, pool *pgxpool.Pool) (map[int]time.Duration, error) {
	// Client backends only, the one asking included: excluding it let a pooled
	// connection that asked at the snapshot, and had done the migration, count with its
	// whole life's CPU when another connection asked at the end (a run's figure four
	// times another's); an autovacuum worker that connected after the snapshot would
	// count from its start.
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend'`)
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	out := map[int]time.Duration{}
	for _, p := range pids {
		if t, ok := procCPU(int(p)); ok {
			out[int(p)] = t
		}
	}
	return out, nil
}

// StartCPU snapshots the CPU time of the database's backends (which must run on this
// machine) and of this process.
func StartCPU(ctx context.Context, pool *pgxpool.Pool) (*CPUMeter, error) {
	pg, err := backendCPU(ctx, pool)
	if err != nil {
		return nil, err
	}
	return &CPUMeter{pool: pool, pg: pg, goTime: selfCPU()}, nil
}

// Since returns the CPU time spent since the snapshot. Backends that connected after it
// count from their start; backends that disconnected meanwhile are missed (the pools
// here keep their connections).
func (m *CPUMeter) Since(ctx context.Context) (CPU, error) {
	goTime := selfCPU() - m.goTime
	pg, err := backendCPU(ctx, m.pool)
	if err != nil {
		return CPU{}, err
	}
	var sum time.Duration
	for pid, t := range pg {
		sum += t - m.pg[pid]
	}
	return CPU{PG: sum, Go: goTime}, nil
}
