import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { request } from 'undici';

export interface AttemptDecision {
  allowed: boolean;
  /** Attempts counted in the window, this one included when allowed. */
  count: number;
  /** Seconds until the next attempt can be allowed (0 when allowed). */
  retryAfterSecs: number;
}

/**
 * Counts login and registration attempts per identifier in a rolling window (spec 4.9 rule 6,
 * part 8). `hit` counts and decides in one atomic step, so parallel attempts cannot slip past
 * the cap. Identifiers are hashed before they reach any store: the store never sees emails.
 */
export interface AttemptLimiter {
  readonly store: 'memory' | 'redis' | 'cache-service';
  hit(identifier: string): Promise<AttemptDecision>;
  close(): Promise<void>;
}

export interface WindowOptions {
  limit: number;
  windowSecs: number;
}

const keyOf = (scope: string, identifier: string) => `${scope}:${createHash('sha256').update(identifier.trim().toLowerCase()).digest('hex')}`;

/** In-process sliding window. Does not survive restarts or span replicas (spec part 8). */
export function createMemoryLimiter(options: WindowOptions & { scope: string }): AttemptLimiter {
  const windows = new Map<string, number[]>();
  const windowMs = options.windowSecs * 1000;
  return {
    store: 'memory',
    async hit(identifier) {
      const key = keyOf(options.scope, identifier);
      const now = Date.now();
      const hits = (windows.get(key) ?? []).filter((t) => t > now - windowMs);
      if (hits.length >= options.limit) {
        windows.set(key, hits);
        return { allowed: false, count: hits.length, retryAfterSecs: Math.max(1, Math.ceil((hits[0]! + windowMs - now) / 1000)) };
      }
      hits.push(now);
      windows.set(key, hits);
      if (windows.size > 100_000) {
        for (const [k, v] of windows) if (v.every((t) => t <= now - windowMs)) windows.delete(k);
      }
      return { allowed: true, count: hits.length, retryAfterSecs: 0 };
    },
    async close() {
      windows.clear();
    },
  };
}

/** Sliding-window log in a sorted set, pruned, counted and added to in one Lua script. */
const SLIDING_WINDOW = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, count, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return {1, count + 1, 0}
`;

export function createRedisLimiter(options: WindowOptions & { scope: string; redisUrl: string; keyPrefix?: string }): AttemptLimiter {
  const redis = new Redis(options.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  redis.defineCommand('slidingWindowHit', { numberOfKeys: 1, lua: SLIDING_WINDOW });
  const prefix = `${options.keyPrefix ?? 'cloudops:'}attempts:`;
  return {
    store: 'redis',
    async hit(identifier) {
      const key = `${prefix}${keyOf(options.scope, identifier)}`;
      const [allowed, count, retryMs] = (await (redis as unknown as { slidingWindowHit(...args: (string | number)[]): Promise<number[]> }).slidingWindowHit(
        key,
        Date.now(),
        options.windowSecs * 1000,
        options.limit,
        randomUUID(),
      )) as [number, number, number];
      // Callers' clocks differ by a few milliseconds, so the oldest hit can be a little ahead of `now`: never more than the window.
      return { allowed: allowed === 1, count, retryAfterSecs: allowed === 1 ? 0 : Math.min(options.windowSecs, Math.max(1, Math.ceil(retryMs / 1000))) };
    },
    async close() {
      await redis.quit().catch(() => undefined);
    },
  };
}

/**
 * The cache service of spec 8 (`CACHE_SERVICE_BASE_URL`, `CACHE_SERVICE_API_KEY`). Contract:
 *
 *     POST {base}/v1/rate-limits/{key}/hits
 *     Authorization: Bearer {api key}
 *     {"limit": 10, "window_secs": 900}
 *     → 200 {"allowed": true, "count": 3, "retry_after_secs": 0}
 *
 * The service counts the hit and decides atomically. When it cannot be reached the attempt is
 * refused (fail closed): an unreachable limiter must not turn into unlimited guessing.
 */
export function createCacheServiceLimiter(options: WindowOptions & { scope: string; baseUrl: string; apiKey: string }): AttemptLimiter {
  return {
    store: 'cache-service',
    async hit(identifier) {
      const key = encodeURIComponent(keyOf(options.scope, identifier));
      try {
        const response = await request(`${options.baseUrl}/v1/rate-limits/${key}/hits`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ limit: options.limit, window_secs: options.windowSecs }),
          headersTimeout: 2000,
          bodyTimeout: 2000,
        });
        const body = (await response.body.json()) as { allowed?: boolean; count?: number; retry_after_secs?: number };
        if (response.statusCode !== 200 || typeof body.allowed !== 'boolean') throw new Error(`cache service answered ${response.statusCode}`);
        return { allowed: body.allowed, count: body.count ?? 0, retryAfterSecs: body.allowed ? 0 : Math.max(1, body.retry_after_secs ?? options.windowSecs) };
      } catch {
        return { allowed: false, count: 0, retryAfterSecs: 30 };
      }
    },
    async close() {},
  };
}

export function createAttemptLimiter(
  options: WindowOptions & { scope: string; redisUrl?: string | undefined; keyPrefix?: string; cacheService?: { baseUrl: string; apiKey: string } | undefined },
): AttemptLimiter {
  if (options.cacheService) return createCacheServiceLimiter({ ...options, ...options.cacheService });
  if (options.redisUrl) return createRedisLimiter({ ...options, redisUrl: options.redisUrl });
  return createMemoryLimiter(options);
}
