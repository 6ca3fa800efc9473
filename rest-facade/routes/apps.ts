import type { RestRoute } from './route.js';

export const APP_FIELDS = /* GraphQL */ `id tenantId cloudspaceId name vcluster image port resources { cpuRequest memoryRequest } tls domain address replicas stoppedReplicas autoscaling { minReplicas maxReplicas targetCpuPercent } env { name value secret } healthCheck { path port initialDelaySecs periodSecs } generation phase message lastCommit lastCommitAt createdAt updatedAt`;
/** Live from the virtual cluster: on the list and the detail, not on every answer that carries an app. */
const WORKLOAD_FIELDS = /* GraphQL */ `workload { replicas readyReplicas updatedReplicas availableReplicas revision }`;
export const DEPLOYMENT_FIELDS = /* GraphQL */ `id revision image port env { name value secret } resources { cpuRequest memoryRequest } replicas readyReplicas createdAt current`;

const app = (r: Omit<RestRoute, 'prefix'>): RestRoute => ({ prefix: 'platform', ...r });
const byId = (name: string, field: string, summary: string, extra: Partial<RestRoute> = {}): RestRoute =>
  app({
    method: 'POST',
    path: `/api/v1/apps/{id}/${name}`,
    summary,
    scope: 'deploy',
    operation: /* GraphQL */ `mutation ${field[0]!.toUpperCase()}${field.slice(1)}($id: ID!) { ${field}(id: $id) { ${APP_FIELDS} } }`,
    ...extra,
  });

/** Apps (spec 1, 4.1), under `{base}/platform`. */
export const appRoutes: RestRoute[] = [
  app({
    method: 'GET',
    path: '/api/v1/apps',
    summary: 'List apps',
    description: 'Newest first; `cloudspace_id` filters. Each app carries `workload`, read live from its virtual cluster (null before it is applied or while the virtual cluster does not answer).',
    scope: 'read',
    paginated: true,
    query: ['cloudspace_id'],
    operation: /* GraphQL */ `query Apps($cloudspaceId: ID, $limit: Int, $cursor: String) { apps(cloudspaceId: $cloudspaceId, limit: $limit, cursor: $cursor) { data { ${APP_FIELDS} ${WORKLOAD_FIELDS} } nextCursor total } }`,
  }),
  app({
    method: 'POST',
    path: '/api/v1/apps',
    summary: 'Create an app (one atomic request)',
    description:
      'Everything about the app at once: `name`, `cloudspace_id`, `source` `{"type": "image", "image"}`, `port`, `resources` `{cpu_request, memory_request}` (Kubernetes quantities), `tls`, optional `tenant_cr_name` (the virtual cluster), `domain`, `replicas`, `autoscaling` `{min_replicas, max_replicas, target_cpu_percent}`, `env` `[{name, value, secret}]` (secret values are write-only, kept out of Git) and `health_check` `{path, port, initial_delay_secs, period_secs}`. The address is computed here: `<app>-<cloudspace>.{apps_base_domain}` or the custom domain. The app and its PlatformApp resource are coordinated through the outbox: it is created once the API server answers, never twice. Follow `GET .../deploy-status`.',
    scope: 'deploy',
    body: 'input',
    status: 201,
    operation: /* GraphQL */ `mutation CreateApp($input: CreateAppInput!) { createApp(input: $input) { ${APP_FIELDS} } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}',
    summary: 'One app, with its live workload',
    scope: 'read',
    operation: /* GraphQL */ `query App($id: ID!) { app(id: $id) { ${APP_FIELDS} ${WORKLOAD_FIELDS} } }`,
  }),
  app({
    method: 'PUT',
    path: '/api/v1/apps/{id}',
    summary: 'Change an app\'s configuration',
    description: 'Any of the create fields except `name` and `cloudspace_id`; the change is committed to Git and rolled out.',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation UpdateApp($id: ID!, $input: UpdateAppInput!) { updateApp(id: $id, input: $input) { ${APP_FIELDS} } }`,
  }),
  app({
    method: 'DELETE',
    path: '/api/v1/apps/{id}',
    summary: 'Delete an app',
    description: 'Answers 202 (phase Deleting): the resource goes, the removal is committed, what the app created in its virtual cluster is removed, `app.deleted` is emitted.',
    scope: 'deploy',
    status: 202,
    operation: /* GraphQL */ `mutation DeleteApp($id: ID!) { deleteApp(id: $id) { ${APP_FIELDS} } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/deploy-status',
    summary: 'Deploy status: GitOps sync, workload readiness, reachability',
    description:
      'Checked in order: `gitops` (Synced when the latest commit is applied; OutOfSync; Unknown), workload readiness in the virtual cluster (`ready_replicas`), then an HTTPS request to the address (`reachable`). `phase`: Pending (not yet committed), Syncing (committed, not applied), Deploying (rolling out), Verifying (ready, not reachable yet), Running (reachable), Failed (`failure`: image_pull, crash_loop, progress_deadline), Stopped, Deleting.',
    scope: 'read',
    operation: /* GraphQL */ `query AppDeployStatus($id: ID!) { appDeployStatus(id: $id) { phase gitops readyReplicas desiredReplicas reachable revision commit appliedRevision failure message } }`,
  }),
  app({
    method: 'POST',
    path: '/api/v1/apps/{id}/scale',
    summary: 'Scale now (and in Git)',
    description: '`{"replicas"}` (0–100). Refused (409) while autoscaling manages replicas.',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation ScaleApp($id: ID!, $input: ScaleInput!) { scaleApp(id: $id, input: $input) { ${APP_FIELDS} } }`,
  }),
  byId('restart', 'restartApp', 'Restart now (and in Git)'),
  byId('stop', 'stopApp', 'Stop now (replicas 0, remembered; and in Git)'),
  byId('start', 'startApp', 'Start again with the remembered replicas (and in Git)'),
  app({
    method: 'POST',
    path: '/api/v1/apps/{id}/rollback',
    summary: 'Roll back to a revision',
    description: '`{"revision"}` or `{"deployment_id"}`: that revision\'s image, port, environment and resources become desired state and go through Git; a new revision records the rollback. The answer names the revision rolled back to.',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation RollbackApp($id: ID!, $input: RollbackInput!) { rollbackApp(id: $id, input: $input) { rolledBackTo app { ${APP_FIELDS} } } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/deployments',
    summary: 'Revisions of an app',
    description: 'From the ReplicaSets in the virtual cluster, newest first: revision, image, port, env (secret values masked), resources, replicas, created_at, current, and the `tags` and `notes` kept for it.',
    scope: 'read',
    operation: /* GraphQL */ `query AppDeployments($id: ID!) { appDeployments(id: $id) { ${DEPLOYMENT_FIELDS} tags notes } }`,
  }),
  app({
    method: 'PATCH',
    path: '/api/v1/apps/{id}/domain',
    summary: 'Set or clear the custom domain',
    description: '`{"domain"}`; null goes back to the platform address.',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation UpdateAppDomain($id: ID!, $input: DomainInput!) { updateAppDomain(id: $id, input: $input) { ${APP_FIELDS} } }`,
  }),
  app({
    method: 'PUT',
    path: '/api/v1/apps/{id}/config/env-vars',
    summary: 'Replace the environment',
    description: '`{"env": [{name, value, secret}]}`; secret values are write-only and masked on read.',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation UpdateAppEnv($id: ID!, $input: EnvVarsInput!) { updateAppEnv(id: $id, input: $input) { ${APP_FIELDS} } }`,
  }),
];
