import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';

/** A certificate authority and a server certificate it signed, for `localhost` and 127.0.0.1. */
export interface TestPki {
  caFile: string;
  key: string;
  cert: string;
  remove(): void;
}

/** Made with the openssl CLI, as an operator would; nothing is checked in. */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-pki-'));
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=webhook test CA', '-keyout', path('ca.key'), '-out', path('ca.pem'));
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', path('server.key'), '-out', path('server.csr'));
  writeFileSync(path('san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  openssl('x509', '-req', '-in', path('server.csr'), '-CA', path('ca.pem'), '-CAkey', path('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', path('san.ext'), '-out', path('server.pem'));
  return { caFile: path('ca.pem'), key: readFileSync(path('server.key'), 'utf8'), cert: readFileSync(path('server.pem'), 'utf8'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ReceivedDelivery {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  event: { id: string; type: string; tenant_id: string; occurred_at: string; data: Record<string, unknown> };
  /** Which of the path's secrets verified the signature (stripe's verifier, 300 s tolerance). */
  verifiedWith: string[];
  at: number;
}

/** What the receiver does with a request whose signature verified; default: 200 `ok`. */
export type Behaviour = (delivery: ReceivedDelivery) => { status: number; body?: string; delayMs?: number } | 'hang';

export interface HttpsReceiver {
  /** Base URL, `https://localhost:<port>`. */
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** Requests refused because no secret of their path verified them. */
  rejected: { path: string; reason: string }[];
  secrets: Map<string, string[]>;
  behave(path: string, behaviour: Behaviour): void;
  /** Resolves with the first delivery matching `predicate` (already received or to come). */
  waitFor(predicate: (d: ReceivedDelivery) => boolean, timeoutMs?: number): Promise<ReceivedDelivery>;
  close(): Promise<void>;
}

const stripe = new Stripe('sk_test_unused');

/**
 * An HTTPS webhook receiver that does what integrators are told to do: verify `Service-Signature`
 * with a real implementation of the scheme (the stripe package; only the header name differs),
 * refusing a timestamp more than 300 s away, and answer 2xx quickly. Secrets are per path.
 */
export async function startHttpsReceiver(pki: TestPki, options: { port?: number } = {}): Promise<HttpsReceiver> {
  const received: ReceivedDelivery[] = [];
  const rejected: { path: string; reason: string }[] = [];
  const secrets = new Map<string, string[]>();
  const behaviours = new Map<string, Behaviour>();
  const waiters: { predicate: (d: ReceivedDelivery) => boolean; resolve: (d: ReceivedDelivery) => void }[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer({ key: pki.key, cert: pki.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      const header = req.headers['service-signature'];
      const verifiedWith = (secrets.get(path) ?? []).filter((secret) => {
        try {
          stripe.webhooks.constructEvent(body, String(header ?? ''), secret, 300);
          return true;
        } catch {
          return false;
        }
      });
      if (verifiedWith.length === 0) {
        rejected.push({ path, reason: header ? 'signature did not verify' : 'no signature' });
        res.writeHead(400, { 'content-type': 'text/plain' }).end('bad signature');
        return;
      }
      const delivery: ReceivedDelivery = { path, headers: req.headers, body, event: JSON.parse(body) as ReceivedDelivery['event'], verifiedWith, at: Date.now() };
      received.push(delivery);
      for (const w of [...waiters]) {
        if (w.predicate(delivery)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(delivery);
        }
      }
      const answer = behaviours.get(path)?.(delivery) ?? { status: 200, body: 'ok' };
      if (answer === 'hang') return;
      const reply = () => {
        if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs).unref();
      else reply();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://localhost:${port}`,
    port,
    received,
    rejected,
    secrets,
    behave: (path, behaviour) => behaviours.set(path, behaviour),
    waitFor(predicate, timeoutMs = 20_000) {
      const found = received.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { predicate, resolve: (d: ReceivedDelivery) => (clearTimeout(timer), resolve(d)) };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no matching delivery within ${timeoutMs} ms (received ${received.length}, rejected ${rejected.length})`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
