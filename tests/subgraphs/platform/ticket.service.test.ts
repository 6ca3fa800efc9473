import type { MikroORM } from '@mikro-orm/postgresql';
import { createOrm, migrate } from '../../../kernel/db.js';
import { AppError } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { createLogger } from '../../../kernel/logger.js';
import { tenantEntityManager } from '../../../kernel/tenancy.js';
import { platformSubgraph } from '../../../subgraphs/platform/index.js';
import { SupportTicket, TicketPriority, TicketStatus } from '../../../subgraphs/platform/support/ticket.entity.js';
import { SupportTicketService } from '../../../subgraphs/platform/support/ticket.service.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const TENANT_A = '0a000000-0000-4000-8000-00000000000a';
const TENANT_B = '0b000000-0000-4000-8000-00000000000b';
const alice: Identity = { subject: 'alice', tenantId: TENANT_A, roles: [], scopes: ['read', 'deploy'] };
const bob: Identity = { subject: 'bob', tenantId: TENANT_B, roles: [], scopes: ['read', 'deploy'] };

let db: TestDatabase;
let orm: MikroORM;

beforeAll(async () => {
  db = await createTestDatabase('ticket_service');
  orm = await createOrm({ databaseUrl: db.url, schema: 'platform', entities: platformSubgraph.entities, migrations: platformSubgraph.migrations, logger });
  await migrate(orm, db.url, 'platform', logger);
});

afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
});

const serviceFor = (identity: Identity) => new SupportTicketService(tenantEntityManager(orm.em, identity), identity);

describe('platform migrations', () => {
  it('create exactly the tables the entities describe', async () => {
    const diff = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, safe: true });
    expect(diff.trim()).toBe('');
  });

  it('are idempotent when several replicas start at once', async () => {
    const others = await Promise.all([1, 2].map(() => createOrm({ databaseUrl: db.url, schema: 'platform', entities: platformSubgraph.entities, migrations: platformSubgraph.migrations, logger })));
    const applied = await Promise.all(others.map((o) => migrate(o, db.url, 'platform', logger)));
    expect(applied).toEqual([[], []]);
    await Promise.all(others.map((o) => o.close(true)));
  });
});

describe('SupportTicketService', () => {
  it('refuses to query without a tenant binding', async () => {
    await expect(orm.em.fork().find(SupportTicket, {})).rejects.toThrow();
  });

  it('keeps tenants apart', async () => {
    const mine = await serviceFor(alice).create({ subject: 'a', description: 'd' });
    await expect(serviceFor(bob).get(mine.id)).rejects.toMatchObject({ definition: { code: 'not_found' } });
    await expect(serviceFor(bob).update(mine.id, { status: TicketStatus.closed })).rejects.toBeInstanceOf(AppError);
    expect((await serviceFor(alice).get(mine.id)).status).toBe(TicketStatus.open);
  });

  it('enforces the status moves', async () => {
    const s = serviceFor(alice);
    const t = await s.create({ subject: 'moves', description: 'd' });
    expect((await s.update(t.id, { status: TicketStatus.resolved })).resolvedAt).toBeInstanceOf(Date);
    const reopened = await s.update(t.id, { status: TicketStatus.open });
    expect(reopened.resolvedAt).toBeNull();
    await s.update(t.id, { status: TicketStatus.closed });
    await expect(s.update(t.id, { status: TicketStatus.open })).rejects.toMatchObject({ definition: { code: 'invalid_transition' } });
  });

  it('computes metrics in SQL on known data', async () => {
    const tenant = '0c000000-0000-4000-8000-00000000000c';
    const carol: Identity = { subject: 'carol', tenantId: tenant, roles: [], scopes: ['read', 'deploy'] };
    const em = orm.em.fork();
    const hour = 3600_000;
    const now = Date.now();
    const make = (status: TicketStatus, priority: TicketPriority, createdHoursAgo: number, resolvedAfterHours: number | null) =>
      em.create(SupportTicket, {
        tenantId: tenant,
        subject: 's',
        description: 'd',
        requester: 'carol',
        status,
        priority,
        createdAt: new Date(now - createdHoursAgo * hour),
        updatedAt: new Date(now),
        resolvedAt: resolvedAfterHours === null ? null : new Date(now - createdHoursAgo * hour + resolvedAfterHours * hour),
      });
    make(TicketStatus.open, TicketPriority.urgent, 1, null);
    make(TicketStatus.pending, TicketPriority.urgent, 2, null);
    make(TicketStatus.open, TicketPriority.low, 3, null);
    make(TicketStatus.resolved, TicketPriority.high, 10, 1); // 1 h, resolved 9 h ago
    make(TicketStatus.closed, TicketPriority.normal, 20, 3); // 3 h, resolved 17 h ago
    make(TicketStatus.resolved, TicketPriority.normal, 24 * 30, 5); // 5 h, resolved a month ago
    await em.flush();

    expect(await serviceFor(carol).metrics()).toEqual({
      total: 6,
      byStatus: { open: 2, pending: 1, resolved: 2, closed: 1 },
      openByPriority: { low: 1, normal: 0, high: 0, urgent: 2 },
      medianTimeToResolveSecs: 3 * 3600,
      resolvedLast7Days: 2,
    });
  });
});
