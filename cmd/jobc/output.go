package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// table prints aligned columns. Every string cell goes through esc, so no value from the
// database can split a row or shift a column.
type table struct {
	tw *tabwriter.Writer
}

// newTable starts a table with the given column headings.
func newTable(w io.Writer, headings ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(headings) > 0 {
		fmt.Fprintln(t.tw, strings.Join(headings, "\t"))
	}
	return t
}

// row prints one row; strings are escaped, other values printed with fmt.
func (t *table) row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		if s, ok := c.(string); ok {
			parts[i] = esc(s)
		} else {
			parts[i] = esc(fmt.Sprint(c))
		}
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// writeJSON prints v as indented JSON: the --json output of every read command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// seconds is d in seconds with millisecond precision, as the --json fields *_seconds.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// age prints a duration for a table: whole seconds, "-" for none.
func age(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// nonNil makes an absent list print as [] in JSON, not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
