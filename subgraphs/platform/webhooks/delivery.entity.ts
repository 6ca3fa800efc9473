import { Entity, Enum, Index, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

export enum DeliveryStatus {
  /** Waiting for its next attempt (the first one included). */
  pending = 'pending',
  succeeded = 'succeeded',
  /** Every attempt of the retry schedule failed; it can still be redelivered by hand. */
  failed = 'failed',
}

registerEnumType(DeliveryStatus, { name: 'WebhookDeliveryStatus', description: 'pending (an attempt is due), succeeded, or failed (the retry schedule is exhausted).' });

/**
 * One event for one subscription: the unit the dispatcher sends, retries and records. The body
 * is stored as sent, so every attempt and every redelivery carries the same bytes and event id.
 */
@Entity({ tableName: 'webhook_delivery' })
@TenantScoped()
@Unique({ name: 'webhook_delivery_subscription_event_key', properties: ['subscriptionId', 'eventId'] })
@Index({ name: 'webhook_delivery_subscription_created_idx', properties: ['subscriptionId', 'createdAt', 'id'] })
@Index({ name: 'webhook_delivery_due_idx', properties: ['status', 'nextAttemptAt'] })
@ObjectType({ description: 'One event sent to one subscription, with its attempts.' })
export class WebhookDelivery {
  [OptionalProps]?: 'id' | 'createdAt' | 'status' | 'attemptCount' | 'nextAttemptAt' | 'lastAttemptAt' | 'lastStatusCode';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  tenantId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID)
  subscriptionId!: string;

  @Property({ type: 'text' })
  @Field({ description: 'The event id (the envelope `id`), the same on every attempt.' })
  eventId!: string;

  @Property({ type: 'text' })
  @Field()
  eventType!: string;

  /** The JSON envelope exactly as POSTed. */
  @Property({ type: 'text', hidden: true })
  body!: string;

  @Enum({ items: () => DeliveryStatus, type: 'text' })
  @Field(() => DeliveryStatus)
  status: DeliveryStatus = DeliveryStatus.pending;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Attempts made so far.' })
  attemptCount: number = 0;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the next attempt is due; null once succeeded or failed.' })
  nextAttemptAt: Date | null = new Date();

  @Property({ type: 'timestamptz' })
  @Field({ description: 'When the event occurred; the retry schedule counts from here.' })
  occurredAt!: Date;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  lastAttemptAt: Date | null = null;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true, description: 'HTTP status of the last attempt, when the receiver answered.' })
  lastStatusCode: number | null = null;

  /** The envelope, for GraphQL readers. */
  @Field(() => GraphQLJSONObject, { description: 'The envelope sent: {id, type, occurred_at, tenant_id, data}.' })
  get event(): Record<string, unknown> {
    return JSON.parse(this.body) as Record<string, unknown>;
  }

  @Field(() => [WebhookDeliveryAttempt], { description: 'Attempts, oldest first.' })
  attempts: WebhookDeliveryAttempt[] = [];
}

/** One HTTP attempt of a delivery. */
@Entity({ tableName: 'webhook_delivery_attempt' })
@Index({ name: 'webhook_delivery_attempt_delivery_idx', properties: ['deliveryId', 'number'] })
@ObjectType({ description: 'One POST of a delivery and what came back.' })
export class WebhookDeliveryAttempt {
  [OptionalProps]?: 'id' | 'statusCode' | 'responseExcerpt' | 'error';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  deliveryId!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Attempt number, from 1; the value of the Service-Attempt header.' })
  number!: number;

  @Property({ type: 'timestamptz' })
  @Field()
  attemptedAt!: Date;

  @Property({ type: 'integer' })
  @Field(() => Int)
  durationMs!: number;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true })
  statusCode: number | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'The first 1 KiB of the response body.' })
  responseExcerpt: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Why the attempt failed, when it did.' })
  error: string | null = null;

  @Property({ type: 'boolean' })
  @Field()
  succeeded!: boolean;
}

/** Events already consumed (idempotency by event id), whatever their type. */
@Entity({ tableName: 'event_inbox' })
export class EventInbox {
  [OptionalProps]?: 'receivedAt' | 'deliveries';

  @PrimaryKey({ type: 'text' })
  eventId!: string;

  @Property({ type: 'text' })
  eventType!: string;

  @Property({ type: 'uuid', nullable: true })
  tenantId!: string | null;

  @Property({ type: 'timestamptz' })
  receivedAt: Date = new Date();

  /** How many deliveries the event fanned out to. */
  @Property({ type: 'integer' })
  deliveries: number = 0;
}
