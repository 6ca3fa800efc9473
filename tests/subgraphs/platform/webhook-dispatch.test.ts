import type { MikroORM } from '@mikro-orm/postgresql';
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { PlatformConfig } from '../../../kernel/config.js';
import { createSecretBox } from '../../../kernel/crypto.js';
import { createOrm, migrate } from '../../../kernel/db.js';
import { AppError } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { createLogger } from '../../../kernel/logger.js';
import { projectRoot } from '../../../kernel/paths.js';
import { tenantEntityManager } from '../../../kernel/tenancy.js';
import { platformSubgraph } from '../../../subgraphs/platform/index.js';
import type { PlatformRuntime } from '../../../subgraphs/platform/runtime.js';
import { DeliveryStatus, WebhookDelivery, WebhookDeliveryAttempt } from '../../../subgraphs/platform/webhooks/delivery.entity.js';
import { startDispatcher, type Dispatcher } from '../../../subgraphs/platform/webhooks/delivery.dispatcher.js';
import { fanOut, readEnvelope, type EventEnvelope } from '../../../subgraphs/platform/webhooks/delivery.fanout.js';
import { WebhookDeliveryService } from '../../../subgraphs/platform/webhooks/delivery.service.js';
import { RETRY_SCHEDULE_SECS } from '../../../subgraphs/platform/webhooks/retry-schedule.js';
import { WebhookSubscriptionService } from '../../../subgraphs/platform/webhooks/webhook.service.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { createTestPki, startHttpsReceiver, type HttpsReceiver, type TestPki } from '../../helpers/https-receiver.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const TENANT_A = '0a000000-0000-4000-8000-00000000000a';
const TENANT_B = '0b000000-0000-4000-8000-00000000000b';
const alice: Identity = { subject: 'alice', tenantId: TENANT_A, roles: [], scopes: ['read', 'deploy'] };
const bob: Identity = { subject: 'bob', tenantId: TENANT_B, roles: [], scopes: ['read', 'deploy'] };
const key = randomBytes(32);
/** A tenant of its own, so that other tests' subscriptions do not receive this test's events. */
const newTenant = (): Identity => ({ subject: 'someone', tenantId: randomUUID(), roles: [], scopes: ['read', 'deploy'] });

let db: TestDatabase;
let orm: MikroORM;
let pki: TestPki;
let receiver: HttpsReceiver;
const runtime: PlatformRuntime = { config: {} as PlatformConfig, box: createSecretBox(key) };
const dispatchers: Dispatcher[] = [];

/** A clock the test moves: the retry schedule is hours long. */
function testClock(start = new Date()) {
  let now = start.getTime();
  return { now: () => new Date(now), advance: (secs: number) => (now += secs * 1000), set: (at: Date) => (now = at.getTime()) };
}

function dispatcher(clock: () => Date, extra: { allowPrivateNetworks?: boolean } = {}): Dispatcher {
  const d = startDispatcher({ knex: orm.em.getConnection().getKnex(), box: runtime.box, logger, allowPrivateNetworks: extra.allowPrivateNetworks ?? true, caFile: pki.caFile, clock, pollMs: 60_000 });
  dispatchers.push(d);
  return d;
}

const subscriptions = (who: Identity) => new WebhookSubscriptionService(tenantEntityManager(orm.em, who), who, runtime);
const deliveries = (who: Identity) => new WebhookDeliveryService(tenantEntityManager(orm.em, who), who, runtime);

/** A subscription whose URL path is its own, with the receiver holding its secret. */
async function subscribe(who: Identity, fields: { events?: string[]; clusterIds?: string[]; cloudspaceIds?: string[]; enabled?: boolean; url?: string } = {}) {
  const path = `/hooks/${randomUUID()}`;
  const created = await subscriptions(who).create({ url: fields.url ?? `${receiver.url}${path}`, ...fields });
  receiver.secrets.set(path, [created.secret]);
  return { ...created, path };
}

function event(type: string, tenantId: string, data: Record<string, unknown> = {}, occurredAt = new Date()): EventEnvelope {
  return { id: `evt_${randomUUID()}`, type, occurred_at: occurredAt.toISOString(), tenant_id: tenantId, data };
}

const rowsOf = (subscriptionId: string) => orm.em.fork().find(WebhookDelivery, { subscriptionId }, { filters: false });
const attemptsOf = (deliveryId: string) => orm.em.fork().find(WebhookDeliveryAttempt, { deliveryId }, { orderBy: { number: 'asc' } });

beforeAll(async () => {
  db = await createTestDatabase('webhook_dispatch');
  orm = await createOrm({ databaseUrl: db.url, schema: 'platform', entities: platformSubgraph.entities, migrations: platformSubgraph.migrations, logger });
  await migrate(orm, db.url, 'platform', logger);
  pki = createTestPki();
  receiver = await startHttpsReceiver(pki);
});

// Tests share the database and the receiver: what one test leaves pending must not be sent by
// the next test's dispatcher (whose clock may be hours ahead).
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  await orm.em.getConnection().getKnex()('platform.webhook_delivery').where({ status: 'pending' }).update({ status: 'failed', next_attempt_at: null });
});

afterAll(async () => {
  await receiver?.close();
  pki?.remove();
  await orm?.close(true);
  await db?.drop();
});

describe('fan-out', () => {
  it('matches by type, tenant, cluster and CloudSpace, and skips disabled subscriptions', async () => {
    const all = await subscribe(alice);
    const deployedOnly = await subscribe(alice, { events: ['app.deployed'] });
    const clusterC1 = await subscribe(alice, { clusterIds: ['c1'] });
    const spaceS1 = await subscribe(alice, { cloudspaceIds: ['s1'] });
    const disabled = await subscribe(alice, { enabled: false });
    const otherTenant = await subscribe(bob);
    const now = new Date();
    await fanOut(orm.em.getConnection().getKnex(), event('app.deployed', TENANT_A, { cluster_id: 'c1', cloudspace_id: 's1' }), now);
    await fanOut(orm.em.getConnection().getKnex(), event('app.deleted', TENANT_A, { cluster_id: 'c2', cloudspace_id: 's1' }), now);
    await fanOut(orm.em.getConnection().getKnex(), event('incident.created', TENANT_A, { cluster_id: 'c1' }), now);
    const types = async (s: { subscription: { id: string } }) => (await rowsOf(s.subscription.id)).map((d) => d.eventType).sort();
    expect(await types(all)).toEqual(['app.deleted', 'app.deployed', 'incident.created']);
    expect(await types(deployedOnly)).toEqual(['app.deployed']);
    expect(await types(clusterC1)).toEqual(['app.deployed', 'incident.created']);
    expect(await types(spaceS1)).toEqual(['app.deleted', 'app.deployed']); // incident has no CloudSpace
    expect(await types(disabled)).toEqual([]);
    expect(await types(otherTenant)).toEqual([]);
  });

  it('is idempotent by event id', async () => {
    const carol = newTenant();
    const s = await subscribe(carol);
    const e = event('cluster.phase_changed', carol.tenantId!, { cluster_id: 'c9' });
    const knex = orm.em.getConnection().getKnex();
    const counts = await Promise.all([fanOut(knex, e, new Date()), fanOut(knex, e, new Date()), fanOut(knex, e, new Date())]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await fanOut(knex, e, new Date())).toBe(0);
    expect(await rowsOf(s.subscription.id)).toHaveLength(1);
  });

  it('refuses envelopes that break the contract', () => {
    const good = { id: 'e1', type: 'app.deleted', occurred_at: '2026-11-21T10:00:00Z', tenant_id: TENANT_A, data: {} };
    expect(readEnvelope(good)).toMatchObject({ id: 'e1', occurred_at: '2026-11-21T10:00:00.000Z' });
    expect(readEnvelope({ ...good, type: 'app.exploded' })).toMatch(/catalogue/);
    expect(readEnvelope({ ...good, tenant_id: 'acme' })).toMatch(/UUID/);
    expect(readEnvelope({ ...good, occurred_at: 'yesterday' })).toMatch(/RFC 3339/);
    expect(readEnvelope({ ...good, data: [] })).toMatch(/object/);
    expect(readEnvelope({ ...good, id: '' })).toMatch(/id/);
  });
});

describe('delivery', () => {
  let me: Identity;
  let other: Identity;
  beforeEach(() => {
    me = newTenant();
    other = newTenant();
  });

  it('POSTs the envelope signed so that the stripe verifier accepts it, with event id and attempt headers', async () => {
    const s = await subscribe(me, { events: ['pipeline.run_completed'] });
    const e = event('pipeline.run_completed', me.tenantId!, { run_id: 'r1', status: 'success' });
    const clock = testClock();
    await fanOut(orm.em.getConnection().getKnex(), e, clock.now());
    await dispatcher(clock.now).drain();
    const got = await receiver.waitFor((d) => d.event.id === e.id);
    expect(got.event).toEqual(e);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['service-event-id']).toBe(e.id);
    expect(got.headers['service-attempt']).toBe('1');
    expect(got.verifiedWith).toEqual(receiver.secrets.get(s.path));
    const [row] = await rowsOf(s.subscription.id);
    expect(row).toMatchObject({ status: DeliveryStatus.succeeded, attemptCount: 1, nextAttemptAt: null, lastStatusCode: 200 });
    expect(await attemptsOf(row!.id)).toEqual([expect.objectContaining({ number: 1, statusCode: 200, responseExcerpt: 'ok', error: null, succeeded: true })]);
  });

  it('retries a failing receiver at the published schedule, then fails the delivery', async () => {
    const s = await subscribe(me, { events: ['incident.created'] });
    receiver.behave(s.path, () => ({ status: 500, body: `boom ${'x'.repeat(3000)}` }));
    const occurred = new Date('2026-11-21T08:00:00.000Z');
    const clock = testClock(occurred);
    const d = dispatcher(clock.now);
    await fanOut(orm.em.getConnection().getKnex(), event('incident.created', me.tenantId!, { cluster_id: 'c1' }, occurred), clock.now());
    for (let attempt = 1; attempt <= RETRY_SCHEDULE_SECS.length; attempt += 1) {
      clock.set(new Date(occurred.getTime() + RETRY_SCHEDULE_SECS[attempt - 1]! * 1000 - 1000));
      await d.drain(); // one second early: nothing is due
      const [early] = await rowsOf(s.subscription.id);
      expect(early!.attemptCount).toBe(attempt - 1);
      clock.advance(1);
      await d.drain();
      const [row] = await rowsOf(s.subscription.id);
      expect(row!.attemptCount).toBe(attempt);
      const next = RETRY_SCHEDULE_SECS[attempt];
      if (next === undefined) expect(row).toMatchObject({ status: DeliveryStatus.failed, nextAttemptAt: null });
      else expect(row).toMatchObject({ status: DeliveryStatus.pending, nextAttemptAt: new Date(occurred.getTime() + next * 1000) });
    }
    const [row] = await rowsOf(s.subscription.id);
    const attempts = await attemptsOf(row!.id);
    expect(attempts.map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(attempts.every((a) => a.statusCode === 500 && a.error === 'receiver answered 500' && !a.succeeded)).toBe(true);
    expect(Buffer.byteLength(attempts[0]!.responseExcerpt!)).toBe(1024);
    expect(receiver.received.filter((r) => r.path === s.path).map((r) => r.headers['service-attempt'])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    // The last attempt is inside the 24 h window of spec 6.
    expect(attempts[8]!.attemptedAt.getTime() - occurred.getTime()).toBeLessThan(24 * 3600 * 1000);
  });

  it('counts no answer within 10 s as a failure', async () => {
    const s = await subscribe(me, { events: ['app.deleted'] });
    receiver.behave(s.path, () => ({ status: 200, delayMs: 12_000 }));
    const clock = testClock();
    await fanOut(orm.em.getConnection().getKnex(), event('app.deleted', me.tenantId!), clock.now());
    await dispatcher(clock.now).drain();
    const [row] = await rowsOf(s.subscription.id);
    expect(row).toMatchObject({ status: DeliveryStatus.pending, attemptCount: 1 });
    const [attempt] = await attemptsOf(row!.id);
    expect(attempt).toMatchObject({ statusCode: null, error: 'no answer within 10 s', succeeded: false });
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(9_900);
  }, 30_000);

  it('records a refused connection', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const s = await subscribe(me, { events: ['app.deleted'], url: `https://localhost:${closedPort}/hooks/nobody` });
    const clock = testClock();
    await fanOut(orm.em.getConnection().getKnex(), event('app.deleted', me.tenantId!), clock.now());
    await dispatcher(clock.now).drain();
    const [row] = await rowsOf(s.subscription.id);
    expect(await attemptsOf(row!.id)).toEqual([expect.objectContaining({ error: 'connection refused', statusCode: null })]);
    expect(row!.status).toBe(DeliveryStatus.pending);
  });

  it('signs with both secrets during a rotation overlap, then with the new one only', async () => {
    const s = await subscribe(me, { events: ['build.completed'] });
    const rotated = await subscriptions(me).rotateSecret(s.subscription.id, 3600);
    const clock = testClock();
    const d = dispatcher(clock.now);
    receiver.secrets.set(s.path, [s.secret, rotated.secret]);
    const during = event('build.completed', me.tenantId!);
    await fanOut(orm.em.getConnection().getKnex(), during, clock.now());
    await d.drain();
    expect((await receiver.waitFor((r) => r.event.id === during.id)).verifiedWith).toEqual([s.secret, rotated.secret]);
    clock.advance(3601);
    const after = event('build.completed', me.tenantId!);
    await fanOut(orm.em.getConnection().getKnex(), after, clock.now());
    await d.drain();
    expect((await receiver.waitFor((r) => r.event.id === after.id)).verifiedWith).toEqual([rotated.secret]);
  });

  it('refuses loopback and private destinations at send time unless allowed', async () => {
    const byIp = await subscribe(me, { events: ['anomaly.detected'], url: `https://127.0.0.1:${receiver.port}/hooks/by-ip` });
    const byName = await subscribe(me, { events: ['anomaly.detected'] });
    const clock = testClock();
    const before = receiver.received.length;
    await fanOut(orm.em.getConnection().getKnex(), event('anomaly.detected', me.tenantId!, { cluster_id: 'c1' }), clock.now());
    await dispatcher(clock.now, { allowPrivateNetworks: false }).drain();
    for (const s of [byIp, byName]) {
      const [row] = await rowsOf(s.subscription.id);
      const [attempt] = await attemptsOf(row!.id);
      expect(attempt!.error).toMatch(/^refused: (127\.0\.0\.1|localhost) resolves to (127\.0\.0\.1|::1), a loopback, private, link-local or metadata address$/);
      expect(row!.status).toBe(DeliveryStatus.pending);
    }
    expect(receiver.received.length).toBe(before);
  });

  it('loses nothing when a dispatcher is killed in the middle of a delivery', async () => {
    const s = await subscribe(me, { events: ['action.pending'] });
    let calls = 0;
    receiver.behave(s.path, () => (++calls === 1 ? 'hang' : { status: 204 }));
    const e = event('action.pending', me.tenantId!, { cluster_id: 'c1' });
    await fanOut(orm.em.getConnection().getKnex(), e, new Date());
    const child = fork(join(projectRoot(), 'dist/tests/helpers/dispatcher-process.js'), [], {
      env: { ...process.env, DATABASE_URL: db.url, SECRET_ENCRYPTION_KEY: key.toString('hex'), WEBHOOK_CA_FILE: pki.caFile },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await receiver.waitFor((r) => r.event.id === e.id);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const [claimed] = await rowsOf(s.subscription.id);
    expect(claimed).toMatchObject({ status: DeliveryStatus.pending, attemptCount: 0 });
    // Nothing is due again until the claim's lease runs out; then another dispatcher sends it.
    const clock = testClock();
    const d = dispatcher(clock.now);
    await d.drain();
    expect((await rowsOf(s.subscription.id))[0]!.attemptCount).toBe(0);
    clock.set(new Date(claimed!.nextAttemptAt!.getTime() + 1000));
    await d.drain();
    const [row] = await rowsOf(s.subscription.id);
    expect(await attemptsOf(row!.id)).toEqual([expect.objectContaining({ number: 1, statusCode: 204 })]);
    expect(row).toMatchObject({ status: DeliveryStatus.succeeded, attemptCount: 1, lastStatusCode: 204 });
    const both = receiver.received.filter((r) => r.path === s.path);
    expect(both.map((r) => r.event.id)).toEqual([e.id, e.id]);
  });

  it('redelivers on request with the same event id and the next attempt number', async () => {
    const s = await subscribe(me, { events: ['scaling_decision.created'] });
    const e = event('scaling_decision.created', me.tenantId!, { cluster_id: 'c1' });
    const clock = testClock();
    const d = dispatcher(clock.now);
    runtime.dispatcher = d;
    await fanOut(orm.em.getConnection().getKnex(), e, clock.now());
    await d.drain();
    const [row] = await rowsOf(s.subscription.id);
    const again = await deliveries(me).redeliver(s.subscription.id, row!.id);
    expect(again.status).toBe(DeliveryStatus.pending);
    await d.drain();
    const sent = receiver.received.filter((r) => r.path === s.path);
    expect(sent.map((r) => [r.event.id, r.headers['service-attempt']])).toEqual([
      [e.id, '1'],
      [e.id, '2'],
    ]);
    const listed = await deliveries(me).list(s.subscription.id, {});
    expect(listed.data[0]).toMatchObject({ status: DeliveryStatus.succeeded, attemptCount: 2 });
    expect(listed.data[0]!.attempts.map((a) => a.number)).toEqual([1, 2]);
    delete runtime.dispatcher;
  });

  it('lists deliveries by status, and another tenant finds neither subscription nor delivery', async () => {
    const s = await subscribe(me, { events: ['agent_run.completed'] });
    receiver.behave(s.path, (r) => (r.event.data.ok ? { status: 200 } : { status: 503 }));
    const clock = testClock();
    const knex = orm.em.getConnection().getKnex();
    await fanOut(knex, event('agent_run.completed', me.tenantId!, { cluster_id: 'c1', ok: true }), clock.now());
    await fanOut(knex, event('agent_run.completed', me.tenantId!, { cluster_id: 'c1', ok: false }), clock.now());
    await dispatcher(clock.now).drain();
    const service = deliveries(me);
    expect((await service.list(s.subscription.id, {})).total).toBe(2);
    const pending = await service.list(s.subscription.id, { status: DeliveryStatus.pending });
    expect(pending.data.map((d) => d.attempts[0]!.statusCode)).toEqual([503]);
    expect((await service.list(s.subscription.id, { status: DeliveryStatus.succeeded })).total).toBe(1);
    await expect(deliveries(other).list(s.subscription.id, {})).rejects.toBeInstanceOf(AppError);
    await expect(deliveries(other).list(s.subscription.id, {})).rejects.toMatchObject({ extensions: { code: 'not_found' } });
    await expect(deliveries(other).redeliver(s.subscription.id, pending.data[0]!.id)).rejects.toMatchObject({ extensions: { code: 'not_found' } });
    await expect(deliveries(me).redeliver(s.subscription.id, randomUUID())).rejects.toMatchObject({ extensions: { code: 'not_found' } });
  });
});
