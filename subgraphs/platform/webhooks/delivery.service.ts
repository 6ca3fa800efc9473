import type { EntityManager } from '@mikro-orm/postgresql';
import { findByIdOrNotFound } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { pageNewestFirst, type PageOfRows } from '../../../kernel/pagination.js';
import type { PlatformRuntime } from '../runtime.js';
import { DeliveryStatus, WebhookDelivery, WebhookDeliveryAttempt } from './delivery.entity.js';
import { WebhookSubscriptionService } from './webhook.service.js';

/** The delivery log of one subscription, and redelivery. */
export class WebhookDeliveryService {
  private readonly subscriptions: WebhookSubscriptionService;

  constructor(
    private readonly em: EntityManager,
    identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {
    this.subscriptions = new WebhookSubscriptionService(em, identity, runtime);
  }

  /** Newest first, each with its attempts; another tenant's subscription is not found. */
  async list(subscriptionId: string, args: { status?: DeliveryStatus | null; limit?: number | null; cursor?: string | null }): Promise<PageOfRows<WebhookDelivery>> {
    const subscription = await this.subscriptions.get(subscriptionId);
    const where: Record<string, unknown> = { subscriptionId: subscription.id };
    if (args.status) where.status = args.status;
    const page = await pageNewestFirst<WebhookDelivery>(this.em, WebhookDelivery, `webhook_deliveries:${subscription.id}`, where, args);
    await this.withAttempts(page.data);
    return page;
  }

  async get(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery> {
    const subscription = await this.subscriptions.get(subscriptionId);
    const delivery = await findByIdOrNotFound(this.em, WebhookDelivery, deliveryId, 'webhook delivery');
    if (delivery.subscriptionId !== subscription.id) throw new AppError(ErrorCodes.notFound, 'webhook delivery not found');
    await this.withAttempts([delivery]);
    return delivery;
  }

  /**
   * Sends the delivery again now, with the same event id and body (a new attempt number). A
   * finished delivery becomes pending for this one attempt; if it fails and the schedule has no
   * attempt left, it is failed again.
   */
  async redeliver(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery> {
    const delivery = await this.get(subscriptionId, deliveryId);
    delivery.status = DeliveryStatus.pending;
    delivery.nextAttemptAt = this.runtime.dispatcher?.now() ?? new Date();
    await this.em.flush();
    this.runtime.dispatcher?.nudge();
    return delivery;
  }

  private async withAttempts(deliveries: WebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const attempts = await this.em.find(WebhookDeliveryAttempt, { deliveryId: { $in: deliveries.map((d) => d.id) } }, { orderBy: { number: 'asc', attemptedAt: 'asc' } });
    const byDelivery = new Map(deliveries.map((d) => [d.id, d] as const));
    for (const d of deliveries) d.attempts = [];
    for (const a of attempts) byDelivery.get(a.deliveryId)?.attempts.push(a);
  }
}
