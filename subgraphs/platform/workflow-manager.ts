import { request } from 'undici';
import type { BusMessage } from '../../kernel/bus.js';
import { signInternalToken } from '../../kernel/identity.js';

/** Where cluster notices go on workflow-manager (its contract is ours to define: see the README). */
export const CLUSTER_EVENTS_PATH = '/api/v1/internal/cluster-events';

/**
 * Sends the outbox's workflow-manager notices over HTTP: a POST per notice with the platform's
 * internal token and the outbox id as `Idempotency-Key`. Anything but a 2xx within 10 s throws, so
 * the relay retries it with backoff while workflow-manager is down.
 */
export function workflowManagerPublisher(baseUrl: string, internalJwtSecret: string) {
  return {
    async publish(message: BusMessage): Promise<void> {
      const token = await signInternalToken({ subject: 'platform-api', tenantId: null, roles: ['service_account'], scopes: ['admin'] }, internalJwtSecret);
      const response = await request(`${baseUrl}${CLUSTER_EVENTS_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': message.messageId },
        body: JSON.stringify({ event: message.routingKey, ...message.body }),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await response.body.dump();
      if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`workflow-manager answered ${response.statusCode}`);
    },
  };
}
