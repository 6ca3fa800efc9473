import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Identity } from '../kernel/identity.js';

export interface RequestBudget {
  readonly store: 'memory' | 'redis';
  /** Counts the request against its budget and sets the X-RateLimit-* headers; false when over. */
  consume(request: FastifyRequest, reply: FastifyReply, identity: Identity | null): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The budget a caller spends from: the session, the credential or the OAuth client for
 * authenticated calls (so refreshing a token does not buy a new budget), the client address for
 * anonymous ones.
 */
export function budgetKey(request: FastifyRequest, identity: Identity | null): string {
  if (!identity) return `ip:${request.ip}`;
  const holder = identity.sessionId ?? identity.credentialId ?? identity.clientId ?? '';
  return `id:${identity.subject}:${holder}`;
}

/**
 * Per-token request budget per minute (spec part 8) with rate-limiter-flexible: in memory by
 * default, in Redis with REDIS_URL so that every edge replica spends from the same budget.
 * Every response carries X-RateLimit-Limit, -Remaining and -Reset (unix seconds); over budget
 * the caller gets Retry-After.
 */
export function createRequestBudget(options: { perMinute: number; redisUrl?: string | undefined; keyPrefix?: string }): RequestBudget {
  let redis: Redis | undefined;
  let limiter: RateLimiterAbstract;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: 2 });
    limiter = new RateLimiterRedis({
      storeClient: redis,
      points: options.perMinute,
      duration: 60,
      keyPrefix: `${options.keyPrefix ?? 'cloudops:'}edge-budget`,
      // While Redis is unreachable each replica keeps counting on its own rather than failing.
      insuranceLimiter: new RateLimiterMemory({ points: options.perMinute, duration: 60 }),
    });
  } else {
    limiter = new RateLimiterMemory({ points: options.perMinute, duration: 60 });
  }

  const setHeaders = (reply: FastifyReply, res: RateLimiterRes) => {
    reply.header('x-ratelimit-limit', String(options.perMinute));
    reply.header('x-ratelimit-remaining', String(Math.max(0, res.remainingPoints)));
    reply.header('x-ratelimit-reset', String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)));
  };

  return {
    store: redis ? 'redis' : 'memory',
    async consume(request, reply, identity) {
      try {
        setHeaders(reply, await limiter.consume(budgetKey(request, identity)));
        return true;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        setHeaders(reply, rejection);
        reply.header('retry-after', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
        return false;
      }
    },
    async close() {
      await redis?.quit().catch(() => undefined);
    },
  };
}
