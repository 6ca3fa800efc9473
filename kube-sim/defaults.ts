/**
 * The defaults the API server fills in on create and update, for the fields clients commonly
 * read back (a Deployment's replicas and strategy, a Service's clusterIP, a Secret's data from
 * stringData...). Defaulting is idempotent: applying it to a stored object changes nothing.
 */
import { isPlainObject, timestamp, type KubeObject } from './types.js';
import type { ResourceType } from './resources.js';

export interface DefaultingContext {
  /** Allocates a ClusterIP for a new Service. */
  allocateClusterIp(): string;
}

function imagePullPolicy(image: unknown): string {
  if (typeof image !== 'string') return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const tag = lastSegment.includes('@') ? 'digest' : lastSegment.includes(':') ? lastSegment.slice(lastSegment.indexOf(':') + 1) : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultPodSpec(spec: Record<string, any>): void {
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.serviceAccountName ??= 'default';
  spec.securityContext ??= {};
  for (const list of ['containers', 'initContainers']) {
    if (!Array.isArray(spec[list])) continue;
    for (const c of spec[list] as Record<string, any>[]) {
      if (!isPlainObject(c)) continue;
      c.imagePullPolicy ??= imagePullPolicy(c.image);
      c.resources ??= {};
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      if (Array.isArray(c.ports)) for (const p of c.ports) if (isPlainObject(p)) p.protocol ??= 'TCP';
    }
  }
}

/** Fills defaults into `object` (a fresh copy owned by the caller). `existing` is set on updates. */
export function applyDefaults(type: ResourceType, object: KubeObject, existing: KubeObject | undefined, ctx: DefaultingContext): void {
  const spec = isPlainObject(object.spec) ? (object.spec as Record<string, any>) : undefined;
  switch (type.storageKey) {
    case 'namespaces':
      object.metadata.labels = { ...object.metadata.labels, 'kubernetes.io/metadata.name': object.metadata.name! };
      object.spec ??= { finalizers: ['kubernetes'] };
      if (!existing) object.status = { phase: 'Active' };
      break;
    case 'pods':
      if (spec) defaultPodSpec(spec);
      if (!existing) object.status = { phase: 'Pending', qosClass: 'BestEffort' };
      break;
    case 'deployments.apps':
      if (spec) {
        spec.replicas ??= 1;
        spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
        spec.revisionHistoryLimit ??= 10;
        spec.progressDeadlineSeconds ??= 600;
      }
      if (!existing) object.status = {};
      break;
    case 'replicasets.apps':
    case 'statefulsets.apps':
      if (spec) spec.replicas ??= 1;
      if (!existing) object.status = { replicas: 0 };
      break;
    case 'services':
      if (spec) {
        spec.type ??= 'ClusterIP';
        if (spec.type !== 'ExternalName') {
          if (existing && isPlainObject(existing.spec) && existing.spec.clusterIP) spec.clusterIP = existing.spec.clusterIP;
          spec.clusterIP ??= ctx.allocateClusterIp();
          spec.clusterIPs = [spec.clusterIP];
          spec.ipFamilies ??= ['IPv4'];
          spec.ipFamilyPolicy ??= 'SingleStack';
          spec.internalTrafficPolicy ??= 'Cluster';
        }
        spec.sessionAffinity ??= 'None';
        if (Array.isArray(spec.ports)) {
          for (const p of spec.ports) {
            if (!isPlainObject(p)) continue;
            p.protocol ??= 'TCP';
            p.targetPort ??= p.port;
          }
        }
      }
      if (!existing) object.status = { loadBalancer: {} };
      break;
    case 'secrets': {
      object.type ??= 'Opaque';
      // stringData is write-only: merged into data, base64-encoded, as the API server does.
      if (isPlainObject(object.stringData)) {
        const data: Record<string, string> = isPlainObject(object.data) ? { ...(object.data as Record<string, string>) } : {};
        for (const [k, v] of Object.entries(object.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
        object.data = data;
      }
      delete object.stringData;
      break;
    }
    case 'persistentvolumeclaims':
      if (spec) {
        spec.volumeMode ??= 'Filesystem';
        spec.storageClassName ??= 'standard';
      }
      // kube-sim binds every claim at once, to a volume of the requested size.
      if (!existing) {
        object.status = { phase: 'Bound', accessModes: spec?.accessModes ?? ['ReadWriteOnce'], capacity: { storage: spec?.resources?.requests?.storage ?? '1Gi' } };
        if (spec) spec.volumeName ??= `pvc-${object.metadata.uid}`;
      }
      break;
    case 'jobs.batch':
      if (spec) {
        spec.backoffLimit ??= 6;
        spec.completions ??= 1;
        spec.parallelism ??= 1;
      }
      break;
    case 'cronjobs.batch':
      if (spec) {
        spec.concurrencyPolicy ??= 'Allow';
        spec.suspend ??= false;
        spec.successfulJobsHistoryLimit ??= 3;
        spec.failedJobsHistoryLimit ??= 1;
      }
      break;
    case 'events':
      object.count ??= 1;
      object.type ??= 'Normal';
      break;
    case 'customresourcedefinitions.apiextensions.k8s.io':
      if (spec) {
        const names = spec.names ?? {};
        names.singular ??= String(names.kind ?? '').toLowerCase();
        names.listKind ??= `${names.kind}List`;
        const now = timestamp();
        const storage = Array.isArray(spec.versions) ? spec.versions.filter((v: any) => v?.storage).map((v: any) => v.name) : [];
        const previous = isPlainObject(existing?.status) ? (existing!.status as Record<string, any>) : undefined;
        // Registered synchronously, so Established at once (a real API server takes a moment).
        object.status = {
          acceptedNames: { ...names },
          conditions: previous?.conditions ?? [
            { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: now },
            { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: now },
          ],
          storedVersions: [...new Set([...(previous?.storedVersions ?? []), ...storage])],
        };
      }
      break;
  }
}
