import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { signAccessToken } from '../../kernel/identity.js';
import { startStack, type Stack } from '../helpers/stack.js';

const TENANT = '0d000000-0000-4000-8000-00000000000d';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack('e2e_budgets', { RATE_LIMIT_PER_MINUTE: '5' });
});

afterAll(async () => {
  await stack?.stop();
});

const get = (base: string, token?: string, path = '/platform/api/v1/support/tickets') =>
  fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('per-token request budget at the edge', () => {
  it('answers 429 with Retry-After once a token has spent its budget, REST and GraphQL alike', async () => {
    const token = await stack.token({ subject: 'spender', tenantId: TENANT, sessionId: 's-1' } as never);
    const remaining: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const r = await get(stack.base, token);
      expect(r.status).toBe(200);
      remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const over = await get(stack.base, token);
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ error: { code: 'rate_limited' } });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const graphql = await fetch(`${stack.base}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"query":"{ viewer { subject } }"}' });
    expect(graphql.status).toBe(429);
    // Another token has its own budget.
    const other = await stack.token({ subject: 'saver', tenantId: TENANT });
    expect((await get(stack.base, other)).status).toBe(200);
  });
});

describe('secret rotation', () => {
  it('accepts tokens of the previous secret while it is listed, and refuses them once it is removed', async () => {
    const next = randomBytes(32).toString('base64url');
    const rotating = await stack.startEdge({ JWT_ACCESS_SECRET: next, JWT_ACCESS_SECRETS_PREVIOUS: stack.accessSecret });
    const rotated = await stack.startEdge({ JWT_ACCESS_SECRET: next });
    const old = await stack.token({ subject: 'old', tenantId: TENANT });
    const fresh = await signAccessToken({ subject: 'new', tenantId: TENANT, roles: [], scopes: ['read'] }, { current: next, previous: [] });
    expect((await get(rotating.base, old)).status).toBe(200);
    expect((await get(rotating.base, fresh)).status).toBe(200);
    expect((await get(rotated.base, old)).status).toBe(401);
    expect((await get(rotated.base, fresh)).status).toBe(200);
  });
});

const redisUrl = process.env.REDIS_URL;
const withRedis = redisUrl ? describe : describe.skip;
if (!redisUrl) process.stdout.write('budgets.test.ts: REDIS_URL is not set, so the shared-budget test is skipped\n');

withRedis('budgets shared through Redis', () => {
  it('lets two edge instances spend from one budget', async () => {
    const prefix = randomBytes(4).toString('hex');
    const env = { RATE_LIMIT_PER_MINUTE: '6', REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: `test-${prefix}:` };
    const [a, b] = await Promise.all([stack.startEdge(env), stack.startEdge(env)]);
    const token = await stack.token({ subject: `shared-${prefix}`, tenantId: TENANT });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await get(i % 2 === 0 ? a.base : b.base, token)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    const redis = new Redis(redisUrl!);
    const keys = await redis.keys(`test-${prefix}:edge-budget:id:shared-${prefix}*`);
    await redis.quit();
    expect(keys).toHaveLength(1);
  });
});
