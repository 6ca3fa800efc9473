import type { Prefix, RestRoute } from './route.js';

const CLUSTER = /* GraphQL */ `id tenantId name source phase message capiName infrastructureKind kubernetesVersion provisionedAt createdAt updatedAt`;
const CLOUDSPACE = /* GraphQL */ `id tenantId name clusterId namespace defaultVcluster status message cpuLimit memoryLimit podLimit readyAt createdAt updatedAt`;
const VCLUSTER = /* GraphQL */ `name phase ready isDefault createdAt`;

const platform = (r: Omit<RestRoute, 'prefix'>): RestRoute => ({ prefix: 'platform', ...r });

/** Clusters (spec 4.2), under `{base}/platform`. */
export const clusterRoutes: RestRoute[] = [
  platform({
    method: 'GET',
    path: '/api/v1/clusters',
    summary: 'List clusters',
    scope: 'read',
    paginated: true,
    operation: /* GraphQL */ `query Clusters($limit: Int, $cursor: String) { clusters(limit: $limit, cursor: $cursor) { data { ${CLUSTER} } nextCursor total } }`,
  }),
  platform({
    method: 'POST',
    path: '/api/v1/clusters',
    summary: 'Connect an existing cluster or create one',
    description:
      'With `kubeconfig`: connects an existing cluster (its API must answer; the kubeconfig is stored encrypted) — phase Provisioned at once. Without: creates one through Cluster API on the management cluster (`infrastructure_kind` DockerCluster, AWSCluster, AzureCluster or GCPCluster; `kubernetes_version`; `worker_nodes`); its phase follows Cluster API: Pending → Provisioning → Provisioned, or Failed. Each phase change emits `cluster.phase_changed`; workflow-manager is told at once. Scope `admin`.',
    scope: 'admin',
    body: 'input',
    status: 201,
    operation: /* GraphQL */ `mutation CreateCluster($input: CreateClusterInput!) { createCluster(input: $input) { ${CLUSTER} } }`,
  }),
  platform({
    method: 'POST',
    path: '/api/v1/clusters/register-self',
    summary: 'Register the cluster the platform runs on',
    description: 'Platform administrators (super_admin without a tenant). Idempotent: answers the registered cluster when there is one. It becomes the default home of tenants\' CloudSpaces.',
    scope: 'admin',
    role: 'super_admin',
    body: 'input',
    operation: /* GraphQL */ `mutation RegisterSelfCluster($input: RegisterSelfClusterInput) { registerSelfCluster(input: $input) { ${CLUSTER} } }`,
  }),
  platform({
    method: 'GET',
    path: '/api/v1/clusters/{id}',
    summary: 'One cluster, with live node counts',
    scope: 'read',
    operation: /* GraphQL */ `query Cluster($id: ID!) { cluster(id: $id) { ${CLUSTER} nodes { total ready } } }`,
  }),
  platform({
    method: 'DELETE',
    path: '/api/v1/clusters/{id}',
    summary: 'Disconnect or delete a cluster',
    description: 'A connected or self-registered cluster is forgotten at once (it keeps running); a created one is deleted through Cluster API (phase Deleting until it is gone). Refused with 409 while CloudSpaces live on it. Workflow-manager is told.',
    scope: 'admin',
    status: 202,
    operation: /* GraphQL */ `mutation DeleteCluster($id: ID!) { deleteCluster(id: $id) { ${CLUSTER} } }`,
  }),
];

/**
 * CloudSpaces and their virtual clusters. The same operations serve the platform routes of spec
 * 4.2 and the auth service's CloudSpace routes of spec 4.9, where creating is self-service and
 * managing needs the `admin` role.
 */
function cloudSpaceRoutes(prefix: Prefix, manageRole?: string): RestRoute[] {
  const r = (route: Omit<RestRoute, 'prefix'>, manage = false): RestRoute => ({ prefix, ...route, ...(manage && manageRole ? { role: manageRole } : {}) });
  return [
    r({
      method: 'GET',
      path: '/api/v1/cloudspaces',
      summary: 'List CloudSpaces',
      scope: 'read',
      paginated: true,
      operation: /* GraphQL */ `query CloudSpaces($limit: Int, $cursor: String) { cloudSpaces(limit: $limit, cursor: $cursor) { data { ${CLOUDSPACE} } nextCursor total } }`,
    }),
    r({
      method: 'POST',
      path: '/api/v1/cloudspaces',
      summary: 'Create a CloudSpace',
      description:
        '`name` (DNS label), optional `cluster_id`, quota `cpu_limit`, `memory_limit` (Kubernetes quantities), `pod_limit`. Answers 201 with status Pending; the platform creates its namespace, ResourceQuota and default virtual cluster `main`, then status Ready and the `cloudspace.ready` event (or Failed).',
      scope: 'deploy',
      body: 'input',
      status: 201,
      operation: /* GraphQL */ `mutation CreateCloudSpace($input: CreateCloudSpaceInput!) { createCloudSpace(input: $input) { ${CLOUDSPACE} } }`,
    }),
    r({
      method: 'GET',
      path: '/api/v1/cloudspaces/{id}',
      summary: 'One CloudSpace',
      scope: 'read',
      operation: /* GraphQL */ `query CloudSpace($id: ID!) { cloudSpace(id: $id) { ${CLOUDSPACE} } }`,
    }),
    r(
      {
        method: prefix === 'auth' ? 'PUT' : 'PATCH',
        path: '/api/v1/cloudspaces/{id}',
        summary: 'Rename or resize a CloudSpace',
        description: '`name`, `cpu_limit`, `memory_limit`, `pod_limit`; a resize changes the namespace\'s ResourceQuota at once.',
        scope: 'deploy',
        body: 'input',
        operation: /* GraphQL */ `mutation UpdateCloudSpace($id: ID!, $input: UpdateCloudSpaceInput!) { updateCloudSpace(id: $id, input: $input) { ${CLOUDSPACE} } }`,
      },
      true,
    ),
    r(
      {
        method: 'DELETE',
        path: '/api/v1/cloudspaces/{id}',
        summary: 'Delete a CloudSpace and everything it created',
        description: 'Answers 202 with status Deleting; its namespace (virtual clusters, apps, quota) is removed, then the CloudSpace.',
        scope: 'deploy',
        status: 202,
        operation: /* GraphQL */ `mutation DeleteCloudSpace($id: ID!) { deleteCloudSpace(id: $id) { ${CLOUDSPACE} } }`,
      },
      true,
    ),
  ];
}

export const platformCloudSpaceRoutes: RestRoute[] = [
  ...cloudSpaceRoutes('platform'),
  platform({
    method: 'GET',
    path: '/api/v1/cloudspaces/{id}/vclusters',
    summary: 'Virtual clusters of a CloudSpace',
    scope: 'read',
    operation: /* GraphQL */ `query VirtualClusters($id: ID!) { virtualClusters(cloudSpaceId: $id) { ${VCLUSTER} } }`,
  }),
  platform({
    method: 'POST',
    path: '/api/v1/cloudspaces/{id}/vclusters',
    summary: 'Add a virtual cluster',
    description: '`name` (DNS label). Answers 201 with phase Pending; apps can target it by `tenant_cr_name` once it is ready.',
    scope: 'deploy',
    body: 'input',
    status: 201,
    operation: /* GraphQL */ `mutation CreateVirtualCluster($id: ID!, $input: CreateVirtualClusterInput!) { createVirtualCluster(cloudSpaceId: $id, input: $input) { ${VCLUSTER} } }`,
  }),
  platform({
    method: 'GET',
    path: '/api/v1/cloudspaces/{id}/vclusters/{name}',
    summary: 'One virtual cluster',
    scope: 'read',
    operation: /* GraphQL */ `query VirtualCluster($id: ID!, $name: String!) { virtualCluster(cloudSpaceId: $id, name: $name) { ${VCLUSTER} } }`,
  }),
  platform({
    method: 'DELETE',
    path: '/api/v1/cloudspaces/{id}/vclusters/{name}',
    summary: 'Delete a virtual cluster',
    description: 'Not the default one (409): that goes with the CloudSpace.',
    scope: 'deploy',
    status: 204,
    operation: /* GraphQL */ `mutation DeleteVirtualCluster($id: ID!, $name: String!) { deleteVirtualCluster(cloudSpaceId: $id, name: $name) }`,
  }),
  platform({
    method: 'GET',
    path: '/api/v1/cloudspaces/{id}/vclusters/{name}/kubeconfig',
    summary: 'Download a virtual cluster\'s kubeconfig',
    description: 'Full access to the virtual cluster: needs scope `deploy`, and every download is logged with who asked.',
    scope: 'deploy',
    noStore: true,
    operation: /* GraphQL */ `query VirtualClusterKubeconfig($id: ID!, $name: String!) { virtualClusterKubeconfig(cloudSpaceId: $id, name: $name) { name kubeconfig } }`,
  }),
];

const APP_SUMMARY = /* GraphQL */ `id tenantId cloudspaceId name vcluster image port tls domain address replicas phase message lastCommit createdAt updatedAt`;

/**
 * Spec 4.9: the auth service's CloudSpace routes; creating is self-service, managing needs the
 * admin role. Apps of a CloudSpace are listed and created there too (the same operations as
 * `{base}/platform/api/v1/apps`).
 */
export const authCloudSpaceRoutes: RestRoute[] = [
  ...cloudSpaceRoutes('auth', 'admin'),
  {
    prefix: 'auth',
    method: 'GET',
    path: '/api/v1/cloudspaces/{id}/apps',
    summary: 'Apps of a CloudSpace',
    scope: 'read',
    paginated: true,
    operation: /* GraphQL */ `query CloudSpaceApps($id: ID!, $limit: Int, $cursor: String) { apps(cloudspaceId: $id, limit: $limit, cursor: $cursor) { data { ${APP_SUMMARY} } nextCursor total } }`,
  },
  {
    prefix: 'auth',
    method: 'POST',
    path: '/api/v1/cloudspaces/{id}/apps',
    summary: 'Create an app in a CloudSpace',
    description: 'The body of `POST {base}/platform/api/v1/apps`, the CloudSpace taken from the path.',
    scope: 'deploy',
    body: 'input',
    status: 201,
    operation: /* GraphQL */ `mutation CreateCloudSpaceApp($id: ID!, $input: CreateAppInput!) { createApp(cloudspaceId: $id, input: $input) { ${APP_SUMMARY} } }`,
  },
];
