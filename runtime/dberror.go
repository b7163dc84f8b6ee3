package runtime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// describeDBError turns errors whose fix is known into one line that says it.
func describeDBError(err error) error {
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
