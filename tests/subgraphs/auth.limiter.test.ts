import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createCacheServiceLimiter, createMemoryLimiter, createRedisLimiter, type AttemptLimiter } from '../../subgraphs/auth/limiter/attempt-limiter.js';

async function burst(limiter: AttemptLimiter, identifier: string, n: number) {
  return Promise.all(Array.from({ length: n }, () => limiter.hit(identifier)));
}

describe('login attempt limiter', () => {
  it('in memory: 50 parallel attempts, exactly the cap allowed, with a retry time', async () => {
    const limiter = createMemoryLimiter({ scope: 'login', limit: 7, windowSecs: 60 });
    const decisions = await burst(limiter, 'alice@example.com', 50);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
    expect(decisions.find((d) => !d.allowed)!.retryAfterSecs).toBeGreaterThan(0);
    expect((await limiter.hit('ALICE@example.com ')).allowed).toBe(false);
    expect((await limiter.hit('bob@example.com')).allowed).toBe(true);
  });

  it('in memory: the window rolls', async () => {
    const limiter = createMemoryLimiter({ scope: 'login', limit: 2, windowSecs: 1 });
    await burst(limiter, 'x', 2);
    expect((await limiter.hit('x')).allowed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await limiter.hit('x')).allowed).toBe(true);
  });

  const redisUrl = process.env.REDIS_URL;
  (redisUrl ? it : it.skip)('in Redis: 50 parallel attempts from two limiters (two replicas) never pass the cap', async () => {
    const scope = `test-${randomBytes(4).toString('hex')}`;
    const a = createRedisLimiter({ scope, limit: 10, windowSecs: 60, redisUrl: redisUrl! });
    const b = createRedisLimiter({ scope, limit: 10, windowSecs: 60, redisUrl: redisUrl! });
    try {
      const decisions = (await Promise.all([burst(a, 'carol', 25), burst(b, 'carol', 25)])).flat();
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
      expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSecs > 0 && d.retryAfterSecs <= 60)).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
  if (!redisUrl) process.stdout.write('auth.limiter.test.ts: REDIS_URL is not set, so the Redis limiter test is skipped\n');

  describe('through the cache service', () => {
    let server: Server;
    let baseUrl: string;
    const seen: { authorization?: string; key: string; body: unknown }[] = [];
    beforeAll(async () => {
      // A stand-in cache service implementing the documented contract, counting in memory.
      const counts = new Map<string, number>();
      server = createServer((req, res) => {
        let raw = '';
        req.on('data', (c) => (raw += c));
        req.on('end', () => {
          const match = /^\/v1\/rate-limits\/([^/]+)\/hits$/.exec(req.url ?? '');
          if (req.method !== 'POST' || !match) return res.writeHead(404).end();
          if (req.headers.authorization !== 'Bearer cache-key') return res.writeHead(401).end();
          const body = JSON.parse(raw) as { limit: number; window_secs: number };
          seen.push({ authorization: req.headers.authorization, key: decodeURIComponent(match[1]!), body });
          const count = (counts.get(match[1]!) ?? 0) + 1;
          counts.set(match[1]!, count);
          const allowed = count <= body.limit;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ allowed, count, retry_after_secs: allowed ? 0 : body.window_secs }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it('follows the contract and never sends the identifier itself', async () => {
      const limiter = createCacheServiceLimiter({ scope: 'login', limit: 3, windowSecs: 120, baseUrl, apiKey: 'cache-key' });
      const decisions = await burst(limiter, 'dave@example.com', 5);
      expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
      expect(decisions.find((d) => !d.allowed)!.retryAfterSecs).toBe(120);
      expect(seen[0]!.body).toEqual({ limit: 3, window_secs: 120 });
      expect(seen[0]!.key).toMatch(/^login:[0-9a-f]{64}$/);
      expect(JSON.stringify(seen)).not.toContain('dave');
    });

    it('refuses attempts when the cache service cannot be reached or refuses the key', async () => {
      const wrongKey = createCacheServiceLimiter({ scope: 'login', limit: 3, windowSecs: 60, baseUrl, apiKey: 'nope' });
      expect((await wrongKey.hit('erin')).allowed).toBe(false);
      const down = createCacheServiceLimiter({ scope: 'login', limit: 3, windowSecs: 60, baseUrl: 'http://127.0.0.1:9', apiKey: 'cache-key' });
      expect((await down.hit('erin')).allowed).toBe(false);
    });
  });
});
