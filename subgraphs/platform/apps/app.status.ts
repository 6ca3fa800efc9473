import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import type { KubeClients } from '../orchestrator/kube.js';
import { App, AppPhase } from './app.entity.js';
import { APP_NAMESPACE, LABELS } from './app.render.js';
import { revisionNumber } from './app.revisions.js';
import type { AppService } from './app.service.js';

export type GitOpsState = 'Synced' | 'OutOfSync' | 'Unknown';
export type FailureReason = 'image_pull' | 'crash_loop' | 'progress_deadline';

/** `GET /apps/{id}/deploy-status` (spec 3): the three checks, in order. */
export interface DeployStatus {
  phase: AppPhase;
  gitops: GitOpsState;
  readyReplicas: number;
  desiredReplicas: number;
  reachable: boolean;
  revision: number | null;
  commit: string | null;
  appliedRevision: string | null;
  failure: FailureReason | null;
  message: string;
}

/** Flux's Kustomization of the virtual cluster: `status.lastAppliedRevision` is `<branch>@sha1:<sha>`. */
export const KUSTOMIZATION = { group: 'kustomize.toolkit.fluxcd.io', version: 'v1', plural: 'kustomizations', namespace: 'flux-system', name: 'fleet' } as const;

export async function lastAppliedSha(clients: KubeClients): Promise<string | null> {
  try {
    const k = (await clients.custom.getNamespacedCustomObject({ group: KUSTOMIZATION.group, version: KUSTOMIZATION.version, namespace: KUSTOMIZATION.namespace, plural: KUSTOMIZATION.plural, name: KUSTOMIZATION.name })) as {
      status?: { lastAppliedRevision?: string };
    };
    const revision = k.status?.lastAppliedRevision ?? '';
    return /sha1:([0-9a-f]{40})$/.exec(revision)?.[1] ?? (/^[0-9a-f]{40}$/.test(revision) ? revision : null);
  } catch {
    return null;
  }
}

/** The HTTPS check of an app's address (the local profile points it at its own ingress and CA). */
export class ReachabilityChecker {
  private readonly agent: Agent;

  constructor(options: { ingressAddress?: string | undefined; caFile?: string | undefined; timeoutMs?: number }) {
    const [host, port] = options.ingressAddress?.split(':') ?? [];
    const ca = options.caFile ? [...rootCertificates, readFileSync(options.caFile, 'utf8')] : undefined;
    const timeout = options.timeoutMs ?? 5000;
    this.agent = new Agent({
      connect: {
        timeout,
        ...(ca ? { ca } : {}),
        // With an ingress address, every app address is served there: connect to it, keep the app's name for SNI and Host.
        ...(host ? { lookup: (_hostname: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => (opts.all ? cb(null, [{ address: host === 'localhost' ? '127.0.0.1' : host, family: 4 }]) : cb(null, host === 'localhost' ? '127.0.0.1' : host, 4)) } : {}),
      },
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    this.port = port ? Number(port) : 443;
  }

  private readonly port: number;

  /** True when `GET https://<address><path>` answers 2xx or 3xx. */
  async check(address: string, path = '/'): Promise<boolean> {
    try {
      const response = await request(`https://${address}:${this.port}${path}`, { dispatcher: this.agent, method: 'GET', headers: { 'user-agent': 'cloudops-deploy-check/1' } });
      await response.body.dump();
      return response.statusCode >= 200 && response.statusCode < 400;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Why pods of the current revision fail, if they do. */
function failureOf(pods: { status?: { containerStatuses?: { state?: { waiting?: { reason?: string; message?: string } } }[] } }[]): { reason: FailureReason; message: string } | null {
  for (const pod of pods) {
    for (const c of pod.status?.containerStatuses ?? []) {
      const waiting = c.state?.waiting;
      if (waiting?.reason === 'ImagePullBackOff' || waiting?.reason === 'ErrImagePull') return { reason: 'image_pull', message: waiting.message ?? waiting.reason };
      if (waiting?.reason === 'CrashLoopBackOff') return { reason: 'crash_loop', message: waiting.message ?? waiting.reason };
    }
  }
  return null;
}

/**
 * Checks, in order (spec 1 behaviour 3): GitOps sync (the app's latest commit is contained in the
 * revision the GitOps controller last applied), workload readiness in the virtual cluster, then
 * an HTTPS request to the address — only that proves DNS, certificate, ingress and app together.
 */
export async function deployStatus(service: AppService, app: App, checker: ReachabilityChecker, contains: (commit: string, revision: string) => Promise<boolean>): Promise<DeployStatus> {
  const base = { commit: app.lastCommit, appliedRevision: null as string | null, revision: null as number | null, failure: null as FailureReason | null, desiredReplicas: app.replicas };
  if (app.phase === AppPhase.Deleting) return { ...base, phase: AppPhase.Deleting, gitops: 'Unknown', readyReplicas: 0, reachable: false, message: 'deleting' };
  if (!app.lastCommit) return { ...base, phase: AppPhase.Pending, gitops: 'OutOfSync', readyReplicas: 0, reachable: false, message: 'desired state not yet committed' };
  const live = await service
    .inVirtualCluster(app, async (clients) => {
      const applied = await lastAppliedSha(clients);
      const deployment = await clients.apps.readNamespacedDeployment({ namespace: APP_NAMESPACE, name: app.name }).catch(() => undefined);
      const pods = deployment ? await clients.core.listNamespacedPod({ namespace: APP_NAMESPACE, labelSelector: `${LABELS.app}=${app.name}` }) : { items: [] };
      return { applied, deployment, pods: pods.items };
    })
    .catch(() => undefined);
  if (!live) return { ...base, phase: app.phase, gitops: 'Unknown', readyReplicas: 0, reachable: false, message: 'the virtual cluster cannot be reached' };
  const synced = live.applied ? live.applied === app.lastCommit || (await contains(app.lastCommit, live.applied)) : false;
  const gitops: GitOpsState = live.applied ? (synced ? 'Synced' : 'OutOfSync') : 'Unknown';
  const d = live.deployment;
  const status = { ...base, appliedRevision: live.applied, revision: revisionNumber(d) };
  const ready = d?.status?.readyReplicas ?? 0;
  if (!synced || !d) return { ...status, phase: AppPhase.Syncing, gitops, readyReplicas: ready, reachable: false, message: 'waiting for the GitOps controller to apply the latest commit' };
  if (app.replicas === 0) return { ...status, phase: AppPhase.Stopped, gitops, readyReplicas: ready, reachable: false, message: 'stopped' };
  const deadline = d.status?.conditions?.find((c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded');
  const failure = failureOf(live.pods as never) ?? (deadline ? { reason: 'progress_deadline' as const, message: deadline.message ?? 'progress deadline exceeded' } : null);
  const rolledOut = (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) && (d.status?.updatedReplicas ?? 0) >= app.replicas && ready >= app.replicas;
  if (failure && !rolledOut) return { ...status, phase: AppPhase.Failed, gitops, readyReplicas: ready, reachable: false, failure: failure.reason, message: failure.message };
  if (!rolledOut) return { ...status, phase: AppPhase.Deploying, gitops, readyReplicas: ready, reachable: false, message: `${ready}/${app.replicas} replicas ready` };
  const reachable = await checker.check(app.address, app.healthCheck?.path ?? '/');
  return { ...status, phase: reachable ? AppPhase.Running : AppPhase.Verifying, gitops, readyReplicas: ready, reachable, message: reachable ? `serving at https://${app.address}` : `ready; https://${app.address} does not answer yet` };
}
