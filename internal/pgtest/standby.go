package pgtest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartStandby starts a streaming standby of c: a new throwaway cluster whose data
// directory is a base backup of c taken with pg_basebackup -R, so that it connects to
// c for replication and replays c's writes, read-only, until it is promoted. c must be
// running; its default settings (wal_level=replica, local replication connections
// trusted) allow the backup.
//
// The standby is a [Cluster] like any other: it has its own socket directory, port
// and watchdog, and must be destroyed on its own. Promote turns it into a primary.
func (c *Cluster) StartStandby(ctx context.Context) (_ *Cluster, err error) {
	began := time.Now()
	base := filepath.Dir(c.dir)
	s, err := newCluster(base, "pgtest-standby-", c.bin, c.acct, c.log)
	if err != nil {
		return nil, fmt.Errorf("pgtest: start standby: %w", err)
	}
	defer func() {
		if err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
			defer cancel()
			err = fmt.Errorf("pgtest: start standby: %w", errors.Join(err, s.Destroy(dctx)))
		}
	}()
	if err := s.acct.chown(s.dir); err != nil {
		return nil, err
	}
	if err := s.startWatchdog(); err != nil {
		return nil, err
	}
	out, err := s.run(ctx, filepath.Join(c.bin.Dir, "pg_basebackup"),
		"--host", c.dir,
		"--port", fmt.Sprint(c.port),
		"--username", "postgres",
		"--pgdata", s.dataDir,
		"--write-recovery-conf", // standby.signal and primary_conninfo pointing at c
		"--wal-method=stream",
		"--checkpoint=fast",
		"--no-sync",
	)
	if err != nil {
		return nil, fmt.Errorf("pg_basebackup (as %s): %w\n%s", s.acct, err, tail(out, logTailLines))
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	c.log.Info("pgtest: started streaming standby", "of", c.dir, "dir", s.dir,
		"total", time.Since(began).Round(time.Millisecond).String())
	return s, nil
}

// Promote turns a standby into a primary (pg_ctl promote) and waits until it accepts
// writes.
func (c *Cluster) Promote(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return errors.New("pgtest: promote: cluster was destroyed")
	}
	if out, err := c.pgCtl(ctx, "promote"); err != nil {
		return fmt.Errorf("pgtest: promote: %w", c.failure(err, out))
	}
	return nil
}

// WaitReplayed waits until standby has replayed everything primary had written when
// WaitReplayed was called, and fails with both positions when ctx ends first. It
// compares with the primary's insert position, not its write position, so that
// transactions committed with synchronous_commit=off (whose WAL the primary writes out
// a little later) are included.
func WaitReplayed(ctx context.Context, primary, standby *Cluster) error {
	p, err := pgx.Connect(ctx, primary.ConnString())
	if err != nil {
		return fmt.Errorf("pgtest: wait for replay: %w", err)
	}
	defer p.Close(context.WithoutCancel(ctx))
	var target string
	if err := p.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&target); err != nil {
		return fmt.Errorf("pgtest: wait for replay: primary position: %w", err)
	}
	s, err := pgx.Connect(ctx, standby.ConnString())
	if err != nil {
		return fmt.Errorf("pgtest: wait for replay: %w", err)
	}
	defer s.Close(context.WithoutCancel(ctx))
	var replayed string
	for {
		var done bool
		err := s.QueryRow(ctx, "SELECT coalesce(pg_last_wal_replay_lsn()::text, '0/0'), pg_last_wal_replay_lsn() >= $1::pg_lsn",
			target).Scan(&replayed, &done)
		if err != nil {
			return fmt.Errorf("pgtest: wait for replay of %s: %w", target, err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgtest: wait for replay: standby at %s, primary at %s: %w", replayed, target, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// FollowConnString returns a multi-host connection string naming every one of
// clusters, with target_session_attrs=read-write: a client tries the hosts in order
// and keeps the first that accepts writes, which is how an application follows its
// primary through a failover.
func FollowConnString(clusters ...*Cluster) string {
	hosts, ports := "", ""
	for i, c := range clusters {
		if i > 0 {
			hosts, ports = hosts+",", ports+","
		}
		hosts += c.dir
		ports += fmt.Sprint(c.port)
	}
	return keywordValue(
		"host", hosts,
		"port", ports,
		"user", "postgres",
		"dbname", "postgres",
		"sslmode", "disable",
		"target_session_attrs", "read-write",
	)
}
