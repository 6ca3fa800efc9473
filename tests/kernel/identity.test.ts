import { SignJWT, base64url } from 'jose';
import { AppError } from '../../kernel/errors.js';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_ISSUER, bearerToken, hasRole, signAccessToken, signInternalToken, verifyAccessToken, verifyInternalToken, type Identity } from '../../kernel/identity.js';

const alice: Identity = { subject: 'alice', tenantId: '0a000000-0000-4000-8000-00000000000a', roles: ['admin'], scopes: ['read', 'deploy'], sessionId: 'sess-1' };
const current = 'c'.repeat(40);
const older = 'o'.repeat(40);

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).definition.code).toBe('unauthenticated');
    return error as AppError;
  }
  throw new Error('expected the token to be refused');
}

describe('access tokens', () => {
  it('round-trips the identity', async () => {
    const token = await signAccessToken(alice, { current, previous: [] });
    expect(await verifyAccessToken(token, { current, previous: [] })).toEqual(alice);
  });

  it('accepts a token signed with a previous secret during rotation, and refuses it once the secret is removed', async () => {
    const token = await signAccessToken(alice, { current: older, previous: [] });
    expect((await verifyAccessToken(token, { current, previous: [older] })).subject).toBe('alice');
    await rejection(verifyAccessToken(token, { current, previous: [] }));
  });

  it('refuses alg none', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const now = Math.floor(Date.now() / 1000);
    const payload = base64url.encode(JSON.stringify({ sub: 'mallory', roles: ['super_admin'], scopes: ['admin'], iss: ACCESS_TOKEN_ISSUER, aud: ACCESS_TOKEN_AUDIENCE, iat: now, exp: now + 60 }));
    const error = await rejection(verifyAccessToken(`${header}.${payload}.`, { current, previous: [] }));
    expect(error.message).toMatch(/algorithm|malformed/);
  });

  it('refuses another HMAC algorithm than HS256', async () => {
    const token = await new SignJWT({ scopes: ['read'] }).setProtectedHeader({ alg: 'HS512' }).setSubject('x').setIssuer(ACCESS_TOKEN_ISSUER).setAudience(ACCESS_TOKEN_AUDIENCE).setExpirationTime('1m').sign(new TextEncoder().encode(current));
    await rejection(verifyAccessToken(token, { current, previous: [] }));
  });

  it('refuses a tampered payload', async () => {
    const token = await signAccessToken(alice, { current, previous: [] });
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    claims.tenant_id = '0b000000-0000-4000-8000-00000000000b';
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    expect((await rejection(verifyAccessToken(tampered, { current, previous: [] }))).message).toMatch(/signature/);
  });

  it('refuses an expired token', async () => {
    const token = await signAccessToken(alice, { current, previous: [] }, -5);
    expect((await rejection(verifyAccessToken(token, { current, previous: [] }))).message).toMatch(/expired/);
  });

  it('keeps access and internal tokens apart even under one secret', async () => {
    const internal = await signInternalToken(alice, current);
    await rejection(verifyAccessToken(internal, { current, previous: [] }));
    const access = await signAccessToken(alice, { current, previous: [] });
    await rejection(verifyInternalToken(access, current));
    expect((await verifyInternalToken(internal, current)).tenantId).toBe(alice.tenantId);
  });

  it('omits the tenant claim for platform-wide accounts', async () => {
    const root: Identity = { subject: 'root', tenantId: null, roles: ['super_admin'], scopes: ['admin'] };
    const token = await signAccessToken(root, { current, previous: [] });
    expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())).not.toHaveProperty('tenant_id');
    expect((await verifyAccessToken(token, { current, previous: [] })).tenantId).toBeNull();
  });
});

describe('credentials helpers', () => {
  it('reads only well-formed bearer headers', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('gives a super-admin every admin right', () => {
    expect(hasRole({ ...alice, roles: ['super_admin'] }, 'admin')).toBe(true);
    expect(hasRole({ ...alice, roles: ['admin'] }, 'super_admin')).toBe(false);
  });
});
