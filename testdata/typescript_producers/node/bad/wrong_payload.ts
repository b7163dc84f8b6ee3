// Mistakes tsc must catch in code that enqueues with the generated producers. Each
// statement is wrong in one way; bad/wrong_payload.errors holds the errors tsc gives.
import type { Client } from "pg";
import {
  enqueueRebuildSearchIndex,
  enqueueReindexProduct,
  enqueueSendReceipt,
  enqueueSyncContact,
} from "../../web/jobs";

export async function mistakes(client: Client): Promise<void> {
  // order_id is a number.
  await enqueueSendReceipt(client, { order_id: "42", email: "ada@example.com", locale: "en" });
  // locale is one of en, de and fr.
  await enqueueSendReceipt(client, { order_id: 42, email: "ada@example.com", locale: "es" });
  // email is required.
  await enqueueSendReceipt(client, { order_id: 42, locale: "en" });
  // The schema is closed (additionalProperties: false), so a misspelt property is an error.
  await enqueueSendReceipt(client, { order_id: 42, email: "ada@example.com", locale: "en", emial: "x" });
  // Nested types are checked too: currency is one of EUR, USD and GBP.
  await enqueueSendReceipt(client, { order_id: 42, email: "a@b.c", locale: "en", total: { minor_units: 1, currency: "JPY" } });
  // phone is required, and nullable: null is fine, undefined is not.
  await enqueueSyncContact(client, { contact_id: "5f0c", phone: undefined });
  // The id is a decimal string: int8 does not fit a number.
  const id: number = await enqueueReindexProduct(client, { product_id: 1 });
  // runAt is a Date.
  await enqueueReindexProduct(client, { product_id: 1 }, { runAt: "tomorrow" });
  // rebuild_search_index's payload is closed and has no properties: only {} is one.
  await enqueueRebuildSearchIndex(client, { full: true });
  void id;
}
