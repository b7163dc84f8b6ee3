// Package pgtest provides a real PostgreSQL server to tests. It is test
// support code and must never be imported by the runtime packages.
//
// [Start] finds a server, in this order: the DATABASE_URL environment
// variable; a throwaway [Cluster] started from the local PostgreSQL server
// binaries (initdb and pg_ctl on PATH or under /usr/lib/postgresql/*/bin);
// a PostgreSQL container run with the docker command if a Docker daemon
// answers. If none is available it fails with [ErrNoServer], which says how
// to provide one.
//
// Most packages only need:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		pool := pgtest.NewSchema(t, applyMigrations)
//		...
//	}
//
// [Main] creates one database per test binary (package) on the server, and
// [NewSchema] one schema per test inside it, so packages and tests can run in
// parallel against a single server. The withpostgres command
// (internal/cmd/withpostgres) starts one cluster for a whole "go test ./..."
// run and passes it on via DATABASE_URL.
//
// Tests that must stop, restart or crash the server use their own [Cluster]
// from [StartCluster].
package pgtest
