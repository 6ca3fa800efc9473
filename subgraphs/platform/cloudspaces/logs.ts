import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Orm } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { bearerToken, hasScope, verifyInternalToken, type Identity } from '../../../kernel/identity.js';
import { tenantEntityManager } from '../../../kernel/tenancy.js';
import type { PlatformRuntime } from '../runtime.js';
import { CloudSpaceViewsService } from './views.service.js';

/** The private path the edge proxies `GET …/cloudspaces/{id}/logs/{podName}?follow=true` to. */
export const POD_LOG_STREAM_PATH = '/_edge/cloudspaces/:id/logs/:podName';

/** The caller the edge vouches for: its internal token, as on /graphql, but required here. */
export async function internalCaller(request: FastifyRequest, secret: string): Promise<Identity> {
  const token = bearerToken(request.headers.authorization);
  if (!token) throw new AppError(ErrorCodes.unauthenticated, 'internal route: the edge\'s internal token is required');
  return verifyInternalToken(token, secret);
}

export function queryValue(query: Record<string, unknown>, name: string): string | undefined {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return value === undefined || value === '' ? undefined : String(value);
}

export function integerParam(query: Record<string, unknown>, name: string): number | undefined {
  const value = queryValue(query, name);
  if (value === undefined) return undefined;
  if (!/^-?\d{1,9}$/.test(value)) throw new AppError(ErrorCodes.validationFailed, `query parameter ${name} must be an integer`);
  return Number(value);
}

export function booleanParam(query: Record<string, unknown>, name: string): boolean | undefined {
  const value = queryValue(query, name);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new AppError(ErrorCodes.validationFailed, `query parameter ${name} must be true or false`);
  return value === 'true';
}

/**
 * Followed pod logs: a private route of the platform subgraph, reached only through the edge,
 * which authenticates the caller, checks scope and budget, and forwards the GET with an internal
 * token carrying the caller's identity (GraphQL cannot stream a log). The CloudSpace is resolved
 * for the token's tenant (another tenant's is 404), and every failure before the first byte
 * answers the error envelope; then the log flows as `text/plain`, chunk by chunk, until the pod
 * goes or the caller does (which closes the request to the virtual cluster).
 */
export function registerPodLogStream(app: FastifyInstance, deps: { orm: Orm; runtime: PlatformRuntime }): void {
  // No HEAD: Fastify would drain a followed log that never ends.
  app.get(POD_LOG_STREAM_PATH, { exposeHeadRoute: false }, async (request, reply) => {
    const identity = await internalCaller(request, deps.runtime.config.internalJwtSecret);
    if (!hasScope(identity, 'read')) throw new AppError(ErrorCodes.forbidden, 'scope "read" required');
    const { id, podName } = request.params as { id: string; podName: string };
    const query = (request.query ?? {}) as Record<string, unknown>;
    const service = new CloudSpaceViewsService(tenantEntityManager(deps.orm.em, identity), identity, deps.runtime);
    const stream = await service.followPodLogs({
      cloudSpaceId: id,
      podName,
      vcluster: queryValue(query, 'vcluster') ?? null,
      namespace: queryValue(query, 'namespace') ?? null,
      container: queryValue(query, 'container') ?? null,
      tail: integerParam(query, 'tail') ?? null,
      sinceSeconds: integerParam(query, 'since_seconds') ?? null,
      timestamps: booleanParam(query, 'timestamps') ?? null,
    });
    request.log.debug({ cloudspace: id, pod: podName, subject: identity.subject }, 'following pod log');
    // Fastify pipes the stream and destroys it when the connection closes first.
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(stream);
  });
}
