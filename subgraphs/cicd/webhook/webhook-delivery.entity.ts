import { Entity, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';

/**
 * Git-host deliveries already handled, by the host's delivery id: a redelivery of the same
 * delivery changes nothing.
 */
@Entity({ tableName: 'webhook_delivery' })
@Unique({ name: 'webhook_delivery_unique', properties: ['provider', 'deliveryId', 'pipelineId'] })
export class WebhookDelivery {
  [OptionalProps]?: 'id' | 'receivedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  provider!: string;

  @Property({ type: 'text' })
  deliveryId!: string;

  @Property({ type: 'uuid' })
  pipelineId!: string;

  @Property({ type: 'text' })
  event!: string;

  @Property({ type: 'text' })
  outcome!: string;

  @Property({ type: 'timestamptz' })
  receivedAt: Date = new Date();
}
