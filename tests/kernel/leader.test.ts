import pg from 'pg';
import { createLeaderLock, type LeaderLock } from '../../kernel/leader.js';
import { createLogger } from '../../kernel/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/wait.js';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('leader lock (PostgreSQL advisory lock)', () => {
  let db: TestDatabase;
  const locks: LeaderLock[] = [];
  const replica = (key = 'worker') => {
    const lock = createLeaderLock({ databaseUrl: db.url, key, name: 'test worker', logger });
    locks.push(lock);
    return lock;
  };

  beforeAll(async () => {
    db = await createTestDatabase('leader');
  });
  afterAll(async () => {
    await Promise.all(locks.map((l) => l.release()));
    await db?.drop();
  });

  it('lets one replica of several lead, and another take over when it gives up', async () => {
    const [a, b, c] = [replica(), replica(), replica()];
    const results = await Promise.all([a.acquire(), b.acquire(), c.acquire()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const leader = [a, b, c][results.indexOf(true)]!;
    const others = [a, b, c].filter((l) => l !== leader);
    expect(await leader.acquire()).toBe(true); // asking again keeps it
    expect(await others[0]!.acquire()).toBe(false);

    await leader.release();
    expect(leader.leading).toBe(false);
    const next = await Promise.all(others.map((l) => l.acquire()));
    expect(next.filter(Boolean)).toHaveLength(1);
  });

  it('loses the lead with its connection, and another replica takes over', async () => {
    const [a, b] = [replica('conn'), replica('conn')];
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);

    // The leader's session dies (a failover, a network cut, an operator's kill).
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const { rows } = await admin.query(`select pg_terminate_backend(a.pid) as killed from pg_stat_activity a
                                         join pg_locks l on l.pid = a.pid and l.locktype = 'advisory' and l.granted
                                        where a.application_name = 'leader:conn'`);
    expect(rows).toHaveLength(1);
    await admin.end();

    await eventually(async () => !a.leading, 'the old leader to notice');
    expect(await b.acquire()).toBe(true);
    expect(await a.acquire()).toBe(false); // it reconnects, and stands by
  });

  it('keeps different keys apart', async () => {
    expect(await replica('one').acquire()).toBe(true);
    expect(await replica('two').acquire()).toBe(true);
  });
});
