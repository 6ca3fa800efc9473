import type { FastifyReply, FastifyRequest } from 'fastify';
import { loadAuthConfig } from '../../kernel/config.js';
import { AppError, ErrorCodes } from '../../kernel/errors.js';
import { sendError } from '../../kernel/http.js';
import { bearerToken, verifyInternalToken } from '../../kernel/identity.js';
import type { SubgraphDeps, SubgraphRuntime } from '../../kernel/graphql/startSubgraph.js';
import { bootstrapSuperAdmin } from './bootstrap/bootstrap.service.js';
import { Revocation } from './internal/revocation.entity.js';
import { createAttemptLimiter } from './limiter/attempt-limiter.js';
import type { AuthRuntime } from './runtime.js';
import { CredentialService } from './token/credential.service.js';

/** The edge identifies itself to auth's private routes with an internal token of this subject. */
export const EDGE_SUBJECT = 'edge';

/**
 * Starts what the auth subgraph needs besides GraphQL: the attempt limiters, the super-admin
 * bootstrap from configuration, the pruning of the revocation feed, and two private routes the
 * edge calls (never exposed through the edge): credential resolution and the revocation feed.
 */
export async function setupAuth({ orm, app, logger }: SubgraphDeps): Promise<SubgraphRuntime> {
  const config = loadAuthConfig();
  const window = (scope: string) => createAttemptLimiter({ scope, ...config.loginRateLimit, redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix, cacheService: config.cacheService });
  const runtime: AuthRuntime = { config, loginLimiter: window('login'), registerLimiter: window('register'), clientLimiter: window('client') };
  logger.info({ store: runtime.loginLimiter.store, ...config.loginRateLimit }, 'login attempt limiter');

  if (config.bootstrapSuperAdmin) {
    const { user, created } = await bootstrapSuperAdmin(orm.em.fork(), config.bootstrapSuperAdmin);
    logger.info({ email: user.email, created }, 'super-admin bootstrapped from configuration');
  }

  const edgeOnly = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    const identity = token ? await verifyInternalToken(token, config.internalJwtSecret).catch(() => null) : null;
    if (!identity || identity.subject !== EDGE_SUBJECT || !identity.roles.includes('internal')) {
      return sendError(reply, ErrorCodes.unauthenticated, 'internal route: edge credentials required');
    }
    return undefined;
  };

  app.post('/_edge/credentials/resolve', { preHandler: edgeOnly }, async (request, reply) => {
    const value = (request.body as { token?: unknown } | undefined)?.token;
    if (typeof value !== 'string') throw new AppError(ErrorCodes.badRequest, 'token is required');
    const resolved = await new CredentialService(orm.em.fork(), null).resolve(value);
    if (!resolved) return sendError(reply, ErrorCodes.unauthenticated, 'credential is not valid');
    return { identity: resolved.identity, expires_at: resolved.expiresAt?.toISOString() ?? null };
  });

  app.get('/_edge/revocations', { preHandler: edgeOnly }, async (request) => {
    const after = String((request.query as { after?: string }).after ?? '0');
    if (!/^\d{1,19}$/.test(after)) throw new AppError(ErrorCodes.validationFailed, 'after must be a revocation id');
    const entries = await orm.em.fork().find(Revocation, { id: { $gt: after }, expiresAt: { $gt: new Date() } }, { orderBy: { id: 'asc' }, limit: 1000 });
    return {
      entries: entries.map((e) => ({ id: e.id, kind: e.kind, value: e.value, expires_at: e.expiresAt.toISOString() })),
      last_id: entries.at(-1)?.id ?? after,
    };
  });

  // Expired feed rows cover nothing any more.
  const prune = setInterval(() => {
    void orm.em
      .fork()
      .nativeDelete(Revocation, { expiresAt: { $lt: new Date() } })
      .catch((error: unknown) => logger.warn({ err: error }, 'pruning the revocation feed failed'));
  }, 10 * 60_000);
  prune.unref();

  return {
    context: { auth: runtime },
    async stop() {
      clearInterval(prune);
      await Promise.all([runtime.loginLimiter.close(), runtime.registerLimiter.close(), runtime.clientLimiter.close()]);
    },
  };
}
