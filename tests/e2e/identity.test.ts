import * as oidc from 'openid-client';
import { credentialKindOf } from '../../kernel/credentials.js';
import { expectError, httpClient } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const LOGIN_LIMIT = 5;
const SUPER = { email: 'root@platform.example', username: 'root', password: 'correct horse battery staple' };

let stack: Stack;

beforeAll(async () => {
  stack = await startStack('e2e_identity', { REVOCATION_POLL_MS: '100' }, {
    LOGIN_RATE_LIMIT: String(LOGIN_LIMIT),
    LOGIN_RATE_WINDOW_SECS: '600',
    BOOTSTRAP_SUPER_ADMIN_EMAIL: SUPER.email,
    BOOTSTRAP_SUPER_ADMIN_USERNAME: SUPER.username,
    BOOTSTRAP_SUPER_ADMIN_PASSWORD: SUPER.password,
  });
});

afterAll(async () => {
  await stack?.stop();
});

const call = httpClient(() => stack.base);

let counter = 0;
async function signUp(prefix = 'user') {
  counter += 1;
  const account = { email: `${prefix}${counter}@example.com`, username: `${prefix}${counter}`, password: `a long and unusual passphrase ${counter}` };
  const registered = await call('POST', '/auth/api/v1/auth/register', { body: { ...account, tenant_name: `${prefix} org ${counter}` } });
  expect(registered.status).toBe(201);
  const login = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: account.email, password: account.password } });
  expect(login.status).toBe(200);
  return { ...account, tenantId: registered.json.tenant.id as string, userId: registered.json.user.id as string, access: login.json.access_token as string, refresh: login.json.refresh_token as string };
}

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
const waitForFeed = () => new Promise((resolve) => setTimeout(resolve, 400));

describe('accounts and sessions', () => {
  it('registers a tenant and its first administrator', async () => {
    const r = await call('POST', '/auth/api/v1/auth/register', { body: { email: 'Founder@Example.com', username: 'Founder', password: 'a long and unusual passphrase', tenant_name: 'Acme' } });
    expect(r.status).toBe(201);
    expect(r.json.tenant.name).toBe('Acme');
    expect(r.json.user).toMatchObject({ email: 'founder@example.com', username: 'founder', tenant_id: r.json.tenant.id, active: true });
    expect(r.json.user.roles.map((x: any) => x.name)).toEqual(['admin']);
    expect(r.json.user).not.toHaveProperty('password_hash');
  });

  it('refuses a duplicate email or username, a weak password and a malformed email', async () => {
    expectError(await call('POST', '/auth/api/v1/auth/register', { body: { email: 'founder@example.com', username: 'other', password: 'a long and unusual passphrase' } }), 409, 'conflict');
    expectError(await call('POST', '/auth/api/v1/auth/register', { body: { email: 'x@example.com', username: 'FOUNDER', password: 'a long and unusual passphrase' } }), 409, 'conflict');
    const short = await call('POST', '/auth/api/v1/auth/register', { body: { email: 'y@example.com', username: 'yuser', password: 'short' } });
    expectError(short, 400, 'validation_failed');
    expect(short.json.error.message).toMatch(/at least 12 characters/);
    expectError(await call('POST', '/auth/api/v1/auth/register', { body: { email: 'z@example.com', username: 'zuser', password: 'password1234' } }), 400, 'validation_failed');
    expectError(await call('POST', '/auth/api/v1/auth/register', { body: { email: 'not-an-email', username: 'wuser', password: 'a long and unusual passphrase' } }), 400, 'validation_failed');
  });

  it('logs in by email or username with the claims of spec 5 and no caching', async () => {
    const user = await signUp();
    const byName = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: user.username, password: user.password } });
    expect(byName.status).toBe(200);
    expect(byName.json).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(byName.headers.get('cache-control')).toBe('no-store');
    const claims = claimsOf(byName.json.access_token);
    expect(claims).toMatchObject({ sub: user.userId, tenant_id: user.tenantId, roles: ['admin'], scopes: ['read', 'deploy', 'actions', 'agents', 'admin'], iss: 'cloudops-auth', aud: 'cloudops-api' });
    expect(typeof claims.sid).toBe('string');
    expect(claims.exp - claims.iat).toBe(900);
  });

  it('answers a wrong password and an unknown account alike', async () => {
    const user = await signUp();
    const wrong = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: user.email, password: 'not the password at all' } });
    const unknown = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: 'nobody@example.com', password: 'not the password at all' } });
    expectError(wrong, 401, 'unauthenticated');
    expectError(unknown, 401, 'unauthenticated');
    expect(wrong.json.error.message).toBe(unknown.json.error.message);
  });

  it(`never lets 50 parallel wrong attempts past the cap of ${LOGIN_LIMIT}`, async () => {
    const user = await signUp();
    const attempts = await Promise.all(
      Array.from({ length: 50 }, () => call('POST', '/auth/api/v1/auth/login', { body: { identifier: user.username, password: 'wrong wrong wrong wrong' } })),
    );
    const statuses = attempts.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LOGIN_LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - LOGIN_LIMIT);
    const limited = attempts.find((a) => a.status === 429)!;
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Even the right password is refused until the window rolls on.
    expect((await call('POST', '/auth/api/v1/auth/login', { body: { identifier: user.username, password: user.password } })).status).toBe(429);
  });

  it('rotates refresh tokens, and reusing an old one revokes the whole family', async () => {
    const user = await signUp();
    const first = await call('POST', '/auth/api/v1/auth/refresh', { body: { refresh_token: user.refresh } });
    expect(first.status).toBe(200);
    expect(first.json.refresh_token).not.toBe(user.refresh);
    const second = await call('POST', '/auth/api/v1/auth/refresh', { body: { refresh_token: first.json.refresh_token } });
    expect(second.status).toBe(200);

    const replay = await call('POST', '/auth/api/v1/auth/refresh', { body: { refresh_token: user.refresh } });
    expectError(replay, 401, 'unauthenticated');
    expect(replay.json.error.message).toMatch(/already used/);
    // The newest token of the family is dead too, and so are its access tokens.
    expectError(await call('POST', '/auth/api/v1/auth/refresh', { body: { refresh_token: second.json.refresh_token } }), 401, 'unauthenticated');
    await waitForFeed();
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: second.json.access_token }), 401, 'unauthenticated');
  });

  it('refuses a refresh token presented as an access token and vice versa', async () => {
    const user = await signUp();
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: user.refresh }), 401, 'unauthenticated');
    expectError(await call('POST', '/auth/api/v1/auth/refresh', { body: { refresh_token: user.access } }), 401, 'unauthenticated');
  });

  it('logout ends the session: access and refresh tokens stop working at once', async () => {
    const user = await signUp();
    expect((await call('GET', '/platform/api/v1/support/tickets', { token: user.access })).status).toBe(200);
    const out = await call('POST', '/auth/api/v1/auth/logout', { token: user.access });
    expect(out.status).toBe(204);
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: user.access }), 401, 'unauthenticated');
    expectError(await call('POST', '/auth/api/v1/auth/refresh', { body: { refresh_token: user.refresh } }), 401, 'unauthenticated');
  });

  it('introspects tokens RFC 7662-style', async () => {
    const user = await signUp();
    const active = await call('GET', '/auth/api/v1/auth/introspect', { token: user.access });
    expect(active.status).toBe(200);
    expect(active.json).toMatchObject({ active: true, sub: user.userId, tenant_id: user.tenantId, scope: 'read deploy actions agents admin', token_type: 'Bearer' });
    expect(active.json.exp - active.json.iat).toBe(900);
    for (const token of ['garbage', user.refresh, `${user.access.slice(0, -2)}xx`]) {
      const inactive = await call('GET', '/auth/api/v1/auth/introspect', { token });
      expect(inactive).toMatchObject({ status: 200, json: { active: false } });
      expect(Object.keys(inactive.json)).toEqual(['active']);
    }
    expect((await call('GET', '/auth/api/v1/auth/introspect')).json).toEqual({ active: false });
    await call('POST', '/auth/api/v1/auth/logout', { token: user.access });
    expect((await call('GET', '/auth/api/v1/auth/introspect', { token: user.access })).json).toEqual({ active: false });
  });
});

describe('personal access tokens and API keys', () => {
  it('shows a PAT value once, stores only a hash, and lists it by its last four', async () => {
    const user = await signUp();
    const created = await call('POST', '/auth/api/v1/tokens', { token: user.access, body: { name: 'ci', scopes: ['read'], expires_in_days: 7 } });
    expect(created.status).toBe(201);
    const value: string = created.json.value;
    expect(value).toMatch(/^cop_pat_[0-9A-Za-z]{36}$/);
    expect(credentialKindOf(value)).toBe('pat');
    expect(credentialKindOf(`${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
    expect(created.json.credential).toMatchObject({ name: 'ci', scopes: ['read'], last_four: value.slice(-4), kind: 'pat' });
    const expires = Date.parse(created.json.credential.expires_at) - Date.now();
    expect(expires).toBeGreaterThan(6.9 * 86400_000);

    const list = await call('GET', '/auth/api/v1/tokens', { token: user.access });
    expect(list.json.total).toBe(1);
    expect(JSON.stringify(list.json)).not.toContain(value);
    expect(list.json.data[0].last_used_at).toBeNull();

    expect((await call('GET', '/platform/api/v1/support/tickets', { token: value })).status).toBe(200);
    const used = await call('GET', '/auth/api/v1/tokens', { token: user.access });
    expect(used.json.data[0].last_used_at).not.toBeNull();
  });

  it('limits a PAT to its scopes and refuses scopes beyond the user', async () => {
    const user = await signUp();
    const { json } = await call('POST', '/auth/api/v1/tokens', { token: user.access, body: { name: 'read-only', scopes: ['read'] } });
    const write = await call('POST', '/platform/api/v1/support/tickets', { token: json.value, body: { subject: 's', description: 'd' } });
    expectError(write, 403, 'forbidden');
    expect(write.json.error.message).toMatch(/deploy/);
    const through = await call('POST', '/graphql', { token: json.value, body: { query: 'mutation { createSupportTicket(input: {subject: "s", description: "d"}) { id } }' } });
    expect(through.json.errors[0].extensions.code).toBe('forbidden');

    expectError(await call('POST', '/auth/api/v1/tokens', { token: user.access, body: { name: 'x', scopes: ['root'] } }), 400, 'validation_failed');
    expectError(await call('POST', '/auth/api/v1/tokens', { token: user.access, body: { name: 'x', expires_in_days: 400 } }), 400, 'validation_failed');
    expectError(await call('POST', '/auth/api/v1/tokens', { token: user.access, body: { name: 'x', expires_in_days: 0 } }), 400, 'validation_failed');
  });

  it('gives admin scope only to administrators', async () => {
    const admin = await signUp();
    const created = await call('POST', '/auth/api/v1/users', { token: admin.access, body: { email: `viewer${counter}@example.com`, username: `viewer${counter}`, password: 'another long passphrase here', roles: ['viewer'] } });
    expect(created.status).toBe(201);
    const login = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: created.json.username, password: 'another long passphrase here' } });
    expectError(await call('POST', '/auth/api/v1/tokens', { token: login.json.access_token, body: { name: 'x', scopes: ['admin'] } }), 403, 'forbidden');
    expectError(await call('POST', '/auth/api/v1/tokens', { token: login.json.access_token, body: { name: 'x', scopes: ['deploy'] } }), 403, 'forbidden');
  });

  it('revokes a PAT so that it stops working', async () => {
    const user = await signUp();
    const { json } = await call('POST', '/auth/api/v1/tokens', { token: user.access, body: { name: 'temp', scopes: ['read'] } });
    expect((await call('GET', '/platform/api/v1/support/tickets', { token: json.value })).status).toBe(200);
    expect((await call('DELETE', `/auth/api/v1/tokens/${json.credential.id}`, { token: user.access })).status).toBe(204);
    await waitForFeed();
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: json.value }), 401, 'unauthenticated');
    expectError(await call('DELETE', `/auth/api/v1/tokens/${json.credential.id}`, { token: user.access }), 404, 'not_found');
    expect((await call('GET', '/auth/api/v1/auth/introspect', { token: json.value })).json).toEqual({ active: false });
  });

  it('refuses a mistyped token without asking auth', async () => {
    const user = await signUp();
    const { json } = await call('POST', '/auth/api/v1/tokens', { token: user.access, body: { name: 'typo', scopes: ['read'] } });
    const typo = `${json.value.slice(0, 12)}${json.value[12] === 'a' ? 'b' : 'a'}${json.value.slice(13)}`;
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: typo }), 401, 'unauthenticated');
  });

  it('creates, uses and revokes API keys with the owner\'s permissions', async () => {
    const user = await signUp();
    const created = await call('POST', '/auth/api/v1/apikeys', { token: user.access, body: { name: 'deploy bot' } });
    expect(created.status).toBe(201);
    expect(created.json.value).toMatch(/^cop_key_/);
    expect(created.json.credential.expires_at).toBeNull();
    const write = await call('POST', '/platform/api/v1/support/tickets', { token: created.json.value, body: { subject: 'from a key', description: 'd' } });
    expect(write.status).toBe(201);
    expect(write.json.requester).toBe(user.userId);
    expect((await call('GET', '/auth/api/v1/apikeys', { token: user.access })).json.total).toBe(1);
    expect((await call('DELETE', `/auth/api/v1/apikeys/${created.json.credential.id}`, { token: user.access })).status).toBe(204);
    await waitForFeed();
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: created.json.value }), 401, 'unauthenticated');
  });
});

describe('service accounts and OAuth2 client credentials', () => {
  async function serviceAccount(scopes = ['read', 'deploy']) {
    const admin = await signUp('sa');
    const created = await call('POST', '/auth/api/v1/service-accounts', { token: admin.access, body: { name: 'ci runner', allowed_scopes: scopes } });
    expect(created.status).toBe(201);
    return { admin, id: created.json.service_account.id as string, clientId: created.json.service_account.client_id as string, secret: created.json.client_secret as string };
  }

  it('issues a token to a real OAuth client library, and the token works', async () => {
    const sa = await serviceAccount();
    const issuer = new URL(`${stack.base}/auth`).toString();
    const server: oidc.ServerMetadata = { issuer, token_endpoint: `${stack.base}/auth/oauth/token` };
    const config = new oidc.Configuration(server, sa.clientId, sa.secret);
    oidc.allowInsecureRequests(config);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('read');
    expect(tokens.expires_in).toBe(900);
    const claims = claimsOf(tokens.access_token);
    expect(claims).toMatchObject({ client_id: sa.clientId, tenant_id: sa.admin.tenantId, scopes: ['read'], roles: ['service_account'] });
    const read = await call('GET', '/platform/api/v1/support/tickets', { token: tokens.access_token });
    expect(read.status).toBe(200);
    expectError(await call('POST', '/platform/api/v1/support/tickets', { token: tokens.access_token, body: { subject: 's', description: 'd' } }), 403, 'forbidden');
  });

  it('accepts form fields or HTTP Basic, and answers RFC 6749 codes in the envelope', async () => {
    const sa = await serviceAccount();
    const form = await call('POST', '/auth/oauth/token', { form: { grant_type: 'client_credentials', client_id: sa.clientId, client_secret: sa.secret, scope: 'read deploy', audience: 'ignored' } });
    expect(form.status).toBe(200);
    expect(form.json).toMatchObject({ token_type: 'Bearer', scope: 'read deploy' });
    expect(form.headers.get('cache-control')).toBe('no-store');
    const basic = Buffer.from(`${encodeURIComponent(sa.clientId)}:${encodeURIComponent(sa.secret)}`).toString('base64');
    const viaBasic = await call('POST', '/auth/oauth/token', { form: { grant_type: 'client_credentials' }, headers: { authorization: `Basic ${basic}` } });
    expect(viaBasic.status).toBe(200);

    expectError(await call('POST', '/auth/oauth/token', { form: { grant_type: 'client_credentials', client_id: sa.clientId, client_secret: `${sa.secret}x` } }), 401, 'invalid_client');
    expectError(await call('POST', '/auth/oauth/token', { form: { grant_type: 'client_credentials', client_id: 'sa_unknown', client_secret: sa.secret } }), 401, 'invalid_client');
    expectError(await call('POST', '/auth/oauth/token', { form: { grant_type: 'client_credentials', client_id: sa.clientId, client_secret: sa.secret, scope: 'read admin' } }), 400, 'invalid_scope');
    expectError(await call('POST', '/auth/oauth/token', { form: { grant_type: 'password', client_id: sa.clientId, client_secret: sa.secret } }), 400, 'unsupported_grant_type');
    expectError(await call('POST', '/auth/oauth/token', { form: { client_id: sa.clientId } }), 400, 'invalid_request');
    expectError(await call('POST', '/auth/oauth/token', { body: { grant_type: 'client_credentials' } }), 400, 'invalid_request');
  });

  it('stops the tokens of a disabled service account', async () => {
    const sa = await serviceAccount();
    const form = await call('POST', '/auth/oauth/token', { form: { grant_type: 'client_credentials', client_id: sa.clientId, client_secret: sa.secret } });
    expect((await call('DELETE', `/auth/api/v1/service-accounts/${sa.id}`, { token: sa.admin.access })).status).toBe(204);
    await waitForFeed();
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: form.json.access_token }), 401, 'unauthenticated');
    expectError(await call('POST', '/auth/oauth/token', { form: { grant_type: 'client_credentials', client_id: sa.clientId, client_secret: sa.secret } }), 401, 'invalid_client');
  });

  it('refuses service-account management to non-administrators', async () => {
    const admin = await signUp();
    const user = await call('POST', '/auth/api/v1/users', { token: admin.access, body: { email: `dev${counter}@example.com`, username: `dev${counter}`, password: 'another long passphrase here', roles: ['developer'] } });
    const login = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: user.json.email, password: 'another long passphrase here' } });
    expectError(await call('POST', '/auth/api/v1/service-accounts', { token: login.json.access_token, body: { name: 'x', allowed_scopes: ['read'] } }), 403, 'forbidden');
  });
});

describe('users and roles', () => {
  it('limits an administrator to their tenant: another tenant\'s user is not_found', async () => {
    const a = await signUp('ta');
    const b = await signUp('tb');
    const listA = await call('GET', '/auth/api/v1/users', { token: a.access });
    expect(listA.json.data.map((u: any) => u.id)).toEqual([a.userId]);
    expectError(await call('GET', `/auth/api/v1/users/${b.userId}`, { token: a.access }), 404, 'not_found');
    expectError(await call('PUT', `/auth/api/v1/users/${b.userId}`, { token: a.access, body: { active: false } }), 404, 'not_found');
    expectError(await call('DELETE', `/auth/api/v1/users/${b.userId}`, { token: a.access }), 404, 'not_found');
    expect((await call('GET', '/platform/api/v1/support/tickets', { token: b.access })).status).toBe(200);
  });

  it('manages users: create with roles, change roles, disable, delete', async () => {
    const admin = await signUp();
    const created = await call('POST', '/auth/api/v1/users', { token: admin.access, body: { email: `member${counter}@example.com`, username: `member${counter}`, password: 'member passphrase long', roles: ['developer'] } });
    expect(created.status).toBe(201);
    expect(created.json.tenant_id).toBe(admin.tenantId);
    const login = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: created.json.username, password: 'member passphrase long' } });
    expect(claimsOf(login.json.access_token).scopes).toEqual(['read', 'deploy', 'actions', 'agents']);
    expectError(await call('GET', '/auth/api/v1/users', { token: login.json.access_token }), 403, 'forbidden');

    const disabled = await call('PUT', `/auth/api/v1/users/${created.json.id}`, { token: admin.access, body: { active: false } });
    expect(disabled.json.active).toBe(false);
    await waitForFeed();
    expectError(await call('GET', '/platform/api/v1/support/tickets', { token: login.json.access_token }), 401, 'unauthenticated');
    expectError(await call('POST', '/auth/api/v1/auth/login', { body: { identifier: created.json.username, password: 'member passphrase long' } }), 401, 'unauthenticated');

    expect((await call('DELETE', `/auth/api/v1/users/${created.json.id}`, { token: admin.access })).status).toBe(204);
    expectError(await call('GET', `/auth/api/v1/users/${created.json.id}`, { token: admin.access }), 404, 'not_found');
    expectError(await call('DELETE', `/auth/api/v1/users/${admin.userId}`, { token: admin.access }), 409, 'conflict');
    expectError(await call('POST', '/auth/api/v1/users', { token: admin.access, body: { email: 'q@example.com', username: 'quser', password: 'long enough passphrase', roles: ['super_admin'] } }), 403, 'forbidden');
  });

  it('lists built-in roles, manages custom ones, and protects the built-ins', async () => {
    const admin = await signUp();
    const roles = await call('GET', '/auth/api/v1/roles', { token: admin.access });
    expect(roles.json.filter((r: any) => r.built_in).map((r: any) => r.name).sort()).toEqual(['admin', 'developer', 'super_admin', 'viewer']);
    const created = await call('POST', '/auth/api/v1/roles', { token: admin.access, body: { name: 'auditor', description: 'reads', permissions: ['read'] } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'auditor', permissions: ['read'], built_in: false, tenant_id: admin.tenantId });
    const other = await signUp();
    expectError(await call('GET', `/auth/api/v1/roles/${created.json.id}`, { token: other.access }), 404, 'not_found');
    const builtIn = roles.json.find((r: any) => r.name === 'viewer');
    expectError(await call('PUT', `/auth/api/v1/roles/${builtIn.id}`, { token: admin.access, body: { permissions: ['read', 'deploy'] } }), 409, 'conflict');
    expectError(await call('POST', '/auth/api/v1/roles', { token: admin.access, body: { name: 'bad', permissions: ['sudo'] } }), 400, 'validation_failed');
    expect((await call('DELETE', `/auth/api/v1/roles/${created.json.id}`, { token: admin.access })).status).toBe(204);
  });

  it('lets the super-admin see every tenant', async () => {
    const login = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: SUPER.username, password: SUPER.password } });
    expect(login.status).toBe(200);
    expect(claimsOf(login.json.access_token)).not.toHaveProperty('tenant_id');
    const users = await call('GET', '/auth/api/v1/users?limit=100', { token: login.json.access_token });
    expect(new Set(users.json.data.map((u: any) => u.tenant_id)).size).toBeGreaterThan(2);
  });
});

describe('bootstrap of the super-admin', () => {
  it('upserts through the internal route with a platform service account\'s API key, idempotently', async () => {
    const root = await call('POST', '/auth/api/v1/auth/login', { body: { identifier: SUPER.email, password: SUPER.password } });
    const sa = await call('POST', '/auth/api/v1/service-accounts', { token: root.json.access_token, body: { name: 'installer', allowed_scopes: ['admin'] } });
    expect(sa.json.service_account.tenant_id).toBeNull();
    const key = await call('POST', `/auth/api/v1/service-accounts/${sa.json.service_account.id}/apikeys`, { token: root.json.access_token, body: { name: 'installer key' } });
    expect(key.status).toBe(201);

    const body = { email: 'ops@platform.example', username: 'ops', password: 'first long password here' };
    const first = await call('POST', '/auth/internal/bootstrap/super-admin', { token: key.json.value, body });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ email: 'ops@platform.example', tenant_id: null, active: true, email_verified: true });
    expect(first.json.roles.map((r: any) => r.name)).toEqual(['super_admin']);
    const again = await call('POST', '/auth/internal/bootstrap/super-admin', { token: key.json.value, body: { ...body, password: 'second long password here' } });
    expect(again.json.id).toBe(first.json.id);
    expect((await call('POST', '/auth/api/v1/auth/login', { body: { identifier: 'ops', password: 'second long password here' } })).status).toBe(200);
    expect((await call('POST', '/auth/api/v1/auth/login', { body: { identifier: 'ops', password: 'first long password here' } })).status).toBe(401);

    expectError(await call('POST', '/auth/internal/bootstrap/super-admin', { token: root.json.access_token, body }), 403, 'forbidden');
    const tenantAdmin = await signUp();
    const tenantSa = await call('POST', '/auth/api/v1/service-accounts', { token: tenantAdmin.access, body: { name: 'tenant sa', allowed_scopes: ['admin'] } });
    const tenantKey = await call('POST', `/auth/api/v1/service-accounts/${tenantSa.json.service_account.id}/apikeys`, { token: tenantAdmin.access, body: { name: 'k' } });
    expectError(await call('POST', '/auth/internal/bootstrap/super-admin', { token: tenantKey.json.value, body }), 403, 'forbidden');
    expectError(await call('POST', '/auth/internal/bootstrap/super-admin', { body }), 401, 'unauthenticated');
  });
});

describe('the edge\'s request budget', () => {
  it('puts X-RateLimit headers on every response, errors included', async () => {
    for (const [method, path] of [['GET', '/platform/healthz'], ['GET', '/nowhere'], ['POST', '/auth/api/v1/auth/login']] as const) {
      const r = await call(method, path, { body: method === 'POST' ? {} : undefined });
      expect(Number(r.headers.get('x-ratelimit-limit'))).toBe(600);
      expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    }
  });
});
