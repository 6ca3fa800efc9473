import type { V1ReplicaSet } from '@kubernetes/client-node';
import { orUndefined } from '../orchestrator/kube.js';
import type { App } from './app.entity.js';
import { APP_NAMESPACE, LABELS } from './app.render.js';
import type { AppService } from './app.service.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/** One revision of an app: what a ReplicaSet in its virtual cluster actually ran. */
export interface Revision {
  /** The ReplicaSet's name: the deployment id of the API. */
  id: string;
  revision: number;
  image: string;
  port: number | null;
  env: { name: string; value: string | null; secret: boolean }[];
  resources: { cpuRequest: string | null; memoryRequest: string | null };
  replicas: number;
  readyReplicas: number;
  createdAt: string | null;
  current: boolean;
}

/** The revision number a Deployment or ReplicaSet carries in its annotation, or null. */
export function revisionNumber(object: { metadata?: { annotations?: Record<string, string> } } | undefined): number | null {
  const revision = Number(object?.metadata?.annotations?.[REVISION_ANNOTATION]);
  return Number.isInteger(revision) ? revision : null;
}

export function revisionOf(rs: V1ReplicaSet, currentRevision: number | null): Revision | undefined {
  const revision = revisionNumber(rs);
  const container = rs.spec?.template?.spec?.containers?.[0];
  if (revision === null || !container) return undefined;
  const created = rs.metadata?.creationTimestamp;
  return {
    id: rs.metadata?.name ?? '',
    revision,
    image: container.image ?? '',
    port: container.ports?.[0]?.containerPort ?? null,
    env: (container.env ?? []).map((e) => (e.valueFrom?.secretKeyRef ? { name: e.name, value: null, secret: true } : { name: e.name, value: e.value ?? '', secret: false })),
    resources: { cpuRequest: String(container.resources?.requests?.cpu ?? '') || null, memoryRequest: String(container.resources?.requests?.memory ?? '') || null },
    replicas: rs.status?.replicas ?? 0,
    readyReplicas: rs.status?.readyReplicas ?? 0,
    createdAt: created ? new Date(created).toISOString() : null,
    current: revision === currentRevision,
  };
}

/** Revisions newest first, read from the ReplicaSets of the app's Deployment in its virtual cluster. */
export async function listRevisions(service: AppService, app: App): Promise<Revision[]> {
  return service.inVirtualCluster(app, async (clients) => {
    const [sets, deployment] = await Promise.all([
      // Both labels: a workload of the tenant's own may reuse the app's name label.
      clients.apps.listNamespacedReplicaSet({ namespace: APP_NAMESPACE, labelSelector: `${LABELS.app}=${app.name},${LABELS.appId}=${app.id}` }),
      orUndefined(clients.apps.readNamespacedDeployment({ namespace: APP_NAMESPACE, name: app.name })),
    ]);
    return sets.items
      .map((rs) => revisionOf(rs, revisionNumber(deployment)))
      .filter((r): r is Revision => r !== undefined)
      .sort((a, b) => b.revision - a.revision);
  });
}
