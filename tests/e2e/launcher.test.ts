import { spawn } from 'node:child_process';
import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../kernel/paths.js';

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * What a newcomer gets from `npm start`: the local profile with an embedded PostgreSQL in the
 * data directory, three subgraphs and the edge, the URLs printed, and a clean stop on SIGINT
 * that takes PostgreSQL down too.
 */
describe('npm start (local profile)', () => {
  it('starts everything on embedded PostgreSQL, serves requests, and stops cleanly on SIGINT', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cloudops-launcher-'));
    const [edgePort, authPort, cicdPort, platformPort, pgPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(edgePort),
      AUTH_PORT: String(authPort),
      CICD_PORT: String(cicdPort),
      PLATFORM_PORT: String(platformPort),
      EMBEDDED_POSTGRES_PORT: String(pgPort),
    };
    delete env.DATABASE_URL;
    delete env.APP_PROFILE;
    const child = spawn(process.execPath, [join(projectRoot(), 'dist', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (output.includes('Ctrl-C stops everything')) {
            clearInterval(timer);
            resolve();
          }
          if (child.exitCode !== null) {
            clearInterval(timer);
            reject(new Error(`launcher exited early:\n${output}`));
          }
        }, 100);
      });
      expect(output).toMatch(/profile local/);
      expect(output).toMatch(/starting embedded PostgreSQL/);
      expect(output).toContain(`REST base     http://127.0.0.1:${edgePort}/api`);
      expect(output).toContain(`GraphQL       http://127.0.0.1:${edgePort}/api/graphql`);
      expect(output).toContain(`API docs      http://127.0.0.1:${edgePort}/api/docs`);

      const ready = await fetch(`http://127.0.0.1:${edgePort}/api/readyz`);
      expect(ready.status).toBe(200);
      const health = await fetch(`http://127.0.0.1:${edgePort}/api/platform/healthz`);
      expect(await health.json()).toMatchObject({ status: 'ok', database: true });
      const secrets = JSON.parse(readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8'));
      expect(secrets.jwtAccessSecret.length).toBeGreaterThanOrEqual(32);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(output).toMatch(/stopping embedded PostgreSQL/);
    // PostgreSQL removes its pid file when it has shut down.
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 120_000);
});
