import { fork, type ChildProcess } from 'node:child_process';
import amqp from 'amqplib';
import { relayBusBetween } from '../../kernel/bus.js';
import { WEBHOOK_QUEUES } from '../../subgraphs/platform/webhooks/delivery.fanout.js';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadEdgeConfig } from '../../kernel/config.js';
import { signAccessToken, type Identity } from '../../kernel/identity.js';
import { createLogger } from '../../kernel/logger.js';
import { projectRoot } from '../../kernel/paths.js';
import { createEdge, type Edge, type EdgeOptions } from '../../rest-facade/createEdge.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface Stack {
  /** `http://127.0.0.1:<port>/api` */
  base: string;
  edge: Edge;
  database: TestDatabase;
  subgraphUrls: Record<'auth' | 'cicd' | 'platform', string>;
  accessSecret: string;
  internalSecret: string;
  token(identity: Partial<Identity> & { tenantId: string | null }): Promise<string>;
  /** Another edge on the same subgraphs (stopped with the stack); answers its base URL. */
  startEdge(env: Record<string, string>, options?: EdgeOptions): Promise<{ base: string; edge: Edge }>;
  stop(): Promise<void>;
}

const secret = () => randomBytes(32).toString('base64url');

/**
 * The real thing, as production runs it: the three compiled subgraphs as child processes on
 * their own database, and the edge in this process on a free port. Needs `npm run build`.
 */
export async function startStack(label: string, edgeEnv: Record<string, string> = {}, subgraphEnv: Record<string, string> = {}): Promise<Stack> {
  const entry = join(projectRoot(), 'dist', 'main.js');
  if (!existsSync(entry)) throw new Error('dist/main.js is missing: run npm run build (npm test does)');
  const database = await createTestDatabase(label);
  const accessSecret = secret();
  const internalSecret = secret();
  const refreshSecret = secret();
  const redisPrefix = `test-${randomBytes(6).toString('hex')}:`;
  const queuePrefix = `test-${randomBytes(6).toString('hex')}.`;
  const children: ChildProcess[] = [];
  const relayBus = relayBusBetween(() => children);
  const env = {
    ...process.env,
    APP_PROFILE: 'test',
    DATABASE_URL: database.url,
    INTERNAL_JWT_SECRET: internalSecret,
    JWT_ACCESS_SECRET: accessSecret,
    JWT_REFRESH_SECRET: refreshSecret,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // Redis is shared with every other test run on the machine: keep this stack's keys apart.
    REDIS_KEY_PREFIX: redisPrefix,
    // The broker too: this stack's durable queues have names of their own, removed at stop.
    RABBITMQ_QUEUE_PREFIX: queuePrefix,
    PORT: '0',
    LOG_LEVEL: 'warn',
    ...subgraphEnv,
  };
  const start = (name: 'auth' | 'cicd' | 'platform') =>
    new Promise<string>((resolve, reject) => {
      // Without RABBITMQ_URL the services share events through this process, as under the launcher.
      const child = fork(entry, [name], { env: { ...env, LAUNCHER_BUS: 'ipc' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      children.push(child);
      child.on('message', (m) => relayBus(child, m));
      child.on('message', (m: { type?: string; url?: string }) => m.type === 'ready' && m.url && resolve(m.url));
      child.on('exit', (code) => reject(new Error(`${name} exited with ${code} during start-up`)));
    });
  const stopChildren = () =>
    Promise.all(
      children.map(
        (c) =>
          new Promise<void>((done) => {
            if (c.exitCode !== null || c.signalCode !== null) return done();
            c.once('exit', () => done());
            c.kill('SIGTERM');
          }),
      ),
    );
  try {
    const [auth, cicd, platform] = await Promise.all([start('auth'), start('cicd'), start('platform')]);
    const subgraphUrls = { auth, cicd, platform };
    const edges: Edge[] = [];
    const startEdge = async (env: Record<string, string>, options: EdgeOptions = {}) => {
      const config = loadEdgeConfig({
        APP_PROFILE: 'test',
        PORT: '0',
        LOG_LEVEL: 'warn',
        JWT_ACCESS_SECRET: accessSecret,
        INTERNAL_JWT_SECRET: internalSecret,
        AUTH_SUBGRAPH_URL: auth,
        CICD_SUBGRAPH_URL: cicd,
        PLATFORM_SUBGRAPH_URL: platform,
        REDIS_KEY_PREFIX: redisPrefix,
        ...env,
      });
      const started = await createEdge(config, createLogger({ service: 'edge', level: 'warn' }), options);
      edges.push(started);
      return { base: `${started.address}${config.basePath}`, edge: started };
    };
    const { base, edge } = await startEdge(edgeEnv);
    return {
      base,
      startEdge,
      edge,
      database,
      subgraphUrls,
      accessSecret,
      internalSecret,
      token: (identity) =>
        signAccessToken(
          { ...identity, subject: identity.subject ?? 'user-1', tenantId: identity.tenantId, roles: identity.roles ?? [], scopes: identity.scopes ?? ['read', 'deploy'] },
          { current: accessSecret, previous: [] },
        ),
      async stop() {
        await Promise.all(edges.map((e) => e.stop()));
        await stopChildren();
        await deleteQueues(queuePrefix);
        await database.drop();
      },
    };
  } catch (error) {
    await stopChildren();
    await deleteQueues(queuePrefix);
    await database.drop();
    throw error;
  }
}

/** Removes a stack's durable queues from the shared broker (nothing to do without one). */
async function deleteQueues(prefix: string): Promise<void> {
  const url = process.env.RABBITMQ_URL;
  if (!url) return;
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    for (const queue of Object.values(WEBHOOK_QUEUES)) await channel.deleteQueue(prefix + queue);
  } finally {
    await connection.close();
  }
}
