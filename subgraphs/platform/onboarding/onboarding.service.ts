import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { App, AppPhase } from '../apps/app.entity.js';
import { CloudSpace, CloudSpaceStatus } from '../cloudspaces/cloudspace.entity.js';
import { CloudSpaceService } from '../cloudspaces/cloudspace.service.js';
import type { PlatformRuntime } from '../runtime.js';
import { WebhookSubscription } from '../webhooks/webhook.entity.js';

export interface ChecklistState {
  tenantId: string;
  cloudspaceCreated: boolean;
  cloudspaceReady: boolean;
  firstWebhook: boolean;
  firstCloudspaceId: string | null;
  firstApp: boolean;
  firstAppRunning: boolean;
}

/** A new tenant's first steps (spec 4.7), derived from what exists, never stored. */
export class OnboardingService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {}

  private tenant(): string {
    if (!this.identity.tenantId) throw new AppError(ErrorCodes.validationFailed, 'onboarding is for a tenant; a platform-wide account has none');
    return this.identity.tenantId;
  }

  /**
   * Provisions the tenant's first CloudSpace (`default`, or the name given). Idempotent: once the
   * tenant has a CloudSpace, that one is answered and nothing new is made.
   */
  async provision(input: { name?: string | null; cpuLimit?: string | null; memoryLimit?: string | null; podLimit?: number | null }): Promise<{ cloudspace: CloudSpace; created: boolean }> {
    this.tenant();
    const existing = await this.em.findOne(CloudSpace, {}, { orderBy: { createdAt: 'asc' } });
    if (existing) return { cloudspace: existing, created: false };
    const cloudspace = await new CloudSpaceService(this.em, this.identity, this.runtime).create({ ...input, name: input.name ?? 'default' });
    return { cloudspace, created: true };
  }

  async checklist(): Promise<ChecklistState> {
    const tenantId = this.tenant();
    const [spaces, webhooks, apps, running] = await Promise.all([
      this.em.find(CloudSpace, {}, { orderBy: { createdAt: 'asc' }, limit: 50 }),
      this.em.count(WebhookSubscription, {}),
      this.em.count(App, {}),
      this.em.count(App, { phase: AppPhase.Running }),
    ]);
    return {
      tenantId,
      cloudspaceCreated: spaces.length > 0,
      cloudspaceReady: spaces.some((s) => s.status === CloudSpaceStatus.Ready),
      firstWebhook: webhooks > 0,
      firstCloudspaceId: spaces[0]?.id ?? null,
      firstApp: apps > 0,
      firstAppRunning: running > 0,
    };
  }
}
