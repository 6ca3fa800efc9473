import type { Knex } from '@mikro-orm/postgresql';
import { EXCHANGES, type BusMessage, type EventBus } from '../../../kernel/bus.js';
import { EVENT_TYPES } from '../../../kernel/event-catalogue.js';
import type { Logger } from '../../../kernel/logger.js';

/** The envelope of spec 6, as consumed from the bus and as POSTed. */
export interface EventEnvelope {
  id: string;
  type: string;
  occurred_at: string;
  tenant_id: string;
  data: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Checks a message against the publishers' contract (README "Publishing events"): the envelope
 * with a unique `id`, a catalogue `type`, `occurred_at`, the owning `tenant_id` and a `data`
 * object. Answers why it is unusable, or the envelope in canonical key order.
 */
export function readEnvelope(body: Record<string, unknown>): EventEnvelope | string {
  const { id, type, occurred_at: occurredAt, tenant_id: tenantId, data } = body;
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return 'id must be a string of 1 to 200 characters';
  if (typeof type !== 'string' || !Object.hasOwn(EVENT_TYPES, type)) return `type ${JSON.stringify(type)} is not in the event catalogue`;
  if (typeof occurredAt !== 'string' || Number.isNaN(Date.parse(occurredAt))) return 'occurred_at must be an RFC 3339 time';
  if (typeof tenantId !== 'string' || !UUID.test(tenantId)) return 'tenant_id must be a UUID';
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'data must be an object';
  return { id, type, occurred_at: new Date(occurredAt).toISOString(), tenant_id: tenantId.toLowerCase(), data: data as Record<string, unknown> };
}

const scopeValue = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/**
 * The first time an event id is seen, writes one pending delivery per matching subscription of
 * the event's tenant (enabled, subscribed to the type or to all, not limited to other clusters or
 * CloudSpaces) and records the event in the inbox. One statement, and deliveries are unique per
 * (subscription, event), so a redelivered message (the broker's at-least-once), even handled
 * concurrently, neither duplicates deliveries nor loses them. Answers how many deliveries were
 * created (0 for an event seen before).
 */
export async function fanOut(knex: Knex, event: EventEnvelope, now: Date): Promise<number> {
  const body = JSON.stringify(event);
  const result = await knex.raw<{ rows: { deliveries: string }[] }>(
    `with seen as (
       select 1 from platform.event_inbox where event_id = :id
     ), fan as (
       insert into platform.webhook_delivery (id, tenant_id, subscription_id, event_id, event_type, body, status, attempt_count, next_attempt_at, occurred_at, created_at)
       select gen_random_uuid(), s.tenant_id, s.id, :id, :type, :body, 'pending', 0, :now, :occurred, :now
         from platform.webhook_subscription s
        where not exists (select 1 from seen)
          and s.tenant_id = :tenant and s.enabled
          and (s.events @> array['*'] or :type = any(s.events))
          and (s.cluster_ids is null or :cluster::text = any(s.cluster_ids))
          and (s.cloudspace_ids is null or :cloudspace::text = any(s.cloudspace_ids))
       on conflict (subscription_id, event_id) do nothing
       returning 1
     ), inbox as (
       insert into platform.event_inbox (event_id, event_type, tenant_id, received_at, deliveries)
       select :id, :type, :tenant, :now, (select count(*) from fan)
        where not exists (select 1 from seen)
       on conflict (event_id) do nothing
     )
     select count(*)::text as deliveries from fan`,
    {
      id: event.id,
      type: event.type,
      tenant: event.tenant_id,
      now,
      body,
      occurred: new Date(event.occurred_at),
      cluster: scopeValue(event.data.cluster_id),
      cloudspace: scopeValue(event.data.cloudspace_id),
    },
  );
  return Number(result.rows[0]?.deliveries ?? 0);
}

/** Queues of this service on the two exchanges; durable, so events wait while platform is down. */
export const WEBHOOK_QUEUES = { platform: 'platform.webhooks.platform-events', cicd: 'platform.webhooks.cicd-events' } as const;

/**
 * Consumes `platform.events` (every routing key: the event types of spec 6, from this product's
 * outboxes and from services outside it) and `cicd.events` into deliveries. Messages that break
 * the contract are logged and dropped (requeueing them would only loop); a database error throws,
 * so the broker redelivers the message.
 */
export async function startEventConsumer(options: { knex: Knex; bus: EventBus; logger: Logger; clock: () => Date; onDeliveries: () => void; queuePrefix?: string }): Promise<void> {
  const { knex, bus, logger, clock, onDeliveries } = options;
  const prefix = options.queuePrefix ?? '';
  const handle = async (message: BusMessage) => {
    if (!Object.hasOwn(EVENT_TYPES, message.routingKey)) return; // cicd.{provider}.* and the like: not webhook events
    const event = readEnvelope(message.body);
    if (typeof event === 'string') {
      logger.warn({ routingKey: message.routingKey, messageId: message.messageId, problem: event }, 'dropping an event that breaks the envelope contract');
      return;
    }
    if (event.type !== message.routingKey) {
      logger.warn({ routingKey: message.routingKey, type: event.type }, 'dropping an event whose type differs from its routing key');
      return;
    }
    if ((await fanOut(knex, event, clock())) > 0) onDeliveries();
  };
  await bus.subscribe(prefix + WEBHOOK_QUEUES.platform, EXCHANGES.platform, ['#'], handle);
  await bus.subscribe(prefix + WEBHOOK_QUEUES.cicd, EXCHANGES.cicd, ['#'], handle);
}
