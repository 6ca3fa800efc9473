import pg from 'pg';
import { expectError, httpClient } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const TENANT_A = '1a000000-0000-4000-8000-00000000001a';
const TENANT_B = '1b000000-0000-4000-8000-00000000001b';

let stack: Stack;
let tokenA: string;
let tokenB: string;
const call = httpClient(() => stack.base);

beforeAll(async () => {
  stack = await startStack('e2e_webhook_subscriptions');
  tokenA = await stack.token({ subject: 'alice', tenantId: TENANT_A, scopes: ['read', 'deploy'] });
  tokenB = await stack.token({ subject: 'bob', tenantId: TENANT_B, scopes: ['read', 'deploy'] });
});

afterAll(async () => {
  await stack?.stop();
});

const create = (body: Record<string, unknown>, token = tokenA) => call('POST', '/platform/api/v1/webhooks', { token, body });

describe('webhook subscriptions', () => {
  it('creates a subscription, shows its secret once and stores it sealed', async () => {
    const r = await create({ url: 'https://hooks.example.com/platform', events: ['app.deployed', 'incident.created'], cluster_ids: ['prod-1'], description: 'ops' });
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(r.json.subscription).toMatchObject({ tenant_id: TENANT_A, url: 'https://hooks.example.com/platform', events: ['app.deployed', 'incident.created'], cluster_ids: ['prod-1'], cloudspace_ids: null, enabled: true });
    const detail = await call('GET', `/platform/api/v1/webhooks/${r.json.subscription.id}`, { token: tokenA });
    expect(JSON.stringify(detail.json)).not.toContain(r.json.secret);
    const db = new pg.Client({ connectionString: stack.database.url });
    await db.connect();
    const { rows } = await db.query('select secret_sealed from platform.webhook_subscription where id = $1', [r.json.subscription.id]);
    await db.end();
    expect(rows[0].secret_sealed).toMatch(/^v1\./);
    expect(rows[0].secret_sealed).not.toContain(r.json.secret.slice(6));
  });

  it('subscribes to every event by default', async () => {
    const r = await create({ url: 'https://hooks.example.com/all' });
    expect(r.json.subscription.events).toEqual(['*']);
  });

  it('refuses non-HTTPS URLs, credentials in URLs and unknown event types', async () => {
    expectError(await create({ url: 'http://hooks.example.com/x' }), 400, 'validation_failed');
    expectError(await create({ url: 'https://user:pw@hooks.example.com/x' }), 400, 'validation_failed');
    expectError(await create({ url: 'not a url' }), 400, 'validation_failed');
    const unknown = await create({ url: 'https://hooks.example.com/x', events: ['app.exploded'] });
    expectError(unknown, 400, 'validation_failed');
    expect(unknown.json.error.message).toMatch(/app\.exploded/);
    expectError(await create({ url: 'https://hooks.example.com/x', events: [] }), 400, 'validation_failed');
    const reader = await stack.token({ subject: 'r', tenantId: TENANT_A, scopes: ['read'] });
    expectError(await create({ url: 'https://hooks.example.com/x' }, reader), 403, 'forbidden');
  });

  it('updates, lists and deletes, within the tenant only', async () => {
    const { json } = await create({ url: 'https://hooks.example.com/mine' });
    const id = json.subscription.id;
    const patched = await call('PATCH', `/platform/api/v1/webhooks/${id}`, { token: tokenA, body: { enabled: false, events: ['pipeline.run_completed'], cluster_ids: [] } });
    expect(patched.json).toMatchObject({ enabled: false, events: ['pipeline.run_completed'], cluster_ids: null });
    expectError(await call('GET', `/platform/api/v1/webhooks/${id}`, { token: tokenB }), 404, 'not_found');
    expectError(await call('PATCH', `/platform/api/v1/webhooks/${id}`, { token: tokenB, body: { enabled: true } }), 404, 'not_found');
    expectError(await call('DELETE', `/platform/api/v1/webhooks/${id}`, { token: tokenB }), 404, 'not_found');
    const listB = await call('GET', '/platform/api/v1/webhooks', { token: tokenB });
    expect(listB.json.total).toBe(0);
    expect((await call('DELETE', `/platform/api/v1/webhooks/${id}`, { token: tokenA })).status).toBe(204);
    expectError(await call('GET', `/platform/api/v1/webhooks/${id}`, { token: tokenA }), 404, 'not_found');
  });

  it('rotates the secret with an overlap window, body optional', async () => {
    const { json } = await create({ url: 'https://hooks.example.com/rotate' });
    const id = json.subscription.id;
    const rotated = await call('POST', `/platform/api/v1/webhooks/${id}/rotate-secret`, { token: tokenA, body: { overlap_secs: 3600 } });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).not.toBe(json.secret);
    const window = Date.parse(rotated.json.subscription.previous_secret_expires_at) - Date.now();
    expect(window).toBeGreaterThan(3500_000);
    expect(window).toBeLessThanOrEqual(3600_000);
    const byDefault = await call('POST', `/platform/api/v1/webhooks/${id}/rotate-secret`, { token: tokenA });
    expect(Date.parse(byDefault.json.subscription.previous_secret_expires_at) - Date.now()).toBeGreaterThan(86_000_000);
    const none = await call('POST', `/platform/api/v1/webhooks/${id}/rotate-secret`, { token: tokenA, body: { overlap_secs: 0 } });
    expect(none.json.subscription.previous_secret_expires_at).toBeNull();
    expectError(await call('POST', `/platform/api/v1/webhooks/${id}/rotate-secret`, { token: tokenA, body: { overlap_secs: 10_000_000 } }), 400, 'validation_failed');
  });
});
