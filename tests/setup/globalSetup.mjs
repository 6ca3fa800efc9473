// Runs once before all test files, outside jest's module system, hence plain JS on the
// compiled kernel (npm test builds first).
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Tests use the PostgreSQL server in DATABASE_URL (CI: 127.0.0.1:5432) and create a database of
 * their own in it per test file. Without DATABASE_URL an embedded PostgreSQL is started for the
 * run in a temporary directory.
 */
export default async function globalSetup() {
  if (process.env.DATABASE_URL) {
    process.stdout.write(`\ntests use PostgreSQL at ${new URL(process.env.DATABASE_URL).host} (DATABASE_URL)\n`);
    return;
  }
  const { startEmbeddedPostgres } = await import('../../dist/kernel/embedded-postgres.js');
  const { createLogger } = await import('../../dist/kernel/logger.js');
  const port = await new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = server.address();
      server.close(() => resolve(p));
    });
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'cloudops-test-pg-'));
  const db = await startEmbeddedPostgres({ dataDir, port, logger: createLogger({ service: 'tests', level: 'warn' }) });
  process.env.DATABASE_URL = db.url;
  globalThis.__embeddedPostgres = db;
  process.stdout.write(`\nDATABASE_URL not set: tests use an embedded PostgreSQL on port ${port}\n`);
}
