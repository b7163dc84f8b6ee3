// Package bench races jobc against River on one PostgreSQL server: burn-down,
// transactional enqueue (one job per transaction and batches) and idle claim latency.
// Every measurement runs in a fresh database that is dropped afterwards.
package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultAdminURL is the server the benchmarks use unless BENCH_DATABASE_URL is set. It
// must allow CREATE DATABASE.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL is BENCH_DATABASE_URL, or DefaultAdminURL.
func AdminURL() string {
	if u := os.Getenv("BENCH_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultAdminURL
}

// FreshDB is a database created for one measurement.
type FreshDB struct {
	Name  string
	URL   string
	admin string
}

// NewDB creates an empty database named after prefix and returns its URL.
func NewDB(ctx context.Context, adminURL, prefix string) (*FreshDB, error) {
	name := fmt.Sprintf("bench_%s_%d_%d", prefix, os.Getpid(), rand.IntN(1e9))
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", adminURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	return &FreshDB{Name: name, URL: u.String(), admin: adminURL}, nil
}

// Drop removes the database, disconnecting whoever is still connected.
func (d *FreshDB) Drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.Name}.Sanitize()+" WITH (FORCE)")
	return err
}

// DropStale drops databases left behind by killed runs of this program (bench_* of a
// pid that no longer exists).
func DropStale(ctx context.Context, adminURL string) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'bench\_%'`)
	if err != nil {
		return
	}
	names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, n := range names {
		parts := strings.Split(n, "_")
		if len(parts) < 4 {
			continue
		}
		pid := parts[len(parts)-2]
		if _, err := os.Stat("/proc/" + pid); err == nil {
			continue // still running
		}
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)")
	}
}

// SessionSettings are set on every connection the benchmarks open (both systems'
// pools and their listener connections), e.g. synchronous_commit.
var SessionSettings = map[string]string{}

// OnNotice receives, if set, every notice of every connection the benchmarks open
// (auto_explain's plans with -explain).
var OnNotice func(*pgconn.PgConn, *pgconn.Notice)

// Tracer traces, if set, the queries of every pool the benchmarks open (cmd/flow times
// the claims with it).
var Tracer pgx.QueryTracer

// NewPool opens a pool of at most maxConns connections.
func NewPool(ctx context.Context, dbURL string, maxConns int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	for k, v := range SessionSettings {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	if OnNotice != nil {
		cfg.ConnConfig.OnNotice = OnNotice
	}
	if Tracer != nil {
		cfg.ConnConfig.Tracer = Tracer
	}
	cfg.MaxConns = int32(maxConns)
	cfg.MinConns = 0
	return pgxpool.NewWithConfig(ctx, cfg)
}

// businessTable is the table the transactional-enqueue benchmarks write next to each job.
const businessTable = `CREATE TABLE bench_business (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
)`
