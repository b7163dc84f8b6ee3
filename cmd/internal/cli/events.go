package cli

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobc-dev/jobc/runtime/relay"
)

// FailedEventJSON is one failed event in `jobc relay failed --json` and `jobc status --json`.
type FailedEventJSON struct {
	ID          int64     `json:"id"`
	Event       string    `json:"event"`
	Version     int       `json:"version"`
	Subject     string    `json:"subject"`
	OrderingKey string    `json:"ordering_key"`
	Attempts    int       `json:"attempts"`
	CreatedAt   time.Time `json:"created_at"`
	Error       string    `json:"error"`
}

// ToFailedEventsJSON converts what relay.ListFailed returns.
func ToFailedEventsJSON(failed []relay.FailedEvent) []FailedEventJSON {
	out := make([]FailedEventJSON, len(failed))
	for i, f := range failed {
		out[i] = FailedEventJSON(f)
	}
	return out
}

// PrintFailedEvents prints failed events as a table, each line after indent.
func PrintFailedEvents(cmd *cobra.Command, failed []relay.FailedEvent, indent string) error {
	if len(failed) == 0 {
		_, err := cmd.OutOrStdout().Write([]byte(indent + "no failed events\n"))
		return err
	}
	t := NewTable(cmd.OutOrStdout(), indent+"ID", "EVENT", "VERSION", "SUBJECT", "KEY", "ATTEMPTS", "CREATED", "ERROR")
	for _, f := range failed {
		t.Row(indent+strconv.FormatInt(f.ID, 10), Esc(f.Event), f.Version, Esc(f.Subject), Esc(f.OrderingKey), f.Attempts,
			f.CreatedAt.UTC().Format(time.RFC3339), Esc(Truncate(f.Error, 100)))
	}
	return t.Flush()
}
