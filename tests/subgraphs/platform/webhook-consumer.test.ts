import type { MikroORM } from '@mikro-orm/postgresql';
import amqp from 'amqplib';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createRabbitBus, EXCHANGES, type EventBus } from '../../../kernel/bus.js';
import { createOrm, migrate } from '../../../kernel/db.js';
import { createLogger } from '../../../kernel/logger.js';
import { platformSubgraph } from '../../../subgraphs/platform/index.js';
import { startEventConsumer, WEBHOOK_QUEUES } from '../../../subgraphs/platform/webhooks/delivery.fanout.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

const logger = createLogger({ service: 'test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const rabbitUrl = process.env.RABBITMQ_URL;

/**
 * A TCP proxy in front of the broker that the test can cut: every open connection is destroyed
 * and new ones are refused until it is restored, as when the broker restarts or the network drops.
 */
async function brokerProxy(target: URL) {
  const sockets = new Set<Socket>();
  let up = true;
  const server: Server = createServer((client) => {
    if (!up) return client.destroy();
    const upstream = connect(Number(target.port || 5672), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target.toString());
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    cut() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      up = true;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

if (!rabbitUrl) {
  // eslint-disable-next-line no-console
  console.warn('webhook-consumer.test: RABBITMQ_URL is not set; the broker tests are skipped');
}

(rabbitUrl ? describe : describe.skip)('webhook event consumer on RabbitMQ', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  const prefix = `test-${randomBytes(6).toString('hex')}.`;
  const buses: EventBus[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('webhook_consumer');
    orm = await createOrm({ databaseUrl: db.url, schema: 'platform', entities: platformSubgraph.entities, migrations: platformSubgraph.migrations, logger });
    await migrate(orm, db.url, 'platform', logger);
  });

  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    const connection = await amqp.connect(rabbitUrl!);
    const channel = await connection.createChannel();
    for (const queue of Object.values(WEBHOOK_QUEUES)) await channel.deleteQueue(prefix + queue);
    await connection.close();
    await orm?.close(true);
    await db?.drop();
  });

  it('survives a broker connection loss without losing an event, and fans each out once', async () => {
    const knex = orm.em.getConnection().getKnex();
    const tenant = randomUUID();
    await knex('platform.webhook_subscription').insert({ id: randomUUID(), tenant_id: tenant, url: 'https://hooks.example.com/x', events: ['*'], secret_sealed: 'unused', created_at: new Date(), updated_at: new Date() });
    const proxy = await brokerProxy(new URL(rabbitUrl!));
    const consumerBus = createRabbitBus(proxy.url, logger);
    const publisher = createRabbitBus(rabbitUrl!, logger);
    buses.push(consumerBus, publisher);
    await startEventConsumer({ knex, bus: consumerBus, logger, clock: () => new Date(), onDeliveries: () => undefined, queuePrefix: prefix });

    const ids: string[] = [];
    const publish = async (n: number) => {
      for (let i = 0; i < n; i += 1) {
        const id = `evt_${randomUUID()}`;
        ids.push(id);
        await publisher.publish({ exchange: EXCHANGES.platform, routingKey: 'incident.created', messageId: id, body: { id, type: 'incident.created', occurred_at: new Date().toISOString(), tenant_id: tenant, data: { cluster_id: 'c1' } } });
      }
    };
    // Only this test's tenant: the exchange is shared with every other test file running against the
    // same broker, and this queue (bound to `#`) receives their events too.
    const inboxCount = async () => Number((await knex('platform.event_inbox').where({ tenant_id: tenant }).count({ n: '*' }))[0]!.n);

    await publish(50);
    proxy.cut(); // mid-stream: some of the 50 may be unacknowledged, and are redelivered
    await publish(50); // published while the consumer is disconnected: they wait in the durable queue
    await new Promise((resolve) => setTimeout(resolve, 1500));
    proxy.restore();
    // An event published twice (a relay retry after a lost confirm) is one event.
    await publisher.publish({ exchange: EXCHANGES.platform, routingKey: 'incident.created', messageId: ids[0]!, body: { id: ids[0], type: 'incident.created', occurred_at: new Date().toISOString(), tenant_id: tenant, data: { cluster_id: 'c1' } } });

    await until(async () => (await inboxCount()) === 100, 20_000);
    const deliveries = await knex('platform.webhook_delivery').where({ tenant_id: tenant }).select('event_id');
    expect(deliveries.map((d: { event_id: string }) => d.event_id).sort()).toEqual([...ids].sort());
    await consumerBus.close();
    await proxy.close();
  }, 60_000);
});
