package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// seeded names the rows seed created.
type seeded struct {
	ada, grace int64 // customers
	book       int64 // a product not on sale yet
}

// endpoint is a merchant's webhook subscription.
type endpoint struct {
	URL    string
	Events []string
}

// seed creates customers, products, webhook endpoints, uploads and carts.
func seed(ctx context.Context, pool *pgxpool.Pool, blobs BlobStore, endpoints ...endpoint) (seeded, error) {
	var s seeded
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO customers (name, email) VALUES ('Ada Lovelace', 'ada@example.com') RETURNING id`).Scan(&s.ada)
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO customers (name, email) VALUES ('Grace Hopper', 'grace@example.com') RETURNING id`).Scan(&s.grace); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO products (sku, name, price_cents, currency, stock, published_at) VALUES
			('MUG-001', 'Analytical Engine mug', 1490, 'EUR', 10, now()),
			('TEE-042', 'Difference Engine T-shirt', 2500, 'EUR', 1, now())`)
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `INSERT INTO products (sku, name, price_cents, currency, stock)
			VALUES ('BOOK-1843', 'Notes on the Analytical Engine', 3990, 'EUR', 50) RETURNING id`).Scan(&s.book)
		if err != nil {
			return err
		}
		for _, e := range endpoints {
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (url, events) VALUES ($1, $2)`, e.URL, e.Events); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO carts (customer_id, updated_at) VALUES
			($1, now() - interval '5 days'), ($2, now() - interval '4 days'), ($1, now() - interval '1 hour')`, s.ada, s.grace)
		if err != nil {
			return err
		}
		for _, key := range graceUploads(s.grace) {
			if _, err := tx.Exec(ctx, `INSERT INTO customer_files (customer_id, key) VALUES ($1, $2)`, s.grace, key); err != nil {
				return err
			}
			if err := blobs.Put(ctx, uploadsBucket, key, []byte("..."), "application/octet-stream"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return seeded{}, fmt.Errorf("seed: %w", err)
	}
	return s, nil
}

func graceUploads(id int64) []string {
	return []string{fmt.Sprintf("customers/%d/avatar.png", id), fmt.Sprintf("customers/%d/documents/id-card.pdf", id)}
}
