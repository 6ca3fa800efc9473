/**
 * The outbound webhook event catalogue (spec 6): the envelope every delivery carries and, per
 * event type, the shape of `data`. The `incident.*` fields are the spec's; the others are ours,
 * designed from what each event is for. `npm run schema` writes it to `schema/events.json` and into
 * the OpenAPI document's `webhooks`, so integrators read it where they read the API.
 */
type JsonSchema = Record<string, unknown>;

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const id = (what: string) => str(`Id of the ${what}.`);
const time = (description: string) => str(description, { format: 'date-time' });
const int = (description: string): JsonSchema => ({ type: 'integer', description });
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });

function object(properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties).filter((k) => !optional.includes(k)), additionalProperties: true };
}

const incident = object({
  incident_id: str('Id of the incident.'),
  cluster_id: str('Cluster the incident is on.'),
  title: str('Short title.'),
  severity: str('e.g. `critical`, `high`, `medium`, `low`.'),
  status: str('e.g. `open`, `acknowledged`, `resolved`.'),
  category: str('What kind of problem.'),
  namespace: str('Kubernetes namespace.'),
  affected_service: str('Service affected.'),
  url: str('Where to see it in the dashboard.', { format: 'uri' }),
});

const app = {
  app_id: id('app'),
  app_name: str('App name (DNS label).'),
  cloudspace_id: id('CloudSpace'),
  cluster_id: str('Cluster the app runs on.'),
};

const run = object({
  run_id: id('pipeline run'),
  pipeline_id: id('pipeline'),
  pipeline_name: str('Pipeline name.'),
  repository: str('Repository, owner/name.'),
  provider: str('`host_a`, `host_b` or `generic`.'),
  status: str('`success`, `failed` or `cancelled`.'),
  trigger_type: str('What started the run.'),
  commit: str('Commit SHA.'),
  branch: str('Branch.'),
  author: str('Who made the commit.'),
  message: str('Commit message.'),
  started_at: nullable(time('When the run started.')),
  finished_at: nullable(time('When the run finished.')),
  duration_secs: nullable(int('Seconds from start to finish.')),
  cluster_id: nullable(str('Cluster the run deployed to, when it deploys.')),
});

export interface EventType {
  description: string;
  /** Resource kinds the event can be limited by in a subscription. */
  scope: { cluster: boolean; cloudspace: boolean };
  data: JsonSchema;
}

export const EVENT_TYPES: Record<string, EventType> = {
  'incident.created': { description: 'An incident opens.', scope: { cluster: true, cloudspace: false }, data: incident },
  'incident.updated': { description: 'An incident changes.', scope: { cluster: true, cloudspace: false }, data: incident },
  'incident.resolved': { description: 'An incident is resolved.', scope: { cluster: true, cloudspace: false }, data: incident },
  'app.deployed': {
    description: 'An app revision becomes reachable.',
    scope: { cluster: true, cloudspace: true },
    data: object({ ...app, revision: int('Revision (ReplicaSet revision number).'), address: str('The app address.'), image: str('Image reference.'), deployed_at: time('When it became reachable.') }),
  },
  'app.deploy_failed': {
    description: 'An app revision fails to deploy.',
    scope: { cluster: true, cloudspace: true },
    data: object({ ...app, revision: int('Revision.'), reason: str('`image_pull`, `crash_loop` or `progress_deadline`.'), message: str('What the orchestrator said.') }),
  },
  'app.deleted': { description: 'An app is deleted.', scope: { cluster: true, cloudspace: true }, data: object(app) },
  'pipeline.run_completed': { description: 'A CI pipeline run finishes (success, failure or cancelled).', scope: { cluster: true, cloudspace: false }, data: run },
  'build.completed': {
    description: 'An image build finishes.',
    scope: { cluster: false, cloudspace: true },
    data: object(
      { build_id: id('build'), app_id: nullable(id('app the build is for')), cloudspace_id: nullable(id('CloudSpace')), image: str('Image reference built.'), status: str('`success` or `failed`.'), commit: str('Commit built.'), duration_secs: int('Build time.'), log_url: str('Build log.', { format: 'uri' }) },
      ['app_id', 'cloudspace_id', 'log_url'],
    ),
  },
  'action.pending': {
    description: 'An action awaits approval.',
    scope: { cluster: true, cloudspace: false },
    data: object({ action_id: id('action'), cluster_id: str('Cluster.'), kind: str('e.g. `scale`, `restart`, `rollback`, `drain`.'), target: str('What it acts on.'), reason: str('Why it is proposed.'), requested_by: str('Agent or user that proposed it.'), url: str('Where to approve it.', { format: 'uri' }) }),
  },
  'action.executed': {
    description: 'An automated or approved action ran, with its outcome.',
    scope: { cluster: true, cloudspace: false },
    data: object(
      { action_id: id('action'), cluster_id: str('Cluster.'), kind: str('Action kind.'), target: str('What it acted on.'), outcome: str('`succeeded` or `failed`.'), executed_by: str('Who ran it.'), approved_by: nullable(str('Who approved it, when approval was needed.')), message: str('Result.') },
      ['approved_by'],
    ),
  },
  'anomaly.detected': {
    description: 'A high or critical anomaly is detected.',
    scope: { cluster: true, cloudspace: false },
    data: object({ anomaly_id: id('anomaly'), cluster_id: str('Cluster.'), severity: str('`high` or `critical`.'), metric: str('Metric that misbehaves.'), namespace: str('Namespace.'), affected_service: str('Service.'), observed: { type: 'number', description: 'Observed value.' }, expected: { type: 'number', description: 'Expected value.' }, url: str('Dashboard link.', { format: 'uri' }) }),
  },
  'scaling_decision.created': {
    description: 'A scaling decision is proposed.',
    scope: { cluster: true, cloudspace: false },
    data: object({ decision_id: id('scaling decision'), cluster_id: str('Cluster.'), namespace: str('Namespace.'), workload: str('Workload name.'), from_replicas: int('Replicas now.'), to_replicas: int('Replicas proposed.'), reason: str('Why.'), url: str('Dashboard link.', { format: 'uri' }) }),
  },
  'agent_run.completed': {
    description: 'An agent run finishes, with its findings.',
    scope: { cluster: true, cloudspace: false },
    data: object({
      run_id: id('agent run'),
      agent_type: str('Agent type.'),
      cluster_id: str('Cluster.'),
      status: str('`succeeded` or `failed`.'),
      findings: { type: 'array', items: object({ title: str('Finding.'), severity: str('Severity.'), detail: str('Detail.') }) },
      url: str('Dashboard link.', { format: 'uri' }),
    }),
  },
  'cluster.phase_changed': {
    description: 'A cluster moves to a new setup phase, becomes Ready, or fails.',
    scope: { cluster: true, cloudspace: false },
    data: object({ cluster_id: str('Cluster.'), cluster_name: str('Name.'), phase: str('Pending, Provisioning, Provisioned, Ready, Deleting or Failed.'), previous_phase: nullable(str('Phase before.')), message: str('What happened.') }),
  },
  'cloudspace.ready': {
    description: 'A CloudSpace finishes provisioning.',
    scope: { cluster: true, cloudspace: true },
    data: object({ cloudspace_id: id('CloudSpace'), cloudspace_name: str('Name.'), cluster_id: str('Host cluster.'), vclusters: { type: 'array', items: str('Virtual cluster name.') } }),
  },
};

export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES);

/** The envelope of every delivery (spec 6). */
export function envelopeSchema(type?: string): JsonSchema {
  return {
    type: 'object',
    required: ['id', 'type', 'occurred_at', 'tenant_id', 'data'],
    properties: {
      id: str('Unique per event; deliveries can repeat, so handle idempotently.'),
      type: type ? { type: 'string', const: type } : { type: 'string', enum: EVENT_TYPE_NAMES },
      occurred_at: time('When it happened (RFC 3339 UTC).'),
      tenant_id: str('Tenant the event belongs to.', { format: 'uuid' }),
      data: type ? EVENT_TYPES[type]!.data : { type: 'object' },
    },
  };
}

/** `schema/events.json`: the catalogue as integrators read it. */
export function eventCatalogueDocument(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Cloud operations platform: outbound webhook events',
    description:
      'Each delivery is an HTTPS POST whose JSON body is the envelope, signed in the `Service-Signature` header as `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the subscription\'s secret.',
    envelope: envelopeSchema(),
    events: Object.fromEntries(Object.entries(EVENT_TYPES).map(([type, e]) => [type, { description: e.description, data: e.data }])),
  };
}
