package main

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// shopTables is the shop's own schema. The jobc tables live beside it in the same
// database, which is what lets an order and its jobs commit together.
const shopTables = `
CREATE TABLE IF NOT EXISTS customers (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name       text NOT NULL,
	email      text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL DEFAULT now()
);

-- Files customers uploaded (avatars, documents); the bytes live in the blob store.
CREATE TABLE IF NOT EXISTS customer_files (
	customer_id bigint NOT NULL REFERENCES customers ON DELETE CASCADE,
	key         text NOT NULL,
	PRIMARY KEY (customer_id, key)
);

CREATE TABLE IF NOT EXISTS products (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	sku          text NOT NULL UNIQUE,
	name         text NOT NULL,
	price_cents  bigint NOT NULL CHECK (price_cents >= 0),
	currency     text NOT NULL,
	stock        integer NOT NULL CHECK (stock >= 0),
	publish_at   timestamptz,   -- when a publication is planned
	published_at timestamptz,   -- NULL: not on sale yet
	channels     text[] NOT NULL DEFAULT '{}'
);

CREATE TABLE IF NOT EXISTS orders (
	id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	customer_id     bigint REFERENCES customers ON DELETE SET NULL,
	customer_name   text NOT NULL,
	customer_email  text NOT NULL,
	billing_address jsonb NOT NULL,
	status          text NOT NULL DEFAULT 'placed' CHECK (status IN ('placed', 'paid', 'cancelled')),
	total_cents     bigint NOT NULL,
	currency        text NOT NULL,
	placed_at       timestamptz NOT NULL DEFAULT now(),
	paid_at         timestamptz,
	payment_id      text UNIQUE,
	invoice_key     text
);

CREATE TABLE IF NOT EXISTS order_lines (
	order_id         bigint NOT NULL REFERENCES orders ON DELETE CASCADE,
	line_no          integer NOT NULL,
	sku              text NOT NULL,
	name             text NOT NULL,
	quantity         integer NOT NULL CHECK (quantity > 0),
	unit_price_cents bigint NOT NULL,
	PRIMARY KEY (order_id, line_no)
);

-- Merchant systems that want to hear about orders.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
	id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	url    text NOT NULL UNIQUE,
	events text[] NOT NULL
);

-- The sales ledger (record_sale) and the loyalty points awarded per order
-- (award_loyalty_points): one row per order, so a job that runs twice changes nothing.
CREATE TABLE IF NOT EXISTS sales (
	order_id     bigint PRIMARY KEY REFERENCES orders ON DELETE CASCADE,
	amount_cents bigint NOT NULL,
	currency     text NOT NULL,
	paid_at      timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS loyalty_awards (
	order_id bigint PRIMARY KEY REFERENCES orders ON DELETE CASCADE,
	points   bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS carts (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	customer_id bigint REFERENCES customers ON DELETE CASCADE,
	updated_at  timestamptz NOT NULL DEFAULT now()
);
`

// migrate applies jobc's migrations and creates the shop's tables. It is safe to run
// on every start.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := runtime.Migrate(ctx, pool); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, shopTables); err != nil {
		return fmt.Errorf("create the shop's tables: %w", err)
	}
	// The SQL producers need jobc's migrations and function library, so they come after.
	if _, err := pool.Exec(ctx, sqlProducers); err != nil {
		return fmt.Errorf("create the SQL producers (db/jobc_producers.sql): %w", err)
	}
	return nil
}

// sqlProducers is db/jobc_producers.sql, which `jobc generate` writes from jobc.yaml:
// jobc_enqueue_<kind> for every job type. Applying it again is harmless.
//
//go:embed db/jobc_producers.sql
var sqlProducers string
