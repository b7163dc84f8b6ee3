package sql

import (
	"strings"

	"github.com/jobc-dev/jobc/internal/dialect"
)

// format returns the function of jobc's SQL function library
// (schema/library/4_formats.sql) that checks format f as the Go runtime does
// (dialect.Format.SQL), at the schema pointer at; ok is false when there is nothing
// to check. A format the runtime checks and SQL does not is
// refused, since a SQL producer would accept payloads Go rejects; one the runtime
// does not check (an annotation) is not checked here either.
func (fn *function) format(f, at string) (string, bool) {
	row, known := dialect.LookupFormat(f)
	switch {
	case known && row.SQL != "":
		return row.SQL, true
	case known && row.Check != nil:
		fn.errorf(at+"/format", "format %s has no SQL check, so a SQL producer would accept payloads Go rejects; SQL producers check %s", f, supportedFormats())
	}
	return "", false
}

func supportedFormats() string {
	names := dialect.Formats(dialect.SQL)
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
