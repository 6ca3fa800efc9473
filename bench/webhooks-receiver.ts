/**
 * The HTTPS webhook receiver of `npm run bench -- webhooks`, run in a worker thread of the
 * benchmark process so that it has an event loop of its own (the dispatcher, the fan-out and the
 * publisher share the main one). Not a benchmark: the benchmark starts it with
 * `new Worker(<this compiled file>, { workerData })`. Imports node built-ins and the signature
 * check only.
 *
 * Every request is checked as an integrator is told to: the path names a subscription whose
 * secret the receiver holds, `Service-Signature` verifies over the exact body
 * (`webhooks-signature.ts`: HMAC-SHA256, constant-time compare, 300 s tolerance), the body is the
 * JSON envelope and its `id` and `type` are the `Service-Event-Id` and `Service-Event-Type`
 * headers. Then 200 `ok`; anything else 400, and the request is counted as rejected.
 *
 * For each accepted request it keeps an {@link Arrival}: the time the request arrived (on the
 * wall clock, `performance.timeOrigin + performance.now()`, which the main thread reads too) and
 * the publish time the benchmark put in the event (`data.published_at_ms`), for the
 * event-to-first-attempt latency. The main thread asks for them with `{ type: 'collect' }`, and
 * hands over the secrets with `{ type: 'secrets', secrets }` (path → secret) once the
 * subscriptions, whose URLs need the receiver's port, exist.
 */
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { signatureProblem } from './webhooks-signature.js';

export interface ReceiverData {
  role: 'webhooks-receiver';
  key: string;
  cert: string;
  /** Secret per path (`/hooks/<subscription>`). */
  secrets: Record<string, string>;
}

/** One accepted request. */
export interface Arrival {
  eventId: string;
  path: string;
  /** `Service-Delivery-Id`. */
  deliveryId: string;
  /** `Service-Attempt`. */
  attempt: string;
  /** When the request's headers were read, ms on the wall clock (fractional). */
  arrivedAt: number;
  /** `data.published_at_ms` of the event, NaN when absent. */
  publishedAt: number;
}

export interface Rejection {
  path: string;
  reason: string;
}

/** The answer to `collect`: what arrived since the previous one. */
export interface Collected {
  type: 'collected';
  arrivals: Arrival[];
  rejected: Rejection[];
  /** The receiver thread's event-loop utilization since the previous collect, 0 to 1. */
  utilization: number;
}

export type ReceiverMessage = { type: 'ready'; port: number } | Collected;

const wallClock = () => performance.timeOrigin + performance.now();

function start(data: ReceiverData): void {
  const port = parentPort!;
  const secrets = new Map(Object.entries(data.secrets));
  let arrivals: Arrival[] = [];
  let rejected: Rejection[] = [];
  let lastElu = performance.eventLoopUtilization();
  const sockets = new Set<Socket>();

  const server = createServer({ key: data.key, cert: data.cert }, (req, res) => {
    const arrivedAt = wallClock();
    const path = req.url ?? '/';
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reject = (reason: string) => {
        rejected.push({ path, reason });
        res.writeHead(400, { 'content-type': 'text/plain' }).end(reason);
      };
      const secret = secrets.get(path);
      if (secret === undefined) return reject('no subscription at this path');
      const body = Buffer.concat(chunks).toString('utf8');
      const header = req.headers['service-signature'];
      const problem = signatureProblem(body, typeof header === 'string' ? header : undefined, secret);
      if (problem !== null) return reject(problem);
      let event: { id?: unknown; type?: unknown; data?: { published_at_ms?: unknown } };
      try {
        event = JSON.parse(body) as typeof event;
      } catch {
        return reject('body is not JSON');
      }
      if (typeof event.id !== 'string' || event.id !== req.headers['service-event-id']) return reject(`Service-Event-Id ${String(req.headers['service-event-id'])} is not the body's id ${String(event.id)}`);
      if (event.type !== req.headers['service-event-type']) return reject(`Service-Event-Type ${String(req.headers['service-event-type'])} is not the body's type ${String(event.type)}`);
      const published = event.data?.published_at_ms;
      arrivals.push({
        eventId: event.id,
        path,
        deliveryId: String(req.headers['service-delivery-id'] ?? ''),
        attempt: String(req.headers['service-attempt'] ?? ''),
        arrivedAt,
        publishedAt: typeof published === 'number' ? published : Number.NaN,
      });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  port.on('message', (message: { type: string; secrets?: Record<string, string> }) => {
    if (message.type === 'secrets') {
      secrets.clear();
      for (const [path, secret] of Object.entries(message.secrets ?? {})) secrets.set(path, secret);
    } else if (message.type === 'collect') {
      const elu = performance.eventLoopUtilization(lastElu);
      lastElu = performance.eventLoopUtilization();
      const answer: Collected = { type: 'collected', arrivals, rejected, utilization: elu.utilization };
      arrivals = [];
      rejected = [];
      port.postMessage(answer);
    } else if (message.type === 'close') {
      for (const socket of sockets) socket.destroy();
      server.close(() => port.close());
    }
  });

  server.listen(0, '127.0.0.1', () => {
    port.postMessage({ type: 'ready', port: (server.address() as AddressInfo).port } satisfies ReceiverMessage);
  });
}

const data = workerData as Partial<ReceiverData> | null;
if (parentPort && data?.role === 'webhooks-receiver') start(data as ReceiverData);
