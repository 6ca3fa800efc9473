import { createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { AppError, ErrorCodes } from './errors.js';

/** Scopes of spec 5.3. A credential acts with its user's permissions limited to these. */
export const SCOPES = ['read', 'deploy', 'actions', 'agents', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = { admin: 'admin', superAdmin: 'super_admin' } as const;

/** Who is calling, as every service sees it after the edge has authenticated the request. */
export interface Identity {
  /** Subject: a user id or a service-account client id. */
  subject: string;
  /** The caller's tenant; null for platform-wide accounts (a super-admin). */
  tenantId: string | null;
  roles: string[];
  scopes: Scope[];
  /** Session id of a session JWT, when there is one. */
  sessionId?: string;
  /** How the caller authenticated; absent for identities built by tests or internal callers. */
  credential?: CredentialType;
  /** Id of the personal access token or API key used, for revocation and audit. */
  credentialId?: string;
  /** OAuth client id of a service account, when the caller is one. */
  clientId?: string;
}

/** session: a login's access JWT; client: a client-credentials JWT; pat and api_key: opaque values. */
export type CredentialType = 'session' | 'client' | 'pat' | 'api_key';

export const ACCESS_TOKEN_ISSUER = 'cloudops-auth';
export const ACCESS_TOKEN_AUDIENCE = 'cloudops-api';
const INTERNAL_ISSUER = 'cloudops-edge';
const INTERNAL_AUDIENCE = 'cloudops-subgraphs';
/** Internal tokens only travel from the edge to a subgraph inside one request: keep them short. */
export const INTERNAL_TOKEN_TTL_SECONDS = 60;

const keys = new Map<string, KeyObject>();
/** Secret keys are built once per secret: importing a raw key on every verify costs real CPU. */
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

function toClaims(identity: Identity): JWTPayload {
  return {
    ...(identity.tenantId ? { tenant_id: identity.tenantId } : {}),
    roles: identity.roles,
    scopes: identity.scopes,
    ...(identity.sessionId ? { sid: identity.sessionId } : {}),
    ...(identity.clientId ? { client_id: identity.clientId } : {}),
    ...(identity.credential ? { cred: identity.credential } : {}),
    ...(identity.credentialId ? { cred_id: identity.credentialId } : {}),
  };
}

function fromClaims(payload: JWTPayload): Identity {
  const { sub, tenant_id: tenantId, roles, scopes, sid, client_id: clientId, cred, cred_id: credentialId } = payload as JWTPayload & Record<string, unknown>;
  if (typeof sub !== 'string' || sub === '') throw new AppError(ErrorCodes.unauthenticated, 'token has no subject');
  if (tenantId !== undefined && typeof tenantId !== 'string') throw new AppError(ErrorCodes.unauthenticated, 'token has a malformed tenant');
  const roleList = Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [];
  const scopeList = Array.isArray(scopes) ? scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s as string)) : [];
  return {
    subject: sub,
    tenantId: tenantId ?? null,
    roles: roleList,
    scopes: scopeList,
    ...(typeof sid === 'string' ? { sessionId: sid } : {}),
    ...(typeof clientId === 'string' ? { clientId } : {}),
    ...(typeof cred === 'string' && ['session', 'client', 'pat', 'api_key'].includes(cred) ? { credential: cred as CredentialType } : {}),
    ...(typeof credentialId === 'string' ? { credentialId } : {}),
  };
}

async function sign(identity: Identity, secret: string, issuer: string, audience: string, ttlSeconds: number): Promise<string> {
  return signJwt({ ...toClaims(identity), sub: identity.subject }, secret, { issuer, audience, ttlSeconds });
}

/** Signs an HS256 JWT with the registered claims set here and the given private claims. */
export async function signJwt(claims: JWTPayload, secret: string, options: { issuer: string; audience: string; ttlSeconds: number; jwtId?: string }): Promise<string> {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + options.ttlSeconds);
  if (options.jwtId) jwt.setJti(options.jwtId);
  return jwt.sign(keyOf(secret));
}

/**
 * Verifies an HS256 token against a trusted list of secrets: the first signs, all verify, so a
 * secret can be rotated without logging everyone out. The algorithm is pinned: `alg: none` and
 * any other algorithm are refused before a key is tried.
 */
export async function verifyJwt(token: string, secrets: readonly string[], options: { issuer: string; audience: string }): Promise<JWTPayload> {
  let lastError: unknown;
  for (const secret of secrets) {
    try {
      const { payload } = await jwtVerify(token, keyOf(secret), { algorithms: ['HS256'], issuer: options.issuer, audience: options.audience });
      return payload;
    } catch (error) {
      lastError = error;
      // Only a bad signature is worth trying the next secret for; anything else (expired,
      // malformed, wrong audience) is decided by the token itself.
      if (!(error instanceof joseErrors.JWSSignatureVerificationFailed)) break;
    }
  }
  throw new AppError(ErrorCodes.unauthenticated, describeJoseError(lastError));
}

/**
 * Verified tokens, until they expire. jose verifies HMACs through WebCrypto, an asynchronous job
 * on the libuv pool that costs ~50 µs and queues behind password hashing; a session's access
 * token and the edge's internal tokens are presented many times, so each is verified once. The
 * key is the whole token under the whole secret list, and expiry is checked on every hit.
 */
const verified = new Map<string, { identity: Identity; expiresAtMs: number }>();
const VERIFIED_CACHE_MAX = 20_000;

async function verify(token: string, secrets: readonly string[], issuer: string, audience: string): Promise<Identity> {
  const key = `${issuer}|${audience}|${secrets.join('\u0000')}|${token}`;
  const hit = verified.get(key);
  if (hit && hit.expiresAtMs > Date.now()) return hit.identity;
  if (hit) verified.delete(key);
  const payload = await verifyJwt(token, secrets, { issuer, audience });
  const identity = fromClaims(payload);
  if (verified.size >= VERIFIED_CACHE_MAX) {
    // Drop the oldest half (Map keeps insertion order) rather than everything at once.
    let drop = VERIFIED_CACHE_MAX / 2;
    for (const k of verified.keys()) {
      if (drop-- <= 0) break;
      verified.delete(k);
    }
  }
  if (payload.exp) verified.set(key, { identity, expiresAtMs: payload.exp * 1000 });
  return identity;
}

function describeJoseError(error: unknown): string {
  if (error instanceof AppError) return error.message;
  if (error instanceof joseErrors.JWTExpired) return 'token has expired';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'token signature is not valid';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'token algorithm is not accepted';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `token claim "${error.claim}" is not valid`;
  return 'token is malformed';
}

export interface AccessTokenKeys {
  current: string;
  previous: readonly string[];
}

/** Signs access tokens with the current secret (used by auth, and by tests before auth exists). */
export function signAccessToken(identity: Identity, keys: AccessTokenKeys, ttlSeconds = 900): Promise<string> {
  return sign(identity, keys.current, ACCESS_TOKEN_ISSUER, ACCESS_TOKEN_AUDIENCE, ttlSeconds);
}

export function verifyAccessToken(token: string, keys: AccessTokenKeys): Promise<Identity> {
  return verify(token, [keys.current, ...keys.previous], ACCESS_TOKEN_ISSUER, ACCESS_TOKEN_AUDIENCE);
}

/** Like {@link verifyAccessToken}, with the token's issue and expiry times (for introspection). */
export async function inspectAccessToken(token: string, keys: AccessTokenKeys): Promise<{ identity: Identity; issuedAt: number; expiresAt: number }> {
  const payload = await verifyJwt(token, [keys.current, ...keys.previous], { issuer: ACCESS_TOKEN_ISSUER, audience: ACCESS_TOKEN_AUDIENCE });
  return { identity: fromClaims(payload), issuedAt: payload.iat ?? 0, expiresAt: payload.exp ?? 0 };
}

export function signInternalToken(identity: Identity, secret: string): Promise<string> {
  return sign(identity, secret, INTERNAL_ISSUER, INTERNAL_AUDIENCE, INTERNAL_TOKEN_TTL_SECONDS);
}

export function verifyInternalToken(token: string, secret: string): Promise<Identity> {
  return verify(token, [secret], INTERNAL_ISSUER, INTERNAL_AUDIENCE);
}

/** Reads a bearer token from an Authorization header value; undefined when absent or not Bearer. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
  return match?.[1];
}

export function hasScope(identity: Identity, scope: Scope): boolean {
  return identity.scopes.includes(scope);
}

export function hasRole(identity: Identity, role: string): boolean {
  // A super-admin holds every administrative right of a tenant admin.
  return identity.roles.includes(role) || (role === ROLES.admin && identity.roles.includes(ROLES.superAdmin));
}
