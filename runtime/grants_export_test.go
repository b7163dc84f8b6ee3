package runtime

import (
	"context"

	"github.com/jobc-dev/jobc/runtime/internal/db"
)

// CountJobsByStateForTest and ListWorkersForTest run the two read-only statements of
// queries/ that no exported function runs yet, so that the grants test can show the
// read-only role may run every statement meant for it.
func CountJobsByStateForTest(ctx context.Context, dbtx DBTX) error {
	_, err := db.New(dbtx).CountJobsByState(ctx)
	return err
}

func ListWorkersForTest(ctx context.Context, dbtx DBTX) error {
	_, err := db.New(dbtx).ListWorkers(ctx)
	return err
}
