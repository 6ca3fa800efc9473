import type { FastifyRequest } from 'fastify';
import { AppError, ErrorCodes } from '../kernel/errors.js';
import { bearerToken, signInternalToken, verifyAccessToken, INTERNAL_TOKEN_TTL_SECONDS, type AccessTokenKeys, type Identity } from '../kernel/identity.js';

export interface Authenticator {
  /** The caller's identity, null when no credentials were sent; throws `unauthenticated` for bad ones. */
  authenticate(request: FastifyRequest): Promise<Identity | null>;
  /** A short-lived internal token for the identity, reused while it has most of its life left. */
  internalTokenFor(identity: Identity): Promise<string>;
}

/**
 * Turns the credential a client sent into an {@link Identity} and the internal access token the
 * subgraphs trust. Identity headers a client might send are never read: the identity comes
 * only from a verified credential.
 */
export function createAuthenticator(options: { accessKeys: AccessTokenKeys; internalJwtSecret: string }): Authenticator {
  const cache = new Map<string, { token: string; refreshAt: number }>();
  const reuseMs = (INTERNAL_TOKEN_TTL_SECONDS * 1000) / 2;

  return {
    async authenticate(request) {
      const header = request.headers.authorization;
      if (header === undefined) return null;
      const token = bearerToken(header);
      if (!token) throw new AppError(ErrorCodes.unauthenticated, 'Authorization header must be "Bearer <token>"');
      return verifyAccessToken(token, options.accessKeys);
    },

    async internalTokenFor(identity) {
      const key = `${identity.subject}|${identity.tenantId ?? ''}|${identity.roles.join(',')}|${identity.scopes.join(',')}|${identity.sessionId ?? ''}`;
      const now = Date.now();
      const cached = cache.get(key);
      if (cached && cached.refreshAt > now) return cached.token;
      const token = await signInternalToken(identity, options.internalJwtSecret);
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { token, refreshAt: now + reuseMs });
      return token;
    },
  };
}
