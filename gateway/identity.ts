import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { request as undiciRequest } from 'undici';
import { credentialKindOf } from '../kernel/credentials.js';
import { AppError, ErrorCodes } from '../kernel/errors.js';
import { bearerToken, signInternalToken, verifyAccessToken, INTERNAL_TOKEN_TTL_SECONDS, type AccessTokenKeys, type Identity } from '../kernel/identity.js';
import type { Logger } from '../kernel/logger.js';

export interface Authenticator {
  /** The caller's identity, null when no credentials were sent; throws `unauthenticated` for bad ones. */
  authenticate(request: FastifyRequest): Promise<Identity | null>;
  /** A short-lived internal token for the identity, reused while it has most of its life left. */
  internalTokenFor(identity: Identity): Promise<string>;
  /** Applies a logout handled by this edge at once (other edges learn it from the feed). */
  revokeSession(sessionId: string): void;
  /** Loads the revocation feed and keeps following it. */
  start(): Promise<void>;
  stop(): void;
}

export interface AuthenticatorOptions {
  accessKeys: AccessTokenKeys;
  internalJwtSecret: string;
  /** Base URL of the auth service's private routes (its subgraph URL without /graphql). */
  authBaseUrl: string;
  revocationPollMs: number;
  credentialCacheSecs: number;
  /** How long a revocation must be remembered at least: the access-token lifetime. */
  accessTokenTtlSecs: number;
  logger: Logger;
}

interface FeedEntry {
  id: string;
  kind: 'session' | 'credential' | 'subject';
  value: string;
  expires_at: string;
}

const EDGE_IDENTITY: Identity = { subject: 'edge', tenantId: null, roles: ['internal'], scopes: [] };

/**
 * Turns the credential a client sent into an {@link Identity}. Access JWTs (sessions and client
 * credentials) are verified locally; personal access tokens and API keys are resolved by auth
 * and cached briefly. Revocation is a feed: auth appends every logout, refresh-token reuse,
 * revoked token and disabled account; each edge polls it every `revocationPollMs` and refuses
 * matching credentials. The edge that handles a logout applies it immediately. Identity headers
 * a client might send are never read.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const internalCache = new Map<string, { token: string; refreshAt: number }>();
  const reuseMs = (INTERNAL_TOKEN_TTL_SECONDS * 1000) / 2;
  const credentialCache = new Map<string, { identity: Identity; until: number }>();
  const denied = { session: new Map<string, number>(), credential: new Map<string, number>(), subject: new Map<string, number>() };
  let lastId = '0';
  let timer: NodeJS.Timeout | undefined;
  let polling = false;

  const internalTokenFor = async (identity: Identity): Promise<string> => {
    const key = `${identity.subject}|${identity.tenantId ?? ''}|${identity.roles.join(',')}|${identity.scopes.join(',')}|${identity.sessionId ?? ''}|${identity.credential ?? ''}|${identity.credentialId ?? ''}|${identity.clientId ?? ''}`;
    const now = Date.now();
    const cached = internalCache.get(key);
    if (cached && cached.refreshAt > now) return cached.token;
    const token = await signInternalToken(identity, options.internalJwtSecret);
    if (internalCache.size > 10_000) internalCache.clear();
    internalCache.set(key, { token, refreshAt: now + reuseMs });
    return token;
  };

  const isDenied = (identity: Identity): boolean => {
    const now = Date.now();
    const hit = (map: Map<string, number>, value: string | undefined) => value !== undefined && (map.get(value) ?? 0) > now;
    return hit(denied.session, identity.sessionId) || hit(denied.credential, identity.credentialId) || hit(denied.subject, identity.subject);
  };

  const deny = (kind: FeedEntry['kind'], value: string, until: number) => {
    denied[kind].set(value, Math.max(until, denied[kind].get(value) ?? 0));
    if (kind === 'credential' || kind === 'subject') {
      for (const [key, entry] of credentialCache) {
        if (entry.identity.credentialId === value || entry.identity.subject === value) credentialCache.delete(key);
      }
    }
  };

  async function poll(): Promise<void> {
    if (polling) return;
    polling = true;
    try {
      for (;;) {
        const response = await undiciRequest(`${options.authBaseUrl}/_edge/revocations?after=${lastId}`, {
          headers: { authorization: `Bearer ${await internalTokenFor(EDGE_IDENTITY)}` },
          headersTimeout: 5000,
          bodyTimeout: 5000,
        });
        if (response.statusCode !== 200) {
          await response.body.dump();
          throw new Error(`revocation feed answered ${response.statusCode}`);
        }
        const body = (await response.body.json()) as { entries: FeedEntry[]; last_id: string };
        for (const entry of body.entries) deny(entry.kind, entry.value, Date.parse(entry.expires_at));
        lastId = body.last_id;
        if (body.entries.length < 1000) break;
      }
      const now = Date.now();
      for (const map of Object.values(denied)) for (const [value, until] of map) if (until <= now) map.delete(value);
    } finally {
      polling = false;
    }
  }

  async function resolveOpaque(token: string): Promise<Identity> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = credentialCache.get(key);
    if (cached && cached.until > Date.now()) return cached.identity;
    let response;
    try {
      response = await undiciRequest(`${options.authBaseUrl}/_edge/credentials/resolve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await internalTokenFor(EDGE_IDENTITY)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
    } catch (error) {
      options.logger.warn({ err: error }, 'auth unreachable while resolving a credential');
      throw new AppError(ErrorCodes.upstreamUnavailable, 'the identity service is not reachable');
    }
    if (response.statusCode === 401) {
      await response.body.dump();
      throw new AppError(ErrorCodes.unauthenticated, 'credential is not valid, expired or revoked');
    }
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new AppError(ErrorCodes.upstreamUnavailable, 'the identity service could not resolve the credential');
    }
    const { identity, expires_at: expiresAt } = (await response.body.json()) as { identity: Identity; expires_at: string | null };
    if (options.credentialCacheSecs > 0) {
      if (credentialCache.size > 10_000) credentialCache.clear();
      // Never past the credential's own expiry.
      const until = Math.min(Date.now() + options.credentialCacheSecs * 1000, expiresAt ? Date.parse(expiresAt) : Number.POSITIVE_INFINITY);
      credentialCache.set(key, { identity, until });
    }
    return identity;
  }

  return {
    async authenticate(request) {
      const header = request.headers.authorization;
      if (header === undefined) return null;
      const token = bearerToken(header);
      if (!token) throw new AppError(ErrorCodes.unauthenticated, 'Authorization header must be "Bearer <token>"');
      const kind = credentialKindOf(token);
      let identity: Identity;
      if (kind === 'pat' || kind === 'api_key') identity = await resolveOpaque(token);
      else if (kind === 'client_secret') throw new AppError(ErrorCodes.unauthenticated, 'a client secret is not a bearer token; exchange it at /auth/oauth/token');
      else if (kind === 'pipeline_token') throw new AppError(ErrorCodes.unauthenticated, 'a pipeline reporting token goes in the X-Pipeline-Token header, not Authorization');
      else identity = await verifyAccessToken(token, options.accessKeys);
      if (isDenied(identity)) throw new AppError(ErrorCodes.unauthenticated, 'token has been revoked');
      return identity;
    },

    internalTokenFor,

    revokeSession(sessionId) {
      deny('session', sessionId, Date.now() + options.accessTokenTtlSecs * 1000);
    },

    async start() {
      await poll().catch((error: unknown) => options.logger.warn({ err: error }, 'revocation feed not reachable yet; retrying'));
      timer = setInterval(() => {
        poll().catch((error: unknown) => options.logger.warn({ err: error }, 'revocation feed poll failed'));
      }, options.revocationPollMs);
      timer.unref();
    },

    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
