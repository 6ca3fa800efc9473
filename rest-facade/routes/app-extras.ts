import { DEPLOYMENT_FIELDS } from './apps.js';
import type { RestRoute } from './route.js';

/** A revision with what the platform keeps about it. */
const REVISION_FIELDS = /* GraphQL */ `${DEPLOYMENT_FIELDS} tags notes`;
/** The app's configuration as set (what `PUT …/config` takes, plus the address the platform computed). */
const CONFIG_FIELDS = /* GraphQL */ `id name image port resources { cpuRequest memoryRequest } tls domain address replicas stoppedReplicas autoscaling { minReplicas maxReplicas targetCpuPercent } env { name value secret } healthCheck { path port initialDelaySecs periodSecs } generation updatedAt`;
const POD_FIELDS = /* GraphQL */ `vcluster namespace name phase status ready restarts node ip images createdAt`;
const EVENT_FIELDS = /* GraphQL */ `vcluster namespace name type reason message involvedObject { kind name namespace } count source firstTimestamp lastTimestamp`;

const LIVE =
  'Read live from the app\'s virtual cluster: 503 `upstream_unavailable` when it cannot be reached. Another tenant\'s app is 404.';
const REVISION =
  '`{deploymentId}` is a deployment id (the ReplicaSet\'s name, as `GET …/deployments` lists it) or a revision number. 404 for a revision the app does not have, 409 while the app has never been deployed.';

const app = (r: Omit<RestRoute, 'prefix'>): RestRoute => ({ prefix: 'platform', ...r });

/** Around apps (spec 4.1): one revision, its export, tags and notes, comparisons; configuration; pods, events, metrics and logs. */
export const appExtraRoutes: RestRoute[] = [
  // Static segments win over parameters in the edge's router: `compare` is never a deployment id.
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/deployments/compare',
    summary: 'Compare two revisions',
    description: `\`from\` and \`to\` (both required: revision numbers or deployment ids). Answers both revisions and \`differences\` \`[{field, change, from, to}]\` from the first to the second over \`image\`, \`port\`, each \`env.<NAME>\` (added, removed, changed; values as strings; a secret value is never shown — it appears as \`(secret)\` — and a change of a secret's value alone cannot be seen, since every revision reads the same Secret), \`resources.cpu_request\`, \`resources.memory_request\` and \`replicas\` (what the Deployment wanted while the revision was current). ${REVISION} ${LIVE}`,
    scope: 'read',
    query: ['from', 'to'],
    operation: /* GraphQL */ `query AppDeploymentComparison($id: ID!, $from: String, $to: String) { appDeploymentComparison(id: $id, from: $from, to: $to) { from { ${REVISION_FIELDS} } to { ${REVISION_FIELDS} } differences { field change from to } } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/deployments/{deploymentId}',
    summary: 'One revision of an app',
    description: `What the ReplicaSet ran (image, port, env with secret values masked, resources, replicas, created_at, current) and the \`tags\` and \`notes\` kept for it. ${REVISION} ${LIVE}`,
    scope: 'read',
    operation: /* GraphQL */ `query AppDeployment($id: ID!, $deploymentId: String!) { appDeployment(id: $id, deploymentId: $deploymentId) { ${REVISION_FIELDS} } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/deployments/{deploymentId}/export',
    summary: 'Export a revision\'s configuration',
    description: `\`format\` \`yaml\` (default) or \`json\`. Answers JSON \`{format, filename, content_type, content}\`: \`content\` is the document — \`app\`, \`app_id\`, \`cloudspace_id\`, \`vcluster\`, \`revision\`, \`deployment_id\`, \`created_at\` and \`config\` in the shape of \`PUT /apps/{id}\` (\`source\`, \`port\`, \`replicas\`, \`resources\`, \`env\`, \`health_check\`). Secret values are never exported (\`value: null\`): set them before applying it again. ${REVISION} ${LIVE}`,
    scope: 'read',
    query: ['format'],
    operation: /* GraphQL */ `query AppDeploymentExport($id: ID!, $deploymentId: String!, $format: AppExportFormat) { appDeploymentExport(id: $id, deploymentId: $deploymentId, format: $format) { format filename contentType content } }`,
  }),
  app({
    method: 'POST',
    path: '/api/v1/apps/{id}/deployments/{deploymentId}/tags',
    summary: 'Tag a revision',
    description: `\`{"tags": [...]}\`: adds them (a tag already there is kept once). A tag is 1 to 40 letters, digits, \`.\`, \`_\` or \`-\`; a revision has at most 20. Kept by the platform per app and revision number. Answers the revision. ${REVISION}`,
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation AddAppDeploymentTags($id: ID!, $deploymentId: String!, $input: AppDeploymentTagsInput!) { addAppDeploymentTags(id: $id, deploymentId: $deploymentId, input: $input) { ${REVISION_FIELDS} } }`,
  }),
  app({
    method: 'PUT',
    path: '/api/v1/apps/{id}/deployments/{deploymentId}/notes',
    summary: 'Set a revision\'s notes',
    description: `\`{"notes": "..."}\` (at most 4000 characters; empty clears them). Answers the revision. ${REVISION}`,
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation SetAppDeploymentNotes($id: ID!, $deploymentId: String!, $input: AppDeploymentNotesInput!) { setAppDeploymentNotes(id: $id, deploymentId: $deploymentId, input: $input) { ${REVISION_FIELDS} } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/config',
    summary: 'An app\'s configuration',
    description: 'As set: image, port, resources, tls, domain, the computed address, replicas, autoscaling, environment (secret values masked: null) and health check. GraphQL: `app(id)`.',
    scope: 'read',
    operation: /* GraphQL */ `query AppConfig($id: ID!) { app(id: $id) { ${CONFIG_FIELDS} } }`,
  }),
  app({
    method: 'PUT',
    path: '/api/v1/apps/{id}/config',
    summary: 'Change an app\'s configuration',
    description: 'The same as `PUT /apps/{id}`: any of the create fields except `name` and `cloudspace_id` (the image as `source` `{"type": "image", "image"}`); the change is committed to Git and rolled out. Answers the configuration. GraphQL: `updateApp`.',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation UpdateAppConfig($id: ID!, $input: UpdateAppInput!) { updateApp(id: $id, input: $input) { ${CONFIG_FIELDS} } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/config/env-vars',
    summary: 'An app\'s environment',
    description: '`{"env": [{name, value, secret}]}`, secret values masked (null) — what `PUT` takes back, with the secret values filled in.',
    scope: 'read',
    operation: /* GraphQL */ `query AppEnvVars($id: ID!) { app(id: $id) { env { name value secret } } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/pods',
    summary: 'An app\'s pods',
    description: `The pods of the app's Deployment (every revision still running), summarised as the CloudSpace-wide view does, by name. ${LIVE}`,
    scope: 'read',
    paginated: true,
    operation: /* GraphQL */ `query AppPods($id: ID!, $limit: Int, $cursor: String) { appPods(id: $id, limit: $limit, cursor: $cursor) { data { ${POD_FIELDS} } nextCursor total } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/events',
    summary: 'An app\'s events',
    description: `Events about the app's Deployment, its ReplicaSets and their pods, oldest first by \`last_timestamp\`. ${LIVE}`,
    scope: 'read',
    paginated: true,
    operation: /* GraphQL */ `query AppEvents($id: ID!, $limit: Int, $cursor: String) { appEvents(id: $id, limit: $limit, cursor: $cursor) { data { ${EVENT_FIELDS} } nextCursor total } }`,
  }),
  app({
    method: 'GET',
    path: '/api/v1/apps/{id}/metrics',
    summary: 'An app\'s CPU and memory use',
    description: `From \`metrics.k8s.io/v1beta1\` PodMetrics of the app's running pods: per pod (and container) \`cpu_millicores\`, \`memory_bytes\` and, as \`kubectl top\` shows them, \`cpu\` and \`memory\`; \`totals\` over the pods. 503 also when the virtual cluster serves no metrics API. ${LIVE}`,
    scope: 'read',
    operation: /* GraphQL */ `query AppMetrics($id: ID!) { appMetrics(id: $id) { vcluster namespace pods { pod cpuMillicores memoryBytes cpu memory containers { name cpuMillicores memoryBytes } timestamp window } totals { pods cpuMillicores memoryBytes cpu memory } } }`,
  }),
  {
    prefix: 'platform',
    method: 'GET',
    path: '/api/v1/apps/{id}/logs',
    summary: 'An app\'s logs',
    description:
      `The log of one of the app's pods: \`pod\` (404 when it is not the app's; default: the app's newest ready pod, else its newest), \`container\` (default: the pod's default container, else its first), \`tail\` (default 100, 0 to 10000), \`since_seconds\`, \`timestamps\`. Answers JSON \`{vcluster, namespace, pod, container, lines}\`, lines oldest first. With \`follow=true\` the answer is instead \`text/plain; charset=utf-8\`, streamed chunk by chunk: the same last lines, then each new line as the container writes it, until the pod goes or the client closes the connection; errors before the first byte are the usual JSON envelope. 409 while the app has no pods or the container has not started. ${LIVE}`,
    scope: 'read',
    query: ['pod', 'container', 'tail', 'since_seconds', 'timestamps'],
    stream: { param: 'follow', subgraph: 'platform', path: '/_edge/apps/{id}/logs' },
    operation: /* GraphQL */ `query AppLogs($id: ID!, $pod: String, $container: String, $tail: Int, $sinceSeconds: Int, $timestamps: Boolean) { appLogs(id: $id, pod: $pod, container: $container, tail: $tail, sinceSeconds: $sinceSeconds, timestamps: $timestamps) { vcluster namespace pod container lines } }`,
  },
];
