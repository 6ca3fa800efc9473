import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

function serverUrl(): URL {
  const raw = process.env.DATABASE_URL;
  if (!raw) throw new Error('DATABASE_URL is not set (tests/setup/globalSetup.ts sets it)');
  return new URL(raw);
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = serverUrl();
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database for one test file, on the shared server: CI shares that server with whatever
 * earlier sessions left behind, so nothing is assumed about its other databases.
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `t_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`create database "${name}"`));
  const url = serverUrl();
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => undefined),
  };
}
