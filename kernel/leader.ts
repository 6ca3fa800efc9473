import pg from 'pg';
import type { Logger } from './logger.js';

export interface LeaderLock {
  /** Takes the lock if it is free (never waits); answers whether this process leads now. */
  acquire(): Promise<boolean>;
  readonly leading: boolean;
  /** Gives the lock up (its connection closes, so PostgreSQL releases it at once). */
  release(): Promise<void>;
}

/**
 * Leader election for a worker that must run on one replica at a time: a PostgreSQL session-level
 * advisory lock held on a connection of its own. A leader that dies or loses its connection loses
 * the lock with it, so another replica takes over on its next `acquire()`; nothing has to expire.
 */
export function createLeaderLock(options: { databaseUrl: string; key: string; name: string; logger: Logger }): LeaderLock {
  const { logger, name } = options;
  let client: pg.Client | undefined;
  let leading = false;

  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({ connectionString: options.databaseUrl, application_name: `leader:${options.key}` });
    c.on('error', () => undefined);
    c.on('end', () => {
      if (client !== c) return;
      if (leading) logger.warn(`${name} lost its lock connection; standing by`);
      leading = false;
      client = undefined;
    });
    await c.connect();
    return c;
  };

  return {
    get leading() {
      return leading;
    },
    async acquire() {
      if (leading) return true;
      try {
        client ??= await connect();
        const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [options.key]);
        leading = rows[0]?.locked === true;
        if (leading) logger.info(`${name} leading`);
      } catch (error) {
        logger.warn({ err: error }, `${name} could not take its lock`);
        const c = client;
        client = undefined;
        leading = false;
        await c?.end().catch(() => undefined);
      }
      return leading;
    },
    async release() {
      const c = client;
      client = undefined;
      leading = false;
      await c?.end().catch(() => undefined);
    },
  };
}
