import pg from 'pg';

/** Polls `check` every 100 ms until it answers something truthy; fails naming `what` after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The payloads a service queued in its outbox under `routingKey`, oldest first. */
export async function outboxPayloads(databaseUrl: string, routingKey: string, schema = 'platform'): Promise<Record<string, any>[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return (await db.query(`select payload from "${schema}".outbox_message where routing_key = $1 order by created_at`, [routingKey])).rows.map((r) => r.payload);
  } finally {
    await db.end();
  }
}
