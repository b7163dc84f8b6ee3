package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Table prints aligned columns. Every string cell goes through esc, so no value from the
// database can split a row or shift a column.
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a Table with the given column headings.
func NewTable(w io.Writer, headings ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(headings) > 0 {
		fmt.Fprintln(t.tw, strings.Join(headings, "\t"))
	}
	return t
}

// Row prints one row; strings are escaped, other values printed with fmt.
func (t *Table) Row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		if s, ok := c.(string); ok {
			parts[i] = Esc(s)
		} else {
			parts[i] = Esc(fmt.Sprint(c))
		}
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t"))
}

func (t *Table) Flush() error { return t.tw.Flush() }

// WriteJSON prints v as indented JSON: the --json output of every read command.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Seconds is d in seconds with millisecond precision, as the --json fields *_seconds.
func Seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// Age prints a duration for a table: whole seconds, "-" for none.
func Age(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// NonNil makes an absent list print as [] in JSON, not null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
