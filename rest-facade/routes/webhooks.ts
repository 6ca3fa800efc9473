import type { RestRoute } from './route.js';

const FIELDS = /* GraphQL */ `id tenantId url events clusterIds cloudspaceIds description enabled previousSecretExpiresAt createdAt updatedAt`;

const DELIVERY_FIELDS = /* GraphQL */ `id subscriptionId eventId eventType status attemptCount nextAttemptAt occurredAt createdAt lastAttemptAt lastStatusCode event attempts { number attemptedAt durationMs statusCode responseExcerpt error succeeded }`;

const route = (r: Omit<RestRoute, 'prefix'>): RestRoute => ({ prefix: 'platform', ...r });

/** Outbound webhook subscriptions (spec 4.6), under `{base}/platform`. */
export const webhookRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/webhooks',
    summary: 'List webhook subscriptions',
    scope: 'read',
    paginated: true,
    operation: /* GraphQL */ `query WebhookSubscriptions($limit: Int, $cursor: String) { webhookSubscriptions(limit: $limit, cursor: $cursor) { data { ${FIELDS} } nextCursor total } }`,
  }),
  route({
    method: 'POST',
    path: '/api/v1/webhooks',
    summary: 'Create a webhook subscription',
    description:
      '`url` (HTTPS), `events` (types of the event catalogue — see `webhooks` in this document — or `["*"]`, the default), optional `cluster_ids` and `cloudspace_ids` limits, `description`, `enabled`. The signing secret is in `secret`, shown this once.',
    scope: 'deploy',
    body: 'input',
    status: 201,
    noStore: true,
    operation: /* GraphQL */ `mutation CreateWebhookSubscription($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { secret subscription { ${FIELDS} } } }`,
  }),
  route({
    method: 'GET',
    path: '/api/v1/webhooks/{id}',
    summary: 'One webhook subscription',
    scope: 'read',
    operation: /* GraphQL */ `query WebhookSubscription($id: ID!) { webhookSubscription(id: $id) { ${FIELDS} } }`,
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/webhooks/{id}',
    summary: 'Update a webhook subscription',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation UpdateWebhookSubscription($id: ID!, $input: UpdateWebhookSubscriptionInput!) { updateWebhookSubscription(id: $id, input: $input) { ${FIELDS} } }`,
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/webhooks/{id}',
    summary: 'Delete a webhook subscription',
    scope: 'deploy',
    status: 204,
    operation: /* GraphQL */ `mutation DeleteWebhookSubscription($id: ID!) { deleteWebhookSubscription(id: $id) }`,
  }),
  route({
    method: 'POST',
    path: '/api/v1/webhooks/{id}/rotate-secret',
    summary: 'Rotate the signing secret',
    description:
      'Answers the new secret, shown this once. During `overlap_secs` (default 86400, at most 604800) deliveries are signed with both secrets — two `v1=` values in Service-Signature — so receivers can switch without downtime.',
    scope: 'deploy',
    body: 'input',
    noStore: true,
    operation: /* GraphQL */ `mutation RotateWebhookSecret($id: ID!, $input: RotateWebhookSecretInput) { rotateWebhookSecret(id: $id, input: $input) { secret subscription { ${FIELDS} } } }`,
  }),
  route({
    method: 'GET',
    path: '/api/v1/webhooks/{id}/deliveries',
    summary: 'Deliveries of a subscription, with their attempts',
    description:
      'Newest first; `status` filters (`pending`, `succeeded`, `failed`). Each delivery carries the event it sent and every attempt: time, status code, duration, the first 1 KiB of the answer and the error. Failed attempts are retried at 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 16 h and 23 h 45 min after the event; then the delivery is failed.',
    scope: 'read',
    paginated: true,
    query: ['status'],
    operation: /* GraphQL */ `query WebhookDeliveries($id: ID!, $status: WebhookDeliveryStatus, $limit: Int, $cursor: String) { webhookDeliveries(subscriptionId: $id, status: $status, limit: $limit, cursor: $cursor) { data { ${DELIVERY_FIELDS} } nextCursor total } }`,
  }),
  route({
    method: 'POST',
    path: '/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver',
    summary: 'Send a delivery again',
    description: 'Queues an attempt now, with the same event id and body. Answers 202 with the delivery; its attempts show the outcome.',
    scope: 'deploy',
    status: 202,
    operation: /* GraphQL */ `mutation RedeliverWebhookDelivery($id: ID!, $deliveryId: ID!) { redeliverWebhookDelivery(subscriptionId: $id, deliveryId: $deliveryId) { ${DELIVERY_FIELDS} } }`,
  }),
];
