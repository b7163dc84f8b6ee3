// Every node-postgres client type is a Queryable: a Client or a PoolClient inside
// BEGIN/COMMIT enqueues in that transaction, a Pool in one of its own.
import type { Client, Pool, PoolClient } from "pg";
import type { Queryable } from "../../web/jobs";

export function queryables(client: Client, pool: Pool, poolClient: PoolClient): Queryable[] {
  return [client, pool, poolClient];
}
