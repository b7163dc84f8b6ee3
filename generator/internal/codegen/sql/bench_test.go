package sql_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime"
)

// BenchmarkEnqueue compares one enqueue of a send_receipt job (unique, with defaults
// to fill, nested objects, an array, a pattern and formats to check) by Go's Enqueue
// and by the SQL producer: one round trip each, in a transaction rolled back at the
// end, so that commits (the same for both) do not drown the difference.
func BenchmarkEnqueue(b *testing.B) {
	kinds, file, _ := project(b, filepath.Join("..", "..", "..", "..", "testdata", "sql_producers"))
	pool := migrated(b, file)
	var jt *runtime.JobType
	for _, k := range kinds {
		if k.job.Kind == "send_receipt" {
			jt = k.jt
		}
	}
	payload := func(i int) map[string]any {
		return map[string]any{
			"order_id": i + 1, "email": "ada@example.com", "placed_at": "2026-12-01T10:00:00Z",
			"receipt_id": "123e4567-e89b-12d3-a456-426614174000", "tags": []string{"gift", "express"},
			"lines": []map[string]any{{"sku": "mug-001", "quantity": 2}, {"sku": "tee-042"}, {"sku": "book-7", "gift": true}},
			"total": map[string]any{"amount": 54.8},
		}
	}
	ctx := b.Context()
	inTx := func(b *testing.B, enqueue func(tx pgx.Tx, i int) error) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		for i := range b.N {
			if err := enqueue(tx, i); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("go", func(b *testing.B) {
		inTx(b, func(tx pgx.Tx, i int) error {
			_, err := runtime.Enqueue(ctx, tx, jt, payload(i))
			return err
		})
	})
	b.Run("sql", func(b *testing.B) {
		inTx(b, func(tx pgx.Tx, i int) error {
			doc, err := json.Marshal(payload(i))
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, "SELECT jobc_enqueue_send_receipt($1)", string(doc))
			return err
		})
	})
}
