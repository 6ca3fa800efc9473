import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { EXCHANGES } from '../../kernel/bus.js';
import { enqueue } from '../../kernel/outbox.js';
import type { PlatformRuntime } from './runtime.js';

/** The outbox "exchange" of notices to workflow-manager, relayed over HTTP instead of the bus. */
export const WORKFLOW_MANAGER_EXCHANGE = 'workflow-manager';

/**
 * Queues a catalogue event (spec 6) in the caller's unit of work; the relay publishes it to
 * `platform.events` after the commit. Events belong to a tenant: platform-wide objects (no
 * tenant) have no subscribers, so nothing is queued for them.
 */
export function queuePlatformEvent(em: EntityManager, type: string, tenantId: string | null, data: Record<string, unknown>): void {
  if (!tenantId) return;
  const id = randomUUID();
  enqueue(em, EXCHANGES.platform, type, { id, type, occurred_at: new Date().toISOString(), tenant_id: tenantId, data }, id);
}

/**
 * Queues a notice to workflow-manager (a cluster was registered, connected or removed, spec 1
 * behaviour 8), sent right after the commit and retried through the outbox while it is down.
 * Without WORKFLOW_MANAGER_URL it is skipped, with a log line.
 */
export function queueWorkflowManagerNotice(em: EntityManager, runtime: PlatformRuntime, action: 'registered' | 'connected' | 'removed', cluster: Record<string, unknown>): void {
  if (!runtime.config.workflowManagerUrl) {
    runtime.logger?.info({ action, cluster: cluster.id }, 'WORKFLOW_MANAGER_URL is not set; workflow-manager is not told about the cluster change');
    return;
  }
  enqueue(em, WORKFLOW_MANAGER_EXCHANGE, `cluster.${action}`, { action, cluster, occurred_at: new Date().toISOString() });
}
