import type { EntityManager } from '@mikro-orm/postgresql';
import { findByIdOrNotFound } from '../../../kernel/db.js';
import { randomBytes } from 'node:crypto';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { EVENT_TYPE_NAMES } from '../../../kernel/event-catalogue.js';
import type { Identity } from '../../../kernel/identity.js';
import { pageNewestFirst, type PageOfRows } from '../../../kernel/pagination.js';
import type { PlatformRuntime } from '../runtime.js';
import { WebhookSubscription } from './webhook.entity.js';

export interface SubscriptionFields {
  url?: string | null;
  events?: string[] | null;
  clusterIds?: string[] | null;
  cloudspaceIds?: string[] | null;
  description?: string | null;
  enabled?: boolean | null;
}

export interface SubscriptionWithSecret {
  subscription: WebhookSubscription;
  /** Shown this once. */
  secret: string;
}

/** How long a rotated-out secret keeps signing by default, and at most. */
export const ROTATION_OVERLAP_SECS = { default: 24 * 3600, max: 7 * 24 * 3600 } as const;

export const secretPurpose = (id: string) => `platform.webhook.secret:${id}`;

function checkUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new AppError(ErrorCodes.validationFailed, 'url is not a valid URL');
  }
  if (url.protocol !== 'https:') throw new AppError(ErrorCodes.validationFailed, 'url must use https');
  if (url.username || url.password) throw new AppError(ErrorCodes.validationFailed, 'url must not carry credentials');
  if (url.href.length > 2048) throw new AppError(ErrorCodes.validationFailed, 'url is longer than 2048 characters');
  return url.href;
}

function checkEvents(events: readonly string[]): string[] {
  if (events.length === 0) throw new AppError(ErrorCodes.validationFailed, 'events must name at least one event type, or "*" for all');
  if (events.includes('*')) return ['*'];
  const unknown = events.filter((e) => !EVENT_TYPE_NAMES.includes(e));
  if (unknown.length > 0) throw new AppError(ErrorCodes.validationFailed, `unknown event types: ${unknown.join(', ')} (see /api/openapi.json webhooks)`);
  return [...new Set(events)].sort();
}

function checkIds(ids: readonly string[] | null | undefined, what: string): string[] | null {
  if (ids === null || ids === undefined) return null;
  if (ids.length === 0) return null;
  if (ids.some((id) => !id || id.length > 100)) throw new AppError(ErrorCodes.validationFailed, `${what} must be ids of at most 100 characters`);
  return [...new Set(ids)];
}

/** Outbound webhook subscriptions of the caller's tenant. */
export class WebhookSubscriptionService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {}

  list(args: { limit?: number | null; cursor?: string | null }): Promise<PageOfRows<WebhookSubscription>> {
    return pageNewestFirst<WebhookSubscription>(this.em, WebhookSubscription, 'webhook_subscriptions', {}, args);
  }

  async get(id: string): Promise<WebhookSubscription> {
    return findByIdOrNotFound(this.em, WebhookSubscription, id, 'webhook subscription');
  }

  async create(input: SubscriptionFields & { url: string }): Promise<SubscriptionWithSecret> {
    const tenantId = this.identity.tenantId;
    if (!tenantId) throw new AppError(ErrorCodes.validationFailed, 'subscriptions belong to a tenant; a platform-wide account has none');
    const secret = newSecret();
    const subscription = this.em.create(WebhookSubscription, {
      tenantId,
      url: checkUrl(input.url),
      events: checkEvents(input.events ?? ['*']),
      clusterIds: checkIds(input.clusterIds, 'cluster_ids'),
      cloudspaceIds: checkIds(input.cloudspaceIds, 'cloudspace_ids'),
      description: (input.description ?? '').trim().slice(0, 500),
      enabled: input.enabled ?? true,
      secretSealed: '',
    });
    subscription.secretSealed = this.runtime.box.seal(secret, secretPurpose(subscription.id));
    await this.em.flush();
    return { subscription, secret };
  }

  async update(id: string, input: SubscriptionFields): Promise<WebhookSubscription> {
    const subscription = await this.get(id);
    if (input.url) subscription.url = checkUrl(input.url);
    if (input.events) subscription.events = checkEvents(input.events);
    if (input.clusterIds !== undefined) subscription.clusterIds = checkIds(input.clusterIds, 'cluster_ids');
    if (input.cloudspaceIds !== undefined) subscription.cloudspaceIds = checkIds(input.cloudspaceIds, 'cloudspace_ids');
    if (input.description !== undefined && input.description !== null) subscription.description = input.description.trim().slice(0, 500);
    if (input.enabled !== undefined && input.enabled !== null) subscription.enabled = input.enabled;
    subscription.updatedAt = new Date();
    await this.em.flush();
    return subscription;
  }

  async remove(id: string): Promise<void> {
    const subscription = await this.get(id);
    // Its delivery log goes with it, in one transaction.
    await this.em.transactional(async (em) => {
      const knex = em.getConnection().getKnex();
      const deliveries = knex('platform.webhook_delivery').select('id').where({ subscription_id: subscription.id });
      await em.execute(knex('platform.webhook_delivery_attempt').whereIn('delivery_id', deliveries).delete());
      await em.execute(knex('platform.webhook_delivery').where({ subscription_id: subscription.id }).delete());
      await em.nativeDelete(WebhookSubscription, { id: subscription.id });
    });
  }

  /**
   * A new signing secret. The old one keeps signing too (a second `v1=` in Service-Signature,
   * as Stripe does) for `overlapSecs`, so receivers can switch without missing deliveries.
   */
  async rotateSecret(id: string, overlapSecs?: number | null): Promise<SubscriptionWithSecret> {
    const subscription = await this.get(id);
    const overlap = overlapSecs ?? ROTATION_OVERLAP_SECS.default;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > ROTATION_OVERLAP_SECS.max) {
      throw new AppError(ErrorCodes.validationFailed, `overlap_secs must be 0 to ${ROTATION_OVERLAP_SECS.max}`);
    }
    const secret = newSecret();
    const current = this.runtime.box.open(subscription.secretSealed, secretPurpose(subscription.id));
    subscription.previousSecretSealed = overlap > 0 ? this.runtime.box.seal(current, secretPurpose(subscription.id)) : null;
    subscription.previousSecretExpiresAt = overlap > 0 ? new Date(Date.now() + overlap * 1000) : null;
    subscription.secretSealed = this.runtime.box.seal(secret, secretPurpose(subscription.id));
    subscription.updatedAt = new Date();
    await this.em.flush();
    return { subscription, secret };
  }
}

/** `whsec_` and 32 random bytes, the form webhook libraries expect. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
