import { MikroORM } from '@mikro-orm/postgresql';
import amqp from 'amqplib';
import { createInProcessBus, createRabbitBus, topicMatches, type BusMessage } from '../../kernel/bus.js';
import { createSecretBox, parseEncryptionKey } from '../../kernel/crypto.js';
import { createLogger } from '../../kernel/logger.js';
import { enqueue, OutboxMessage, outboxTableSql, startOutboxRelay } from '../../kernel/outbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const until = async (check: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('topic matching', () => {
  it.each([
    ['cicd.#', 'cicd.host_a.run_started', true],
    ['cicd.*.run_failed', 'cicd.generic.run_failed', true],
    ['cicd.*.run_failed', 'cicd.generic.run_completed', false],
    ['#', 'anything.at.all', true],
    ['app.*', 'app.deployed', true],
    ['app.*', 'app.deploy.failed', false],
    ['pipeline.run_completed', 'pipeline.run_completed', true],
  ])('%s vs %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});

describe('secret box', () => {
  const box = createSecretBox(parseEncryptionKey('ab'.repeat(32))!);
  it('round-trips and binds the purpose', () => {
    const sealed = box.seal('s3cret', 'pipeline:1');
    expect(sealed).not.toContain('s3cret');
    expect(box.open(sealed, 'pipeline:1')).toBe('s3cret');
    expect(() => box.open(sealed, 'pipeline:2')).toThrow(/cannot be decrypted/);
    expect(box.seal('s3cret', 'pipeline:1')).not.toBe(sealed);
  });
  it('refuses keys that are not 32 bytes', () => {
    expect(parseEncryptionKey('abcd')).toBeUndefined();
    expect(parseEncryptionKey(Buffer.alloc(32, 1).toString('base64'))).toHaveLength(32);
  });
});

describe('outbox relay', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  beforeAll(async () => {
    db = await createTestDatabase('outbox');
    orm = await MikroORM.init({ clientUrl: db.url, schema: 'box', entities: [OutboxMessage], allowGlobalContext: true, discovery: { warnWhenNoEntities: false } });
    await orm.em.getConnection().execute('create schema if not exists "box"');
    for (const sql of outboxTableSql('box')) await orm.em.getConnection().execute(sql);
  });
  afterAll(async () => {
    await orm?.close(true);
    await db?.drop();
  });

  it('publishes committed messages once, in order, and marks them', async () => {
    const bus = createInProcessBus(logger);
    const got: BusMessage[] = [];
    await bus.subscribe('q', 'test.events', ['#'], async (m) => {
      got.push(m);
    });
    const em = orm.em.fork();
    const ids = [1, 2, 3].map((n) => enqueue(em, 'test.events', `thing.${n}`, { n }).id);
    await em.flush();
    const relays = [startOutboxRelay({ orm, schema: 'box', bus, logger, intervalMs: 50 }), startOutboxRelay({ orm, schema: 'box', bus, logger, intervalMs: 50 })];
    await until(() => got.length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await Promise.all(relays.map((r) => r.stop()));
    expect(got.map((m) => m.messageId)).toEqual(ids);
    expect(got.map((m) => m.routingKey)).toEqual(['thing.1', 'thing.2', 'thing.3']);
    const pending = await orm.em.fork().count(OutboxMessage, { publishedAt: null });
    expect(pending).toBe(0);
  });

  it('keeps a message when publishing fails, and retries it', async () => {
    let fail = true;
    const published: string[] = [];
    const flaky = {
      kind: 'in-process' as const,
      async publish(m: BusMessage) {
        if (fail) throw new Error('broker away');
        published.push(m.messageId);
      },
      async subscribe() {},
      async close() {},
    };
    const em = orm.em.fork();
    const { id } = enqueue(em, 'test.events', 'retry.me', {});
    await em.flush();
    const relay = startOutboxRelay({ orm, schema: 'box', bus: flaky, logger, intervalMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const row = await orm.em.fork().findOneOrFail(OutboxMessage, { id });
    expect(row.publishedAt).toBeNull();
    expect(row.attempts).toBeGreaterThan(0);
    expect(row.lastError).toMatch(/broker away/);
    fail = false;
    await orm.em.fork().nativeUpdate(OutboxMessage, { id }, { nextAttemptAt: new Date() });
    relay.nudge();
    await until(() => published.includes(id));
    await relay.stop();
  });
});

const rabbitUrl = process.env.RABBITMQ_URL;
(rabbitUrl ? describe : describe.skip)('RabbitMQ bus', () => {
  it('publishes with confirms to a durable queue that a consumer acknowledges', async () => {
    const bus = createRabbitBus(rabbitUrl!, logger);
    const got: BusMessage[] = [];
    const queue = `test-bus-${Date.now()}`;
    await bus.subscribe(queue, 'test.events', ['bus.#'], async (m) => {
      got.push(m);
    });
    await bus.publish({ exchange: 'test.events', routingKey: 'bus.hello', messageId: 'm-1', body: { hello: 'world' } });
    await until(() => got.length === 1);
    expect(got[0]).toMatchObject({ routingKey: 'bus.hello', messageId: 'm-1', body: { hello: 'world' } });
    await bus.close();
    // The broker is shared with other runs: leave no durable queue behind.
    const connection = await amqp.connect(rabbitUrl!);
    const channel = await connection.createChannel();
    await channel.deleteQueue(queue);
    await connection.close();
  });
});
