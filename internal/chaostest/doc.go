// Package chaostest tests the jobc runtime at the process level: worker processes
// (internal/cmd/testworker) that are started, stopped, killed and cut off from
// PostgreSQL, against a real server, checking that every job ends in the state the
// runtime promises. It has no code of its own besides this comment; see the tests.
//
//	go run ./internal/cmd/withpostgres -- go test ./internal/chaostest/
package chaostest
