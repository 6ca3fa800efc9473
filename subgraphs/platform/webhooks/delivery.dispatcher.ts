import type { Knex } from '@mikro-orm/postgresql';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, errors as undiciErrors, request } from 'undici';
import type { SecretBox } from '../../../kernel/crypto.js';
import type { Logger } from '../../../kernel/logger.js';
import { attemptDueAt } from './retry-schedule.js';
import { signatureHeader } from './signature.js';
import { checkLiteralHost, ForbiddenDestinationError, guardedLookup } from './ssrf-guard.js';
import { secretPurpose } from './webhook.service.js';

/** Spec limits: a receiver acknowledges within 10 s; the excerpt kept of its answer is 1 KiB. */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const RESPONSE_EXCERPT_BYTES = 1024;

/** Headers of every delivery besides Content-Type and Service-Signature. */
export const DELIVERY_HEADERS = { eventId: 'service-event-id', eventType: 'service-event-type', deliveryId: 'service-delivery-id', attempt: 'service-attempt' } as const;

export interface DispatcherOptions {
  knex: Knex;
  box: SecretBox;
  logger: Logger;
  allowPrivateNetworks: boolean;
  /** PEM file of extra CAs trusted besides the system ones. */
  caFile?: string | undefined;
  /** Deliveries in flight at once. */
  concurrency?: number;
  /** Time source for due times and the schedule (tests move it); durations use the real clock. */
  clock?: () => Date;
  timeoutMs?: number;
  /** How often to look for due deliveries when not nudged (other replicas' events, retries). */
  pollMs?: number;
}

export interface Dispatcher {
  /** The dispatcher's time, against which due times are compared. */
  now(): Date;
  /** Look for due deliveries now (after writing some). */
  nudge(): void;
  /** Claims and sends everything due at the clock's now, and resolves once all of it is recorded. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

interface Claimed {
  /** Where and how to send it, read with the claim; undefined when the subscription is gone. */
  target?: Target | undefined;
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  body: string;
  attempt_count: number;
  /** A string from the ORM's driver. */
  occurred_at: string | Date;
}

interface Outcome {
  delivery: Claimed;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number | null;
  excerpt: string | null;
  error: string | null;
}

/** The subscription's columns read with a claim (null when the subscription is gone). */
interface SubscriptionRow {
  url: string | null;
  enabled: boolean | null;
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | Date | null;
}

interface Target {
  url: string;
  enabled: boolean;
  secrets: string[];
  /** Why it cannot be sent (a signing secret that does not decrypt). */
  problem?: string;
}

/**
 * Sends due deliveries. Claiming is one statement that takes due rows with `FOR UPDATE SKIP
 * LOCKED` and moves their due time forward by a lease, so any number of replicas share the work
 * without sending a row twice in parallel, and a replica that dies mid-send loses nothing: when
 * the lease runs out the delivery is due again and another replica sends it. Attempts are
 * recorded in batches; a failure schedules the next attempt of the published schedule, counted
 * from the event, and after the last one the delivery is failed.
 */
export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const { knex, box, logger, allowPrivateNetworks } = options;
  const clock = options.clock ?? (() => new Date());
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const concurrency = options.concurrency ?? 64;
  const leaseMs = timeoutMs + 30_000;
  const guard = { allowPrivate: allowPrivateNetworks };
  const agent = new Agent({
    connect: {
      lookup: guardedLookup(guard),
      ...(options.caFile ? { ca: [...rootCertificates, readFileSync(options.caFile, 'utf8')] } : {}),
      timeout: timeoutMs,
    },
    connections: 32,
    keepAliveTimeout: 10_000,
  });

  const queue: Claimed[] = [];
  const results: Outcome[] = [];
  let inFlight = 0;
  let claiming: Promise<void> | undefined;
  let recording: Promise<void> | undefined;
  let recordTimer: NodeJS.Timeout | undefined;
  let wanted = false;
  let stopped = false;
  const idleWaiters: (() => void)[] = [];

  const claim = async (): Promise<number> => {
    const now = clock();
    const limit = Math.max(1, concurrency * 2 - queue.length - inFlight);
    // The subscriptions come with the claim, in the same statement: one round trip per batch
    // instead of one per batch of sends.
    const { rows } = await knex.raw<{ rows: (Claimed & SubscriptionRow)[] }>(
      `with claimed as (
         update platform.webhook_delivery d set next_attempt_at = :leaseUntil
           from (select id from platform.webhook_delivery
                  where status = 'pending' and next_attempt_at <= :now
                  order by next_attempt_at limit :limit
                  for update skip locked) due
          where d.id = due.id
          returning d.id, d.subscription_id, d.event_id, d.event_type, d.body, d.attempt_count, d.occurred_at
       )
       select c.id, c.subscription_id, c.event_id, c.event_type, c.body, c.attempt_count, c.occurred_at,
              s.url, s.enabled, s.secret_sealed, s.previous_secret_sealed, s.previous_secret_expires_at
         from claimed c left join platform.webhook_subscription s on s.id = c.subscription_id`,
      { now, leaseUntil: new Date(now.getTime() + leaseMs), limit },
    );
    const targets = new Map<string, Target | undefined>();
    for (const row of rows) {
      if (!targets.has(row.subscription_id)) targets.set(row.subscription_id, targetOf(row, now));
      const { url: _url, enabled: _enabled, secret_sealed: _secret, previous_secret_sealed: _previous, previous_secret_expires_at: _expires, ...delivery } = row;
      queue.push({ ...delivery, target: targets.get(row.subscription_id) });
    }
    return rows.length;
  };

  /** Signing secrets are opened per claim batch; a rotated-out secret signs until it expires. */
  const targetOf = (r: SubscriptionRow & { subscription_id: string }, now: Date): Target | undefined => {
    if (r.url === null || r.secret_sealed === null) return undefined;
    try {
      const secrets = [box.open(r.secret_sealed, secretPurpose(r.subscription_id))];
      // The ORM's driver answers timestamps as strings.
      if (r.previous_secret_sealed && r.previous_secret_expires_at && new Date(r.previous_secret_expires_at) > now) secrets.push(box.open(r.previous_secret_sealed, secretPurpose(r.subscription_id)));
      return { url: r.url, enabled: r.enabled === true, secrets };
    } catch (error) {
      logger.error({ err: error, subscription: r.subscription_id }, 'a webhook signing secret cannot be decrypted (was SECRET_ENCRYPTION_KEY changed?)');
      return { url: r.url, enabled: r.enabled === true, secrets: [], problem: 'the signing secret cannot be decrypted (SECRET_ENCRYPTION_KEY)' };
    }
  };

  const send = async (delivery: Claimed, target: Target | undefined): Promise<Outcome> => {
    const attemptedAt = clock();
    const started = performance.now();
    const outcome = (fields: Partial<Outcome>): Outcome => ({ delivery, attemptedAt, durationMs: Math.round(performance.now() - started), statusCode: null, excerpt: null, error: null, ...fields });
    if (!target) return outcome({ error: 'subscription no longer exists' });
    if (!target.enabled) return outcome({ error: 'subscription is disabled' });
    if (target.problem) return outcome({ error: target.problem });
    try {
      checkLiteralHost(new URL(target.url), guard);
      const response = await request(target.url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'cloudops-webhooks/1',
          // Signed at the real time of sending: receivers check it against their clock.
          'service-signature': signatureHeader(delivery.body, target.secrets),
          [DELIVERY_HEADERS.eventId]: delivery.event_id,
          [DELIVERY_HEADERS.eventType]: delivery.event_type,
          [DELIVERY_HEADERS.deliveryId]: delivery.id,
          [DELIVERY_HEADERS.attempt]: String(delivery.attempt_count + 1),
        },
        body: delivery.body,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const excerpt = await readExcerpt(response.body);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return outcome({ statusCode: response.statusCode, excerpt, error: ok ? null : `receiver answered ${response.statusCode}` });
    } catch (error) {
      return outcome({ error: describeFailure(error, timeoutMs) });
    }
  };

  const record = async (): Promise<void> => {
    const batch = results.splice(0, results.length);
    if (batch.length === 0) return;
    const now = clock();
    const attempts = batch.map((o) => ({
      id: crypto.randomUUID(),
      delivery_id: o.delivery.id,
      number: o.delivery.attempt_count + 1,
      attempted_at: o.attemptedAt,
      duration_ms: o.durationMs,
      status_code: o.statusCode,
      response_excerpt: o.excerpt,
      error: o.error,
      succeeded: o.error === null,
    }));
    const updates = batch.map((o) => {
      const made = o.delivery.attempt_count + 1;
      if (o.error === null) return { id: o.delivery.id, status: 'succeeded', next: null };
      const due = attemptDueAt(new Date(o.delivery.occurred_at), made + 1);
      return due === null ? { id: o.delivery.id, status: 'failed', next: null } : { id: o.delivery.id, status: 'pending', next: due > now ? due : now };
    });
    try {
      await knex.transaction(async (trx) => {
        await trx('platform.webhook_delivery_attempt').insert(attempts);
        await trx.raw(
          `update platform.webhook_delivery d
              set status = u.status, attempt_count = d.attempt_count + 1, next_attempt_at = u.next,
                  last_attempt_at = u.at, last_status_code = u.code
             from unnest(:ids::uuid[], :statuses::text[], :nexts::timestamptz[], :ats::timestamptz[], :codes::int[]) as u(id, status, next, at, code)
            where d.id = u.id`,
          {
            ids: updates.map((u) => u.id),
            statuses: updates.map((u) => u.status),
            nexts: updates.map((u) => u.next),
            ats: batch.map((o) => o.attemptedAt),
            codes: batch.map((o) => o.statusCode),
          },
        );
      });
    } catch (error) {
      // Not recorded: the lease runs out and the deliveries are attempted again (at least once).
      logger.error({ err: error, deliveries: batch.length }, 'recording webhook attempts failed');
    }
  };

  const scheduleRecord = () => {
    if (recording) return;
    if (results.length >= 200) {
      recording = record().finally(() => {
        recording = undefined;
        if (results.length > 0) scheduleRecord();
        settle();
      });
      return;
    }
    recordTimer ??= setTimeout(() => {
      recordTimer = undefined;
      recording = record().finally(() => {
        recording = undefined;
        if (results.length > 0) scheduleRecord();
        settle();
      });
    }, 10);
  };

  const run = (delivery: Claimed, target: Target | undefined) => {
    void send(delivery, target)
      .then((outcome) => {
        results.push(outcome);
        scheduleRecord();
      })
      .finally(() => {
        inFlight -= 1;
        pump();
      });
  };

  /** Starts sends from the local queue while there is room, and claims more when it runs low. */
  function pump(): void {
    if (stopped) return settle();
    const room = concurrency - inFlight;
    if (queue.length > 0 && room > 0) {
      const batch = queue.splice(0, room);
      inFlight += batch.length;
      for (const delivery of batch) run(delivery, delivery.target);
    }
    if (wanted && !claiming && queue.length < concurrency) {
      wanted = false;
      claiming = claim()
        .then(
          (claimed) => {
            if (claimed > 0) wanted = true; // there may be more
          },
          (error: unknown) => {
            if (!stopped) logger.warn({ err: error }, 'claiming webhook deliveries failed');
          },
        )
        .finally(() => {
          claiming = undefined;
          pump();
        });
    }
    settle();
  }

  const idle = () => !claiming && !recording && !recordTimer && inFlight === 0 && queue.length === 0 && results.length === 0 && !wanted;
  function settle(): void {
    if (!idle()) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  }

  const nudge = () => {
    wanted = true;
    pump();
  };
  const timer = setInterval(nudge, options.pollMs ?? 250);
  timer.unref();

  return {
    now: clock,
    nudge,
    drain: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        nudge();
      }),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await new Promise<void>((resolve) => {
        const check = () => (inFlight === 0 && !claiming ? resolve() : setTimeout(check, 20));
        check();
      });
      if (recordTimer) clearTimeout(recordTimer);
      recordTimer = undefined;
      await recording;
      await record();
      await agent.close();
    },
  };
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_EXCERPT_BYTES) {
      body.destroy();
      break;
    }
  }
  if (size === 0) return null;
  // Cut at a character boundary, not in the middle of a UTF-8 sequence.
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES)).replace(/\uFFFD$/, '');
}

/** A failed attempt's error as a receiver's owner would want to read it. */
function describeFailure(error: unknown, timeoutMs: number): string {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    if (e instanceof ForbiddenDestinationError) return e.message;
    const err = e as { name?: string; code?: string; message?: string };
    if (err.name === 'TimeoutError' || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError || err.code === 'UND_ERR_CONNECT_TIMEOUT') {
      return `no answer within ${timeoutMs / 1000} s`;
    }
    if (err.code === 'ECONNREFUSED') return 'connection refused';
    if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return `host not found (${err.code})`;
    if (err.code === 'ECONNRESET' || err.code === 'UND_ERR_SOCKET') return 'connection reset by the receiver';
    if (typeof err.code === 'string' && /CERT|SSL|TLS|SELF_SIGNED/.test(err.code)) return `TLS: ${err.message ?? err.code}`;
  }
  return `request failed: ${(error as Error)?.message ?? String(error)}`.slice(0, 500);
}
