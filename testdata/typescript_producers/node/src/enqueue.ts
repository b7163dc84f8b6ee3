// Enqueues jobs through the generated TypeScript producers (../../web/jobs.ts) into the
// database that the PG* environment variables name (PGHOST, PGDATABASE, PGOPTIONS for
// the search_path, ...), whose orders table the Go test created, and prints what
// happened as one JSON object: the Go test checks it against the rows.
import { Client, Pool } from "pg";
import {
  enqueueRebuildSearchIndex,
  enqueueReindexProduct,
  enqueueSendReceipt,
  payloadProblems,
  signalPublishProductApproved,
  startPublishProduct,
  type PayloadProblem,
  type SendReceiptPayload,
} from "../../web/jobs";

interface Outcome {
  committed: string;
  rolledBack: string;
  duplicate: string;
  scheduled: string;
  empty: string;
  invalid: Rejection[];
  badPriority: Rejection;
  workflow: string;
  sameWorkflow: string;
  woken: number;
  badInput: Rejection;
}

// Rejection is what a rejected enqueue threw, and the problems payloadProblems read
// from it (null for an error that is not about the payload).
interface Rejection {
  message: string;
  problems: PayloadProblem[] | null;
}

function rejection(err: unknown): Rejection {
  if (!(err instanceof Error)) {
    throw err;
  }
  return { message: err.message, problems: payloadProblems(err) ?? null };
}

async function main(): Promise<void> {
  const client = new Client();
  const pool = new Pool({ max: 1 });
  await client.connect();
  try {
    const receipt: SendReceiptPayload = {
      order_id: 42,
      email: "ada@example.com",
      locale: "de",
      total: { minor_units: 1999, currency: "EUR" },
      // The second line leaves quantity to its default, which the SQL function fills in.
      lines: [{ sku: "BOOK-1", quantity: 2, unit_price: { minor_units: 999, currency: "EUR" } }, { sku: "PEN-2" }],
      note: null,
      paid_at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)).toISOString(),
    };

    // The order and its receipt job commit together.
    await client.query("BEGIN");
    await client.query("INSERT INTO orders (id) VALUES ($1)", [42]);
    // An option that is undefined is left out (and compiles under exactOptionalPropertyTypes).
    const dedupKey: string | undefined = process.env["NO_SUCH_VARIABLE"];
    const committed = await enqueueSendReceipt(client, receipt, { priority: 2, dedupKey });
    await client.query("COMMIT");

    // A rollback leaves neither; this time on a client of the pool.
    const poolClient = await pool.connect();
    let rolledBack: string;
    try {
      await poolClient.query("BEGIN");
      await poolClient.query("INSERT INTO orders (id) VALUES ($1)", [43]);
      rolledBack = await enqueueSendReceipt(poolClient, { ...receipt, order_id: 43 });
      await poolClient.query("ROLLBACK");
    } finally {
      poolClient.release();
    }

    // order_id is send_receipt's unique key: the job of order 42 holds it.
    const duplicate = await enqueueSendReceipt(client, { order_id: 42, email: "bob@example.com", locale: "en" });

    // Through a pool, scheduled, with a dedup key; full is left to its default.
    const scheduled = await enqueueReindexProduct(
      pool,
      { product_id: 7, batches: [[1, 2], [3]] },
      { runAt: new Date(Date.UTC(2100, 0, 1)), dedupKey: "reindex-7" },
    );

    // An empty payload, in the transaction that also enqueued nothing else.
    await client.query("BEGIN");
    const empty = await enqueueRebuildSearchIndex(client, {});
    await client.query("COMMIT");

    // Payloads the types accept but the schema does not, and one that bypasses the
    // types: each rejects, naming the field and the rule.
    const invalid: Rejection[] = [];
    const bad: unknown[] = [
      { order_id: 0, email: "ada@example.com", locale: "en" },
      { order_id: 44, email: "ada@example.com", locale: "en", lines: [{ sku: "bad sku", quantity: 1 }] },
      { order_id: "44", email: "ada@example.com", locale: "en" },
    ];
    for (const payload of bad) {
      try {
        await enqueueSendReceipt(client, payload as SendReceiptPayload);
        invalid.push({ message: "accepted", problems: null });
      } catch (err) {
        invalid.push(rejection(err));
      }
    }
    // A priority out of range is an error, but not a payload's.
    let badPriority: Rejection = { message: "accepted", problems: null };
    try {
      await enqueueReindexProduct(client, { product_id: 8 }, { priority: 10 });
    } catch (err) {
      badPriority = rejection(err);
    }

    // A workflow starts in the caller's transaction; its signal completes its wait
    // step; an input its schema rejects starts nothing, naming the field.
    await client.query("BEGIN");
    const workflow = await startPublishProduct(client, { product_id: 7 }, { key: "product-7" });
    await client.query("COMMIT");
    // The key is taken while that workflow runs: starting again returns it.
    const sameWorkflow = await startPublishProduct(client, { product_id: 7 }, { key: "product-7" });
    const woken = await signalPublishProductApproved(client, workflow, { reviewer: "ada" });
    let badInput: Rejection = { message: "accepted", problems: null };
    try {
      await startPublishProduct(client, { product_id: 0 });
    } catch (err) {
      badInput = rejection(err);
    }

    const outcome: Outcome = {
      committed,
      rolledBack,
      duplicate,
      scheduled,
      empty,
      invalid,
      badPriority,
      workflow,
      sameWorkflow,
      woken,
      badInput,
    };
    process.stdout.write(JSON.stringify(outcome) + "\n");
  } finally {
    await client.end();
    await pool.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
