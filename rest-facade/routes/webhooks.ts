import type { RestRoute } from './route.js';

const FIELDS = /* GraphQL */ `id tenantId url events clusterIds cloudspaceIds description enabled previousSecretExpiresAt createdAt updatedAt`;

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
];
