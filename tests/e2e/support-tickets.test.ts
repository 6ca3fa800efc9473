import { expectError, httpClient, type HttpResult } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const TENANT_A = '0a000000-0000-4000-8000-00000000000a';
const TENANT_B = '0b000000-0000-4000-8000-00000000000b';

let stack: Stack;
let tokenA: string;
let tokenB: string;
let readOnlyA: string;

beforeAll(async () => {
  stack = await startStack('e2e_tickets', { BODY_LIMIT_BYTES: '4096' });
  tokenA = await stack.token({ subject: 'alice', tenantId: TENANT_A, roles: ['admin'], scopes: ['read', 'deploy'] });
  tokenB = await stack.token({ subject: 'bob', tenantId: TENANT_B, roles: ['admin'], scopes: ['read', 'deploy'] });
  readOnlyA = await stack.token({ subject: 'reader', tenantId: TENANT_A, scopes: ['read'] });
});

afterAll(async () => {
  await stack?.stop();
});

const tickets = () => `${stack.base}/platform/api/v1/support/tickets`;

const call = httpClient(() => stack.base);
const expectEnvelope = (result: HttpResult, code: string) => expectError(result, result.status, code);

async function countTickets(token = tokenA): Promise<number> {
  const r = await call('GET', `${tickets()}?limit=1`, { token });
  return r.json.total;
}

describe('support tickets through the REST facade', () => {
  it('opens a ticket and answers it in snake_case with server-set fields', async () => {
    const r = await call('POST', tickets(), { token: tokenA, body: { subject: '  Deploy stuck ', description: 'The rollout hangs', priority: 'high', category: 'deployments' } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      tenant_id: TENANT_A,
      subject: 'Deploy stuck',
      description: 'The rollout hangs',
      priority: 'high',
      status: 'open',
      category: 'deployments',
      requester: 'alice',
      resolved_at: null,
      closed_at: null,
    });
    expect(r.json.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(r.json.created_at).toISOString()).toBe(r.json.created_at);

    const detail = await call('GET', `${tickets()}/${r.json.id}`, { token: tokenA });
    expect(detail.status).toBe(200);
    expect(detail.json).toEqual(r.json);
  });

  it('pages through tickets newest first with opaque cursors and a total', async () => {
    for (let i = 0; i < 5; i += 1) {
      const r = await call('POST', tickets(), { token: tokenB, body: { subject: `ticket ${i}`, description: 'd' } });
      expect(r.status).toBe(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await call('GET', `${tickets()}?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: tokenB });
      expect(r.status).toBe(200);
      expect(Object.keys(r.json).sort()).toEqual(['data', 'next_cursor', 'total']);
      expect(r.json.total).toBe(5);
      seen.push(...r.json.data.map((t: any) => t.subject));
      cursor = r.json.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['ticket 4', 'ticket 3', 'ticket 2', 'ticket 1', 'ticket 0']);
  });

  it('filters by status and priority', async () => {
    await call('POST', tickets(), { token: tokenB, body: { subject: 'urgent one', description: 'd', priority: 'urgent' } });
    const r = await call('GET', `${tickets()}?priority=urgent&status=open`, { token: tokenB });
    expect(r.status).toBe(200);
    expect(r.json.data.map((t: any) => t.subject)).toEqual(['urgent one']);
    expect(r.json.total).toBe(1);
  });

  it('moves a ticket through its statuses and refuses to change a closed one', async () => {
    const { json: created } = await call('POST', tickets(), { token: tokenA, body: { subject: 'status walk', description: 'd' } });
    const url = `${tickets()}/${created.id}`;
    const pending = await call('PATCH', url, { token: tokenA, body: { status: 'pending' } });
    expect(pending.status).toBe(200);
    expect(pending.json.status).toBe('pending');
    const resolved = await call('PATCH', url, { token: tokenA, body: { status: 'resolved' } });
    expect(resolved.json.resolved_at).not.toBeNull();
    const closed = await call('PATCH', url, { token: tokenA, body: { status: 'closed' } });
    expect(closed.json.status).toBe('closed');
    expect(closed.json.closed_at).not.toBeNull();

    const reopen = await call('PATCH', url, { token: tokenA, body: { status: 'open' } });
    expect(reopen.status).toBe(409);
    expectEnvelope(reopen, 'invalid_transition');
    const edit = await call('PATCH', url, { token: tokenA, body: { subject: 'changed' } });
    expect(edit.status).toBe(409);
    const after = await call('GET', url, { token: tokenA });
    expect(after.json.subject).toBe('status walk');
  });

  it('reports metrics for the caller\'s tenant only', async () => {
    const r = await call('GET', `${tickets()}/metrics`, { token: tokenB });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      total: 6,
      by_status: { open: 6, pending: 0, resolved: 0, closed: 0 },
      open_by_priority: { low: 0, normal: 5, high: 0, urgent: 1 },
      median_time_to_resolve_secs: null,
      resolved_last7_days: 0,
    });
  });
});

describe('tenancy', () => {
  it('answers not_found for another tenant\'s ticket, for reads and writes alike', async () => {
    const { json: mine } = await call('POST', tickets(), { token: tokenA, body: { subject: 'secret', description: 'd' } });
    const read = await call('GET', `${tickets()}/${mine.id}`, { token: tokenB });
    expect(read.status).toBe(404);
    expectEnvelope(read, 'not_found');
    const write = await call('PATCH', `${tickets()}/${mine.id}`, { token: tokenB, body: { status: 'closed' } });
    expect(write.status).toBe(404);
    const list = await call('GET', tickets(), { token: tokenB });
    expect(list.json.data.map((t: any) => t.id)).not.toContain(mine.id);
    const still = await call('GET', `${tickets()}/${mine.id}`, { token: tokenA });
    expect(still.json.status).toBe('open');
  });

  it('refuses a tenant sent in the body instead of trusting it', async () => {
    const r = await call('POST', tickets(), { token: tokenA, body: { subject: 's', description: 'd', tenant_id: TENANT_B } });
    expect(r.status).toBe(400);
    expectEnvelope(r, 'validation_failed');
  });

  it('lets a platform super-admin without a tenant see every tenant', async () => {
    const admin = await stack.token({ subject: 'root', tenantId: null, roles: ['super_admin'], scopes: ['read', 'deploy', 'admin'] });
    const r = await call('GET', `${tickets()}?limit=100`, { token: admin });
    const tenants = new Set(r.json.data.map((t: any) => t.tenant_id));
    expect(tenants).toEqual(new Set([TENANT_A, TENANT_B]));
  });

  it('shows a tenant-less account without super_admin nothing', async () => {
    const orphan = await stack.token({ subject: 'nobody', tenantId: null, scopes: ['read'] });
    const r = await call('GET', tickets(), { token: orphan });
    expect(r.json.total).toBe(0);
  });
});

describe('error paths of the facade', () => {
  it('401 without a token, and nothing is written', async () => {
    const before = await countTickets();
    const r = await call('POST', tickets(), { body: { subject: 's', description: 'd' } });
    expect(r.status).toBe(401);
    expectEnvelope(r, 'unauthenticated');
    expect(await countTickets()).toBe(before);
  });

  it('401 for a token signed with another secret, a malformed header, an expired token', async () => {
    const { signAccessToken } = await import('../../kernel/identity.js');
    const forged = await signAccessToken({ subject: 'x', tenantId: TENANT_A, roles: [], scopes: ['read'] }, { current: 'z'.repeat(40), previous: [] });
    expectEnvelope(await call('GET', tickets(), { token: forged }), 'unauthenticated');
    const malformed = await call('GET', tickets(), { headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
    const expired = await signAccessToken({ subject: 'x', tenantId: TENANT_A, roles: [], scopes: ['read'] }, { current: stack.accessSecret, previous: [] }, -10);
    const r = await call('GET', tickets(), { token: expired });
    expect(r.status).toBe(401);
    expect(r.json.error.message).toMatch(/expired/);
  });

  it('refuses the internal token from clients', async () => {
    const { signInternalToken } = await import('../../kernel/identity.js');
    const internal = await signInternalToken({ subject: 'x', tenantId: TENANT_A, roles: [], scopes: ['read'] }, stack.internalSecret);
    expect((await call('GET', tickets(), { token: internal })).status).toBe(401);
  });

  it('403 when the token lacks the scope, and nothing is written', async () => {
    const before = await countTickets();
    const r = await call('POST', tickets(), { token: readOnlyA, body: { subject: 's', description: 'd' } });
    expect(r.status).toBe(403);
    expectEnvelope(r, 'forbidden');
    expect(await countTickets()).toBe(before);
  });

  it('404 for an unknown path and for an id that is not a UUID', async () => {
    const unknown = await call('GET', `${stack.base}/platform/api/v1/nothing-here`, { token: tokenA });
    expect(unknown.status).toBe(404);
    expectEnvelope(unknown, 'not_found');
    const bad = await call('GET', `${tickets()}/not-a-uuid`, { token: tokenA });
    expect(bad.status).toBe(404);
    expectEnvelope(bad, 'not_found');
  });

  it('405 with Allow for a known path and a wrong method', async () => {
    const r = await call('DELETE', tickets(), { token: tokenA });
    expect(r.status).toBe(405);
    expectEnvelope(r, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, POST, HEAD');
  });

  it('400 for malformed JSON, a non-object body and a missing body; nothing is written', async () => {
    const before = await countTickets();
    const malformed = await call('POST', tickets(), { token: tokenA, raw: '{"subject": ' });
    expect(malformed.status).toBe(400);
    expectEnvelope(malformed, 'bad_request');
    const array = await call('POST', tickets(), { token: tokenA, body: [1, 2] });
    expect(array.status).toBe(400);
    expectEnvelope(array, 'bad_request');
    const missing = await call('POST', tickets(), { token: tokenA });
    expect(missing.status).toBe(400);
    expectEnvelope(missing, 'bad_request');
    expect(await countTickets()).toBe(before);
  });

  it('400 validation_failed naming the field in REST terms', async () => {
    const missingField = await call('POST', tickets(), { token: tokenA, body: { subject: 'only a subject' } });
    expect(missingField.status).toBe(400);
    expectEnvelope(missingField, 'validation_failed');
    expect(missingField.json.error.message).toMatch(/description/);
    const badEnum = await call('POST', tickets(), { token: tokenA, body: { subject: 's', description: 'd', priority: 'whenever' } });
    expect(badEnum.status).toBe(400);
    expect(badEnum.json.error.message).toMatch(/^priority: /);
    const empty = await call('POST', tickets(), { token: tokenA, body: { subject: '', description: 'd' } });
    expect(empty.status).toBe(400);
    expect(empty.json.error.message).toMatch(/subject/);
    const tooLong = await call('POST', tickets(), { token: tokenA, body: { subject: 'x'.repeat(201), description: 'd' } });
    expect(tooLong.status).toBe(400);
  });

  it('400 for a bad limit or a forged cursor', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'status=nope']) {
      const r = await call('GET', `${tickets()}?${q}`, { token: tokenA });
      expect(r.status).toBe(400);
      expectEnvelope(r, 'validation_failed');
    }
    const forged = Buffer.from(JSON.stringify(['other_list', 'x', 'y'])).toString('base64url');
    const r = await call('GET', `${tickets()}?cursor=${forged}`, { token: tokenA });
    expect(r.status).toBe(400);
    expectEnvelope(r, 'invalid_cursor');
  });

  it('413 for a body over the limit', async () => {
    const r = await call('POST', tickets(), { token: tokenA, body: { subject: 's', description: 'x'.repeat(10_000) } });
    expect(r.status).toBe(413);
    expectEnvelope(r, 'payload_too_large');
  });

  it('415 for a body that is not JSON', async () => {
    const r = await call('POST', tickets(), { token: tokenA, raw: 'subject=s', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status).toBe(415);
    expectEnvelope(r, 'unsupported_media_type');
  });

  it('keeps a sane X-Request-Id and replaces an unsafe one', async () => {
    const kept = await call('GET', `${stack.base}/nowhere`, { headers: { 'x-request-id': 'client-trace-42' } });
    expect(kept.headers.get('x-request-id')).toBe('client-trace-42');
    expect(kept.json.error.request_id).toBe('client-trace-42');
    const replaced = await call('GET', `${stack.base}/nowhere`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('GraphQL at {base}/graphql', () => {
  const gql = (query: string, variables: Record<string, unknown> = {}, token: string | null = tokenA) =>
    call('POST', `${stack.base}/graphql`, { ...(token ? { token } : {}), body: { query, variables } });

  it('runs the same operations as REST, tenant-scoped', async () => {
    const created = await gql(/* GraphQL */ `mutation($input: CreateSupportTicketInput!) { createSupportTicket(input: $input) { id status requester } }`, {
      input: { subject: 'via graphql', description: 'd', priority: 'low' },
    });
    expect(created.status).toBe(200);
    expect(created.json.data.createSupportTicket).toMatchObject({ status: 'open', requester: 'alice' });
    const other = await gql(`query($id: ID!) { supportTicket(id: $id) { id } }`, { id: created.json.data.createSupportTicket.id }, tokenB);
    expect(other.json.errors[0].extensions.code).toBe('not_found');
  });

  it('answers GET queries', async () => {
    const query = encodeURIComponent('{ supportTickets(limit: 1) { total } }');
    const r = await call('GET', `${stack.base}/graphql?query=${query}`, { token: tokenA });
    expect(r.status).toBe(200);
    expect(r.json.data.supportTickets.total).toBeGreaterThan(0);
  });

  it('federates the three subgraphs in one request', async () => {
    const r = await gql(`{ viewer { subject tenantId scopes } authHealth { status } cicdHealth { status } platformHealth { status } }`);
    expect(r.json.data).toEqual({
      viewer: { subject: 'alice', tenantId: TENANT_A, scopes: ['read', 'deploy'] },
      authHealth: { status: 'ok' },
      cicdHealth: { status: 'ok' },
      platformHealth: { status: 'ok' },
    });
  });

  it('reports unauthenticated access with a code', async () => {
    const r = await gql(`{ supportTickets { total } }`, {}, null);
    expect(r.json.errors[0].extensions.code).toBe('unauthenticated');
  });

  it('401 with both errors and the envelope for a bad token', async () => {
    const r = await call('POST', `${stack.base}/graphql`, { token: 'not.a.jwt', body: { query: '{ viewer { subject } }' } });
    expect(r.status).toBe(401);
    expect(r.json.errors[0].extensions.code).toBe('unauthenticated');
    expect(r.json.error.code).toBe('unauthenticated');
  });

  it('refuses too deep, too aliased and malformed operations with 400', async () => {
    const deep = await gql(`{ a: supportTickets { data { id } } ${Array.from({ length: 20 }, (_, i) => `x${i}: supportTickets { total }`).join(' ')} }`);
    expect(deep.status).toBe(400);
    expect(deep.json.error.code).toBe('query_too_complex');
    const malformed = await gql('{ supportTickets { ');
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe('bad_request');
    const unknownField = await gql('{ supportTickets { nope } }');
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.error.code).toBe('validation_failed');
  });

  it('serves GraphiQL from this origin, with no CDN', async () => {
    const r = await call('GET', `${stack.base}/graphql`, { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    const scripts = [...r.text.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(2);
    for (const src of scripts) {
      expect(src.startsWith('/api/')).toBe(true);
      const script = await fetch(`${new URL(stack.base).origin}${src}`);
      expect(script.status).toBe(200);
      // Our own start-up scripts must at least parse (a quoting slip once left GraphiQL blank).
      const code = await script.text();
      if (src.endsWith('-init.js')) expect(() => new Function(code)).not.toThrow();
    }
  });
});

describe('documents and health', () => {
  it('serves the OpenAPI documents and the docs browser', async () => {
    const all = await call('GET', `${stack.base}/openapi.json`);
    expect(all.status).toBe(200);
    expect(all.json.openapi).toBe('3.1.0');
    expect(all.json.paths['/platform/api/v1/support/tickets'].get.responses['200']).toBeDefined();
    const platform = await call('GET', `${stack.base}/platform/openapi.json`);
    expect(Object.keys(platform.json.paths).every((p) => p.startsWith('/platform/'))).toBe(true);
    const docs = await call('GET', `${stack.base}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('swagger-ui');
    expect(docs.text).not.toMatch(/https?:\/\//);
  });

  it('answers health publicly for each service and the edge', async () => {
    for (const path of ['/platform/healthz', '/platform/health', '/auth/health', '/cicd/healthz']) {
      const r = await call('GET', `${stack.base}${path}`);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ status: 'ok', database: true });
    }
    const ready = await call('GET', `${stack.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.json.checks).toEqual({ auth: true, cicd: true, platform: true });
  });
});
