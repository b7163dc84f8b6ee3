// Package dberr classifies the errors PostgreSQL and pgx return, for the runtime and
// its internal packages: which have a known fix to state (Describe), which mean a
// connection's server cannot serve any more (ConnectionLost), and which a row's values
// cause, so that the same statement over the same rows fails again (RowFault).
package dberr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Describe turns errors whose fix is known into one line that says it.
func Describe(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "42P01", "42704": // undefined_table, undefined_object (type jobc_state)
			return fmt.Errorf("%w: the jobc tables are missing: run `jobc migrate up` or call runtime.Migrate", err)
		}
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return &oneLineError{
			msg: fmt.Sprintf("cannot reach PostgreSQL (%s): check DATABASE_URL and that the server is running", oneLine(err.Error())),
			err: err,
		}
	}
	return err
}

// oneLineError keeps the wrapped error for errors.Is and errors.As but prints as one
// line: pgx reports a connection failure per host, on several lines.
type oneLineError struct {
	msg string
	err error
}

func (e *oneLineError) Error() string { return e.msg }
func (e *oneLineError) Unwrap() error { return e.err }

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// ConnectionLost reports whether err, returned by a statement on conn, means that
// conn's server cannot serve the pool any more, so that every connection to it should
// be replaced: it turned read-only (a demoted primary), it is shutting down or not
// accepting connections, or the connection broke — and, if timeouts is set, when the
// statement timed out (pgx closes such a connection). A statement whose caller
// cancelled ctx, the statement's context, is not such a statement, whatever it
// returned: the caller gave up, not the server. pgx closes the connection of a
// statement whose context was cancelled, since its cancel request could otherwise cut
// off the next statement, and may return the error the server sent meanwhile (a
// stopping worker's pruner returned a constraint violation on a closed connection;
// taken for a broken one, it retired every connection, and with them a claim the
// server had committed, whose jobs stayed leased to the stopped worker).
func ConnectionLost(ctx context.Context, conn *pgx.Conn, err error, timeouts bool) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	if ServerCannotServe(err) {
		return true
	}
	if Timeout(err) {
		return timeouts
	}
	return conn.IsClosed() || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// Timeout reports whether err is a deadline that ran out: a statement's, an acquire's
// or a connect's (pgx's own timeouts, or a context's).
func Timeout(err error) bool {
	return pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// ServerCannotServe reports whether err is the server saying that it cannot serve
// writes now or soon, whatever the session does.
func ServerCannotServe(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "25006", // read_only_sql_transaction: default_transaction_read_only, or a standby
		"57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03": // cannot_connect_now: starting up, shutting down, in recovery
		return true
	}
	return strings.HasPrefix(pgErr.Code, "08") // connection_exception
}

// ServerFull reports whether err is the server refusing a connection or a statement
// for want of resources (class 53: too many connections for the server or the role, out
// of memory, disk full): it answered, so it is alive, and the sessions it already
// serves keep working.
func ServerFull(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "53")
}

// RowFault reports whether err is an error a row's values can cause, so that running
// the statement again over the same rows fails again: a data exception (class 22: an
// infinite timestamp in arithmetic, an integer out of range), an integrity constraint
// violation (class 23: a duplicate id), or an exception raised by a function or
// trigger (P0001).
func RowFault(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) != 5 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23":
		return true
	}
	return pgErr.Code == "P0001"
}
