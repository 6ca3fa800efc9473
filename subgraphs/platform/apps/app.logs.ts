import type { FastifyInstance } from 'fastify';
import type { Orm } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { hasScope } from '../../../kernel/identity.js';
import { tenantEntityManager } from '../../../kernel/tenancy.js';
import { booleanParam, integerParam, internalCaller, queryValue } from '../cloudspaces/logs.js';
import type { PlatformRuntime } from '../runtime.js';
import { AppExtrasService } from './app.extras.service.js';

/** The private path the edge proxies `GET …/apps/{id}/logs?follow=true` to. */
export const APP_LOG_STREAM_PATH = '/_edge/apps/:id/logs';

/**
 * Followed app logs, as followed pod logs of a CloudSpace (cloudspaces/logs.ts): reached only
 * through the edge with its internal token; the app is resolved for the token's tenant (another
 * tenant's is 404), the pod is the one asked for if it is the app's, else its newest ready one;
 * failures before the first byte answer the error envelope, then the log flows as `text/plain`
 * until the pod goes or the caller does.
 */
export function registerAppLogStream(app: FastifyInstance, deps: { orm: Orm; runtime: PlatformRuntime }): void {
  // No HEAD: Fastify would drain a followed log that never ends.
  app.get(APP_LOG_STREAM_PATH, { exposeHeadRoute: false }, async (request, reply) => {
    const identity = await internalCaller(request, deps.runtime.config.internalJwtSecret);
    if (!hasScope(identity, 'read')) throw new AppError(ErrorCodes.forbidden, 'scope "read" required');
    const { id } = request.params as { id: string };
    const query = (request.query ?? {}) as Record<string, unknown>;
    const service = new AppExtrasService(tenantEntityManager(deps.orm.em, identity), identity, deps.runtime);
    const { pod, stream } = await service.followLogs(id, {
      pod: queryValue(query, 'pod') ?? null,
      container: queryValue(query, 'container') ?? null,
      tail: integerParam(query, 'tail') ?? null,
      sinceSeconds: integerParam(query, 'since_seconds') ?? null,
      timestamps: booleanParam(query, 'timestamps') ?? null,
    });
    request.log.debug({ app: id, pod, subject: identity.subject }, 'following app log');
    // Fastify pipes the stream and destroys it when the connection closes first.
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(stream);
  });
}
