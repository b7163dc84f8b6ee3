package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// LSN reads pg_current_wal_lsn().
func LSN(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var lsn string
	err := pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn)
	return lsn, err
}

// WALRecordGroup is the WAL records of one resource manager, record type and relation.
type WALRecordGroup struct {
	RM, Type, Rel string
	Records       int64
	Bytes, FPI    int64
}

// WALReport is the WAL written between two LSNs, attributed to one database: records
// whose block references name the database, and the commit records of their
// transactions. Other databases' traffic on a shared server is left out.
type WALReport struct {
	ClusterBytes int64 // every byte between the LSNs, whoever wrote it
	Bytes, FPI   int64 // attributed to this database (FPI: full-page images within)
	Records      int64
	Groups       []WALRecordGroup
}

// WALSince reads the WAL from start to now with pg_walinspect (created in the
// database if needed) and attributes it to the pool's database.
func WALSince(ctx context.Context, pool *pgxpool.Pool, start string) (WALReport, error) {
	var rep WALReport
	if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_walinspect`); err != nil {
		return rep, fmt.Errorf("pg_walinspect: %w", err)
	}
	var end string
	if err := pool.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn()::text, pg_wal_lsn_diff(pg_current_wal_flush_lsn(), $1::pg_lsn)::bigint`, start).Scan(&end, &rep.ClusterBytes); err != nil {
		return rep, err
	}
	rows, err := pool.Query(ctx, `
WITH r AS (
    SELECT xid, resource_manager AS rm, record_type AS typ, record_length AS len, fpi_length AS fpi,
           substring(block_ref from 'rel \d+/(\d+)/\d+')::oid AS dboid,
           substring(block_ref from 'rel \d+/\d+/(\d+)')::oid AS filenode
    FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
), me AS (SELECT oid FROM pg_database WHERE datname = current_database()),
mine AS (
    SELECT * FROM r WHERE dboid = (SELECT oid FROM me)
    UNION ALL
    SELECT * FROM r WHERE rm = 'Transaction' AND xid <> '0'
      AND xid IN (SELECT xid FROM r WHERE dboid = (SELECT oid FROM me))
)
SELECT m.rm, split_part(m.typ, ' ', 1),
       coalesce(c.relname, CASE WHEN m.filenode IS NULL THEN '' ELSE 'filenode ' || m.filenode END),
       count(*), sum(m.len)::bigint, sum(m.fpi)::bigint
FROM mine m
LEFT JOIN pg_class c ON c.relfilenode = m.filenode AND m.filenode <> 0
GROUP BY 1, 2, 3`, start, end)
	if err != nil {
		return rep, err
	}
	defer rows.Close()
	for rows.Next() {
		var g WALRecordGroup
		if err := rows.Scan(&g.RM, &g.Type, &g.Rel, &g.Records, &g.Bytes, &g.FPI); err != nil {
			return rep, err
		}
		rep.Groups = append(rep.Groups, g)
		rep.Bytes += g.Bytes
		rep.FPI += g.FPI
		rep.Records += g.Records
	}
	sort.Slice(rep.Groups, func(i, j int) bool { return rep.Groups[i].Bytes > rep.Groups[j].Bytes })
	return rep, rows.Err()
}

// Format prints the report per job.
func (r WALReport) Format(jobs int) string {
	var b strings.Builder
	fj := float64(jobs)
	fmt.Fprintf(&b, "  WAL attributed: %.0f B/job (%.0f B/job of it full-page images), %.1f records/job; whole cluster: %.0f B/job\n",
		float64(r.Bytes)/fj, float64(r.FPI)/fj, float64(r.Records)/fj, float64(r.ClusterBytes)/fj)
	fmt.Fprintf(&b, "  %-12s %-16s %-42s %10s %10s %10s\n", "rmgr", "record", "relation", "recs/job", "B/job", "FPI B/job")
	for _, g := range r.Groups {
		if float64(g.Records)/fj < 0.005 {
			continue
		}
		fmt.Fprintf(&b, "  %-12s %-16s %-42s %10.2f %10.1f %10.1f\n", g.RM, g.Type, g.Rel,
			float64(g.Records)/fj, float64(g.Bytes)/fj, float64(g.FPI)/fj)
	}
	return b.String()
}

// IndexEntries sums, per job, the index insertions the WAL shows (B-tree leaf and
// GIN records) per index.
func (r WALReport) IndexEntries(jobs int) (total float64, per map[string]float64) {
	per = map[string]float64{}
	for _, g := range r.Groups {
		ins := (g.RM == "Btree" && strings.HasPrefix(g.Type, "INSERT")) ||
			(g.RM == "Gin" && (g.Type == "INSERT" || g.Type == "UPDATE_META_PAGE" || g.Type == "INSERT_LISTPAGE")) ||
			(g.RM == "BRIN" && (g.Type == "INSERT" || g.Type == "UPDATE" || g.Type == "SAMEPAGE_UPDATE"))
		if ins {
			v := float64(g.Records) / float64(jobs)
			per[g.Rel] += v
			total += v
		}
	}
	return total, per
}
