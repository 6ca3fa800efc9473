import type { FastifyRequest } from 'fastify';
import type { Prefix, RestRoute } from './route.js';

const PIPELINE_FIELDS = /* GraphQL */ `id tenantId name repository branch provider triggerEvents deployClusterId webhookUrl createdAt updatedAt`;
const STAGE_FIELDS = /* GraphQL */ `id name status startedAt finishedAt errorMessage logExcerpt exitCode logUrl durationSecs`;
const RUN_FIELDS = /* GraphQL */ `id pipelineId status triggerType commit branch author message startedAt finishedAt durationSecs clusterId createdAt updatedAt stages { ${STAGE_FIELDS} }`;
const SUMMARY_FIELDS = /* GraphQL */ `runs succeeded failed cancelled inProgress successRate averageDurationSecs since`;
const SECRETS_FIELDS = /* GraphQL */ `webhookSecret reportingToken webhookUrl pipeline { ${PIPELINE_FIELDS} }`;

/**
 * The pipeline routes users call (spec 4.3 and 4.4), served both under `/cicd` and at the
 * platform front door `/platform`: the same persisted operations, the tenant from the token.
 */
function pipelineRoutes(prefix: Prefix): RestRoute[] {
  const r = (route: Omit<RestRoute, 'prefix'>): RestRoute => ({ prefix, ...route });
  return [
    r({
      method: 'GET',
      path: '/api/v1/pipelines',
      summary: 'List pipelines',
      scope: 'read',
      paginated: true,
      operation: /* GraphQL */ `query Pipelines($limit: Int, $cursor: String) { pipelines(limit: $limit, cursor: $cursor) { data { ${PIPELINE_FIELDS} } nextCursor total } }`,
    }),
    r({
      method: 'POST',
      path: '/api/v1/pipelines',
      summary: 'Create a pipeline',
      description:
        'Answers the pipeline with its webhook secret, its reporting token (X-Pipeline-Token) and the webhook URL to give the Git host, shown this once. The webhook secret is stored encrypted (AES-256-GCM), the token as a hash.',
      scope: 'deploy',
      body: 'input',
      status: 201,
      noStore: true,
      operation: /* GraphQL */ `mutation CreatePipeline($input: CreatePipelineInput!) { createPipeline(input: $input) { ${SECRETS_FIELDS} } }`,
    }),
    r({
      method: 'GET',
      path: '/api/v1/pipelines/summary',
      summary: '7-day summary of all pipelines',
      description: 'Runs, outcomes, success rate (successes over finished runs) and average duration of finished runs, over the last 7 days.',
      scope: 'read',
      operation: /* GraphQL */ `query PipelinesSummary { pipelinesSummary { ${SUMMARY_FIELDS} } }`,
    }),
    r({
      method: 'GET',
      path: '/api/v1/pipelines/{id}',
      summary: 'One pipeline',
      scope: 'read',
      operation: /* GraphQL */ `query Pipeline($id: ID!) { pipeline(id: $id) { ${PIPELINE_FIELDS} } }`,
    }),
    r({
      method: 'PATCH',
      path: '/api/v1/pipelines/{id}',
      summary: 'Update a pipeline',
      scope: 'deploy',
      body: 'input',
      operation: /* GraphQL */ `mutation UpdatePipeline($id: ID!, $input: UpdatePipelineInput!) { updatePipeline(id: $id, input: $input) { ${PIPELINE_FIELDS} } }`,
    }),
    r({
      method: 'DELETE',
      path: '/api/v1/pipelines/{id}',
      summary: 'Delete a pipeline and its runs',
      scope: 'deploy',
      status: 204,
      operation: /* GraphQL */ `mutation DeletePipeline($id: ID!) { deletePipeline(id: $id) }`,
    }),
    r({
      method: 'POST',
      path: '/api/v1/pipelines/{id}/rotate-secrets',
      summary: 'Rotate the webhook secret and the reporting token',
      description: 'The new ones are shown this once; the old ones stop working at once.',
      scope: 'deploy',
      noStore: true,
      operation: /* GraphQL */ `mutation RotatePipelineSecrets($id: ID!) { rotatePipelineSecrets(id: $id) { ${SECRETS_FIELDS} } }`,
    }),
    r({
      method: 'GET',
      path: '/api/v1/pipelines/{id}/runs',
      summary: 'Run history',
      description: 'Newest first, with stages.',
      scope: 'read',
      paginated: true,
      operation: /* GraphQL */ `query PipelineRuns($id: ID!, $limit: Int, $cursor: String) { pipelineRuns(pipelineId: $id, limit: $limit, cursor: $cursor) { data { ${RUN_FIELDS} } nextCursor total } }`,
    }),
    r({
      method: 'GET',
      path: '/api/v1/pipelines/{id}/runs/find',
      summary: 'Find the run of a commit',
      scope: 'read',
      query: ['commit'],
      operation: /* GraphQL */ `query PipelineRunByCommit($id: ID!, $commit: String!) { pipelineRunByCommit(pipelineId: $id, commit: $commit) { ${RUN_FIELDS} } }`,
    }),
    r({
      method: 'GET',
      path: '/api/v1/pipelines/{id}/runs/summary',
      summary: '7-day summary of one pipeline',
      scope: 'read',
      operation: /* GraphQL */ `query PipelineRunsSummary($id: ID!) { pipelineRunsSummary(pipelineId: $id) { ${SUMMARY_FIELDS} } }`,
    }),
  ];
}

const header = (request: FastifyRequest, ...names: string[]): string | null => {
  for (const name of names) {
    const value = request.headers[name];
    if (typeof value === 'string' && value) return value;
  }
  return null;
};

const webhook = (provider: 'host_a' | 'host_b', description: string): RestRoute => ({
  prefix: 'cicd',
  method: 'POST',
  path: `/webhook/${provider}`,
  summary: `Inbound ${provider} webhook`,
  description,
  auth: 'public',
  credentials: 'none',
  rawBody: true,
  variables: (request) => ({
    input: {
      provider,
      payload: request.rawBody ?? '',
      signature: header(request, 'x-hub-signature-256'),
      token: header(request, 'x-git-token'),
      event: header(request, 'x-github-event', 'x-hub-event', 'x-git-event'),
      deliveryId: header(request, 'x-github-delivery', 'x-hub-delivery', 'x-git-delivery', 'x-gitlab-event-uuid', 'idempotency-key'),
    },
  }),
  operation: /* GraphQL */ `mutation ReceiveGitWebhook($input: GitWebhookInput!) { receiveGitWebhook(input: $input) { outcome event reason runs { pipelineId runId status } } }`,
});

/** cicd-gateway routes (spec 4.4), under `{base}/cicd`. */
export const cicdRoutes: RestRoute[] = [
  ...pipelineRoutes('cicd'),
  {
    prefix: 'cicd',
    method: 'POST',
    path: '/api/v1/pipelines/{id}/runs',
    summary: 'Create a run (reporting token)',
    description: 'Authenticated by `X-Pipeline-Token` (no bearer token). Status defaults to queued.',
    auth: 'public',
    credentials: 'none',
    headerVariables: { token: ['x-pipeline-token'] },
    body: 'input',
    status: 201,
    operation: /* GraphQL */ `mutation ReportPipelineRun($id: ID!, $token: String!, $input: CreateRunInput!) { reportPipelineRun(pipelineId: $id, token: $token, input: $input) { ${RUN_FIELDS} } }`,
  },
  {
    prefix: 'cicd',
    method: 'PATCH',
    path: '/api/v1/runs/{runId}',
    summary: 'Update a run and its stages (reporting token)',
    description:
      'Authenticated by `X-Pipeline-Token`. Body: the run report (`status`, `finished_at`, `stages[{name, status, duration_secs, ...}]`). Stages are matched by name; new ones are appended. Status moves queued → running → success | failed | cancelled; a finished run does not change status again (409 `invalid_transition`). Another pipeline\'s run is `not_found`.',
    auth: 'public',
    credentials: 'none',
    headerVariables: { token: ['x-pipeline-token'] },
    body: 'input',
    operation: /* GraphQL */ `mutation UpdatePipelineRun($runId: ID!, $token: String!, $input: RunReportInput!) { updatePipelineRun(runId: $runId, token: $token, input: $input) { ${RUN_FIELDS} } }`,
  },
  webhook(
    'host_a',
    'Verified by `X-Hub-Signature-256` (`sha256=` + HMAC-SHA256 of the raw body with the pipeline\'s webhook secret). Records `push` (a queued run), `workflow_run` and `check_suite` (updates to the run of the commit). Idempotent on the delivery id header. Unknown repository: 404; bad signature: 401; other events: 200 with `outcome: ignored`.',
  ),
  webhook(
    'host_b',
    'Verified by `X-Git-Token` (equal to the pipeline\'s webhook secret). Records `pipeline` events (run and jobs as stages). Idempotent on the delivery id header.',
  ),
];

/** The platform front door for pipelines (spec 4.3). */
export const platformPipelineRoutes: RestRoute[] = pipelineRoutes('platform');
