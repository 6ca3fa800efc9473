import type { RestRoute } from './route.js';

const LOCATED = /* GraphQL */ `vcluster namespace name`;
const FILTERS = ['vcluster', 'namespace'] as const;
const VIEW_DESCRIPTION =
  'Read live from every ready virtual cluster of the CloudSpace (all namespaces inside each; never the host cluster), sorted by `vcluster`, `namespace` and `name`. Filters: `vcluster` (one virtual cluster of the CloudSpace: 404 when it is not one, 409 while it is not ready) and `namespace`. 409 `conflict` while the CloudSpace is not Ready; 503 `upstream_unavailable` when a virtual cluster cannot be reached.';

/** One CloudSpace-wide view: `GET /api/v1/cloudspaces/{id}/<path>`. */
function view(path: string, summary: string, operation: string, field: string, selection: string): RestRoute {
  return {
    prefix: 'platform',
    method: 'GET',
    path: `/api/v1/cloudspaces/{id}/${path}`,
    summary,
    description: VIEW_DESCRIPTION,
    scope: 'read',
    paginated: true,
    query: FILTERS,
    operation: /* GraphQL */ `query ${operation}($id: ID!, $vcluster: String, $namespace: String, $limit: Int, $cursor: String) { ${field}(cloudSpaceId: $id, vcluster: $vcluster, namespace: $namespace, limit: $limit, cursor: $cursor) { data { ${LOCATED} ${selection} } nextCursor total } }`,
  };
}

/** CloudSpace-wide views and pod logs (spec 4.2), under `{base}/platform`. */
export const cloudSpaceViewRoutes: RestRoute[] = [
  view('pods', 'Pods of a CloudSpace', 'CloudSpacePods', 'cloudSpacePods', 'phase status ready restarts node ip images createdAt'),
  view('events', 'Events of a CloudSpace', 'CloudSpaceEvents', 'cloudSpaceEvents', 'type reason message involvedObject { kind name namespace } count source firstTimestamp lastTimestamp'),
  view('deployments', 'Deployments of a CloudSpace', 'CloudSpaceDeployments', 'cloudSpaceDeployments', 'replicas ready updated available images revision createdAt'),
  view('services', 'Services of a CloudSpace', 'CloudSpaceServices', 'cloudSpaceServices', 'type clusterIp externalIps ports { name port targetPort protocol nodePort } createdAt'),
  view('ingresses', 'Ingresses of a CloudSpace', 'CloudSpaceIngresses', 'cloudSpaceIngresses', 'className hosts tls { hosts secretName } rules { host path service port } addresses createdAt'),
  view('pvcs', 'PersistentVolumeClaims of a CloudSpace', 'CloudSpacePersistentVolumeClaims', 'cloudSpacePersistentVolumeClaims', 'phase capacity requested storageClass accessModes volume createdAt'),
  view('jobs', 'Jobs of a CloudSpace', 'CloudSpaceJobs', 'cloudSpaceJobs', 'status completions parallelism succeeded failed active images startedAt completedAt createdAt'),
  view('cronjobs', 'CronJobs of a CloudSpace', 'CloudSpaceCronJobs', 'cloudSpaceCronJobs', 'schedule timeZone suspend active lastSchedule lastSuccessfulTime images createdAt'),
  {
    prefix: 'platform',
    method: 'GET',
    path: '/api/v1/cloudspaces/{id}/logs/{podName}',
    summary: 'Logs of any pod in a CloudSpace',
    description:
      'The last `tail` lines (default 100, 0 to 10000) of one container\'s log as JSON `{vcluster, namespace, pod, container, lines}`, lines oldest first. `vcluster` defaults to the CloudSpace\'s default virtual cluster, `namespace` to `default`, `container` to the pod\'s default container (else its first); `since_seconds` keeps only recent lines, `timestamps=true` prefixes each line with its RFC 3339 time. With `follow=true` the answer is instead `text/plain; charset=utf-8`, streamed chunk by chunk: the same last lines, then each new line as the container writes it, until the pod goes or the client closes the connection; errors before the first byte are the usual JSON envelope. 404 for an unknown pod, virtual cluster or another tenant\'s CloudSpace; 409 while the container has not started.',
    scope: 'read',
    query: ['vcluster', 'namespace', 'container', 'tail', 'since_seconds', 'timestamps'],
    stream: { param: 'follow', subgraph: 'platform', path: '/_edge/cloudspaces/{id}/logs/{podName}' },
    operation: /* GraphQL */ `query CloudSpacePodLogs($id: ID!, $podName: String!, $vcluster: String, $namespace: String, $container: String, $tail: Int, $sinceSeconds: Int, $timestamps: Boolean) { cloudSpacePodLogs(cloudSpaceId: $id, podName: $podName, vcluster: $vcluster, namespace: $namespace, container: $container, tail: $tail, sinceSeconds: $sinceSeconds, timestamps: $timestamps) { vcluster namespace pod container lines } }`,
  },
];
