package pgtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNoServer is returned by [Start] when no way to get a PostgreSQL server
// was found.
var ErrNoServer = errors.New("pgtest: no PostgreSQL server for tests: set DATABASE_URL, " +
	"or install the PostgreSQL server binaries (initdb, pg_ctl) on PATH or under " + DefaultGlob +
	", or start Docker")

// pingTimeout bounds the connection check of DATABASE_URL.
const pingTimeout = 30 * time.Second

// Config controls how [Config.Start] and [Config.StartCluster] find a
// server. The zero value gives the documented default behaviour of [Start].
type Config struct {
	// Getenv looks up environment variables (DATABASE_URL); nil means
	// os.Getenv. An empty value counts as unset.
	Getenv func(key string) string
	// Finder locates the PostgreSQL server binaries.
	Finder Finder
	// NoDocker disables the Docker fallback.
	NoDocker bool
	// DockerImage is the image of the Docker fallback; empty means
	// DefaultDockerImage.
	DockerImage string
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

func (cfg Config) logger() *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.Default()
}

func (cfg Config) getenv(key string) string {
	if cfg.Getenv != nil {
		return cfg.Getenv(key)
	}
	return os.Getenv(key)
}

// Server is a PostgreSQL server for tests: one named by DATABASE_URL, a
// throwaway cluster started from the local binaries, or a Docker container.
type Server struct {
	connString string
	desc       string
	stop       func(context.Context) error // nil for DATABASE_URL
}

// Start finds a PostgreSQL server, trying in order:
//
//  1. DATABASE_URL, if set and non-empty, used as is (it is pinged once);
//  2. a throwaway [Cluster] from the local server binaries (see [Finder]);
//  3. a PostgreSQL container run with the docker command, if a Docker
//     daemon answers it;
//
// and otherwise fails with [ErrNoServer]. Call [Server.Stop] when done.
func Start(ctx context.Context) (*Server, error) {
	return Config{}.Start(ctx)
}

// Start is [Start] with the discovery controlled by cfg.
func (cfg Config) Start(ctx context.Context) (*Server, error) {
	log := cfg.logger()
	if url := cfg.getenv("DATABASE_URL"); url != "" {
		if err := ping(ctx, url); err != nil {
			return nil, fmt.Errorf("pgtest: DATABASE_URL: %w", err)
		}
		log.Debug("pgtest: using DATABASE_URL")
		return &Server{connString: url, desc: "PostgreSQL server from DATABASE_URL"}, nil
	}

	bin, err := cfg.Finder.find()
	switch {
	case err == nil:
		c, err := startCluster(ctx, bin, log)
		if err != nil {
			return nil, fmt.Errorf("pgtest: start cluster: %w", err)
		}
		return &Server{connString: c.ConnString(), desc: c.String(), stop: c.Destroy}, nil
	case !errors.Is(err, errNoBinaries):
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	log.Debug("pgtest: no local PostgreSQL binaries", "err", err)

	if !cfg.NoDocker {
		s, err := startDocker(ctx, cfg.DockerImage, log)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errDockerUnavailable) {
			return nil, fmt.Errorf("pgtest: docker: %w", err)
		}
		log.Debug("pgtest: docker not available", "err", err)
	}
	return nil, ErrNoServer
}

// ConnString returns the admin connection string: DATABASE_URL as given, or
// database postgres as superuser of a server started by pgtest.
func (s *Server) ConnString() string { return s.connString }

// String describes the server for log messages; it never contains
// credentials.
func (s *Server) String() string { return s.desc }

// Stop stops and removes a cluster or container that Start started; for
// DATABASE_URL it does nothing.
func (s *Server) Stop(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	return s.stop(ctx)
}

// CreateDatabase creates a fresh database named <prefix>_<random>, sanitized
// to at most 63 bytes of [a-z0-9_], and returns a connection string for it
// (the admin connection string with the database replaced) and a function
// that drops it again, disconnecting any remaining sessions.
func (s *Server) CreateDatabase(ctx context.Context, prefix string) (connString string, drop func(context.Context) error, err error) {
	name, err := uniqueName(prefix)
	if err != nil {
		return "", nil, err
	}
	connString, err = withDatabase(s.connString, name)
	if err != nil {
		return "", nil, err
	}
	conn, err := pgx.Connect(ctx, s.connString)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: create database: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// name is a valid identifier (uniqueName), quoting is for good measure.
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	drop = func(ctx context.Context) error {
		if err := dropDatabase(ctx, s.connString, name); err != nil {
			return fmt.Errorf("pgtest: drop database %s: %w", name, err)
		}
		return nil
	}
	return connString, drop, nil
}

// dropDatabase drops database name, terminating its sessions first.
func dropDatabase(ctx context.Context, admin, name string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	ident := pgx.Identifier{name}.Sanitize()
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42601" { // syntax_error: before PostgreSQL 13
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident)
	return err
}

// ping connects to connString once.
func ping(ctx context.Context, connString string) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}
