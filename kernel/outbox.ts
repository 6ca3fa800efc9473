import { Entity, Index, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { EventBus } from './bus.js';
import type { Logger } from './logger.js';
import { startPassLoop } from './loop.js';

/**
 * The transactional outbox: a service writes the event in the same transaction as the change it
 * describes, and the relay publishes it afterwards. A change is never published without being
 * committed, and a committed change is always published (at least once; consumers dedupe on
 * the message id). One table per service schema.
 */
@Entity({ tableName: 'outbox_message' })
@Index({ name: 'outbox_message_pending_idx', properties: ['publishedAt', 'nextAttemptAt'] })
export class OutboxMessage {
  [OptionalProps]?: 'id' | 'createdAt' | 'publishedAt' | 'attempts' | 'nextAttemptAt' | 'lastError';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  exchange!: string;

  @Property({ type: 'text' })
  routingKey!: string;

  @Property({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  publishedAt: Date | null = null;

  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'timestamptz' })
  nextAttemptAt: Date = new Date();

  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;
}

/** Table DDL for a service's migration (the entity above, in that service's schema). */
export function outboxTableSql(schema: string): string[] {
  return [
    `create table "${schema}"."outbox_message" ("id" uuid not null, "exchange" text not null, "routing_key" text not null, "payload" jsonb not null, "created_at" timestamptz not null, "published_at" timestamptz null, "attempts" int not null default 0, "next_attempt_at" timestamptz not null, "last_error" text null, constraint "outbox_message_pkey" primary key ("id"));`,
    `create index "outbox_message_pending_idx" on "${schema}"."outbox_message" ("published_at", "next_attempt_at");`,
  ];
}

/** Queues an event in the caller's unit of work; it is written when the caller flushes. */
export function enqueue(em: EntityManager, exchange: string, routingKey: string, payload: Record<string, unknown>, id: string = randomUUID()): OutboxMessage {
  return em.create(OutboxMessage, { id, exchange, routingKey, payload });
}

export interface OutboxRelay {
  /** Publishes pending messages now instead of at the next tick (call after a commit). */
  nudge(): void;
  stop(): Promise<void>;
}

/**
 * Publishes pending outbox messages: claims a batch with `FOR UPDATE SKIP LOCKED` (so any number
 * of replicas can relay at once without publishing a row twice in parallel), publishes each
 * with confirms, and marks it published; a failed publish is retried with exponential backoff.
 */
export function startOutboxRelay(options: {
  orm: MikroORM;
  schema: string;
  bus: Pick<EventBus, 'publish'>;
  logger: Logger;
  intervalMs?: number;
  /** Only rows of these exchanges (several relays can share one outbox, each with its own destination). */
  exchanges?: readonly string[];
}): OutboxRelay {
  const { orm, schema, bus, logger } = options;
  const knex = orm.em.getConnection().getKnex();

  const batch = async (): Promise<number> =>
    knex.transaction(async (trx) => {
      const rows = (await trx
        .select('id', 'exchange', 'routing_key', 'payload', 'attempts')
        .from(`${schema}.outbox_message`)
        .whereNull('published_at')
        .andWhere('next_attempt_at', '<=', new Date())
        .modify((q) => {
          if (options.exchanges) void q.whereIn('exchange', options.exchanges as string[]);
        })
        .orderBy('created_at')
        .limit(100)
        .forUpdate()
        .skipLocked()) as { id: string; exchange: string; routing_key: string; payload: Record<string, unknown>; attempts: number }[];
      const published: string[] = [];
      for (const row of rows) {
        try {
          await bus.publish({ exchange: row.exchange, routingKey: row.routing_key, messageId: row.id, body: row.payload });
          published.push(row.id);
        } catch (error) {
          const delayMs = Math.min(5 * 60_000, 500 * 2 ** row.attempts);
          await trx(`${schema}.outbox_message`)
            .where({ id: row.id })
            .update({ attempts: row.attempts + 1, next_attempt_at: new Date(Date.now() + delayMs), last_error: String((error as Error).message ?? error).slice(0, 500) });
          logger.warn({ err: error, id: row.id, routingKey: row.routing_key }, 'outbox publish failed; will retry');
        }
      }
      if (published.length > 0) await trx(`${schema}.outbox_message`).whereIn('id', published).update({ published_at: new Date() });
      return rows.length;
    });

  const loop = startPassLoop({
    name: 'outbox relay',
    pass: async () => {
      while (!loop.stopped && (await batch()) === 100);
    },
    intervalMs: options.intervalMs ?? 500,
    logger,
    runNow: true,
  });
  return { nudge: loop.nudge, stop: loop.stop };
}
