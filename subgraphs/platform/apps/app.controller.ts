import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../../kernel/logger.js';
import { createLeaderLock } from '../../../kernel/leader.js';
import { startPassLoop } from '../../../kernel/loop.js';
import { tenantEntityManager } from '../../../kernel/tenancy.js';
import { CloudSpace } from '../cloudspaces/cloudspace.entity.js';
import { Cluster } from '../clusters/cluster.entity.js';
import { queuePlatformEvent } from '../events.js';
import { appFolder, type FleetRepo } from '../gitops/fleet-repo.js';
import { isNotFound } from '../orchestrator/kube.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { PlatformRuntime } from '../runtime.js';
import { App, AppPhase, AppRevisionNote } from './app.entity.js';
import { APP_NAMESPACE, envSecretName, PLATFORM_APP, renderManifests, type PlatformAppSpec } from './app.render.js';
import { AppService } from './app.service.js';
import { deployStatus, type ReachabilityChecker } from './app.status.js';

const SYSTEM = { subject: 'platform-api', tenantId: null, roles: ['super_admin'], scopes: ['admin' as const] };
const LOCK_KEY = 'platform:app-controller';
/** PlatformApps read per list call. */
const LIST_PAGE = 200;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface PlatformAppObject {
  metadata?: { name?: string; namespace?: string; generation?: number; annotations?: Record<string, string> };
  spec?: PlatformAppSpec;
  status?: { observedGeneration?: number; commit?: string };
}

export interface AppController {
  nudge(): void;
  /** Whether this replica holds the lock and works. */
  readonly leading: boolean;
  /** One pass now (tests), when leading. */
  pass(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The app controller. One replica works at a time: leadership is a PostgreSQL advisory lock
 * held on a connection of its own (lost with the connection, so a dead leader is replaced).
 * Each pass it (1) lists PlatformApps on every cluster hosting CloudSpaces and, for each whose
 * generation it has not committed yet, renders the manifests, commits them to the fleet
 * repository (one commit per change, named after the app and the change), and records the
 * commit on the resource's status and the app; (2) finishes deleted apps (removes their folder,
 * their secret, the row; emits `app.deleted`); (3) follows each new commit to its outcome and
 * emits `app.deployed` when it first becomes reachable or `app.deploy_failed` when it fails.
 */
export function startAppController(options: {
  orm: MikroORM;
  databaseUrl: string;
  orchestrator: Orchestrator;
  fleet: FleetRepo;
  checker: ReachabilityChecker;
  runtime: PlatformRuntime;
  logger: Logger;
  intervalMs?: number;
}): AppController {
  const { orm, orchestrator, fleet, checker, runtime, logger } = options;
  const leader = createLeaderLock({ databaseUrl: options.databaseUrl, key: LOCK_KEY, name: 'app controller', logger });
  let stopped = false;

  const em = () => tenantEntityManager(orm.em, SYSTEM);

  /** (1) Commit what changed. */
  const commitChanges = async () => {
    const clusterIds = (await orm.em.getConnection().execute<{ cluster_id: string }[]>('select distinct cluster_id from platform.cloudspace')).map((r) => r.cluster_id);
    for (const clusterId of clusterIds) {
      if (stopped) return;
      const cluster = await em().findOne(Cluster, { id: clusterId }, { filters: false });
      if (!cluster) continue;
      let items: PlatformAppObject[];
      try {
        const clients = await orchestrator.cluster(cluster);
        // Pages, keeping only what waits for a commit: with thousands of apps, one list would
        // parse megabytes in one go on the event loop that also answers requests.
        items = [];
        let next: string | undefined;
        do {
          const page = (await clients.custom.listClusterCustomObject({ group: PLATFORM_APP.group, version: PLATFORM_APP.version, plural: PLATFORM_APP.plural, limit: LIST_PAGE, ...(next ? { _continue: next } : {}) })) as {
            items: PlatformAppObject[];
            metadata?: { _continue?: string; continue?: string };
          };
          items.push(...page.items.filter((item) => item.spec && item.status?.observedGeneration !== item.spec.generation));
          next = page.metadata?._continue ?? page.metadata?.continue ?? undefined;
        } while (next && !stopped);
        for (const item of items) {
          if (stopped) return;
          const spec = item.spec;
          if (!spec) continue;
          const name = item.metadata!.name!;
          const folder = appFolder({ tenantId: spec.tenantId, namespace: item.metadata!.namespace!, vcluster: spec.vcluster, app: name });
          const change = item.metadata?.annotations?.['cloudops.dev/change'] ?? 'updated';
          const written = await fleet.writeFolder(folder, renderManifests(name, spec), `app ${name}: ${change}\n\napp-id: ${spec.appId}\ngeneration: ${spec.generation}`);
          await clients.custom.patchNamespacedCustomObjectStatus(
            { group: PLATFORM_APP.group, version: PLATFORM_APP.version, namespace: item.metadata!.namespace!, plural: PLATFORM_APP.plural, name, body: { status: { observedGeneration: spec.generation, commit: written.commit, phase: 'Ready', message: 'manifests generated and committed' } } },
            mergePatch,
          );
          const e = em();
          const app = await e.findOne(App, { id: spec.appId }, { filters: false });
          if (app && app.generation === spec.generation && app.phase !== AppPhase.Deleting) {
            app.lastCommit = written.commit;
            app.lastCommitAt = new Date();
            if (app.phase !== AppPhase.Stopped) app.phase = AppPhase.Syncing;
            app.message = `committed ${written.commit.slice(0, 12)}: ${change}`;
            await e.flush();
          }
          logger.info({ app: spec.appId, commit: written.commit, change }, 'app committed to the fleet repository');
        }
      } catch (error) {
        logger.warn({ cluster: cluster.id, error: (error as Error).message }, 'app controller pass over a cluster failed; will retry');
      }
    }
  };

  /** (2) Finish deletions whose resource is gone. */
  const finishDeletions = async () => {
    const e = em();
    const deleting = await e.find(App, { phase: AppPhase.Deleting }, { filters: false, limit: 20 });
    for (const app of deleting) {
      if (stopped) return;
      try {
        const space = await e.findOneOrFail(CloudSpace, { id: app.cloudspaceId }, { filters: false });
        const cluster = await e.findOneOrFail(Cluster, { id: space.clusterId }, { filters: false });
        const clients = await orchestrator.cluster(cluster);
        const resource = await clients.custom.getNamespacedCustomObject({ group: PLATFORM_APP.group, version: PLATFORM_APP.version, namespace: space.namespace, plural: PLATFORM_APP.plural, name: app.name }).catch((error: unknown) => {
          if (isNotFound(error)) return undefined;
          throw error;
        });
        if (resource) continue; // the relay has not removed it yet
        await fleet.removeFolder(appFolder({ tenantId: app.tenantId, namespace: space.namespace, vcluster: app.vcluster, app: app.name }), `app ${app.name}: deleted\n\napp-id: ${app.id}`);
        await orchestrator.virtualClusters(cluster).with(space.namespace, app.vcluster, async (vc) => {
          await vc.core.deleteNamespacedSecret({ namespace: APP_NAMESPACE, name: envSecretName(app.name) }).catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
          });
        });
        queuePlatformEvent(e, 'app.deleted', app.tenantId, { app_id: app.id, app_name: app.name, cloudspace_id: app.cloudspaceId, cluster_id: space.clusterId });
        await e.nativeDelete(AppRevisionNote, { appId: app.id }, { filters: false });
        e.remove(app);
        await e.flush();
        runtime.relays?.forEach((r) => r.nudge());
      } catch (error) {
        logger.warn({ app: app.id, error: (error as Error).message }, 'finishing an app deletion failed; will retry');
      }
    }
  };

  /** (3) Follow new commits to their outcome. */
  const reportOutcomes = async () => {
    const e = em();
    // Only apps still on their way, newest commits first; finished ones are filtered in SQL, so a
    // backlog of finished apps never hides the others.
    const ids = (await orm.em.getConnection().execute<{ id: string }[]>(
      `select id from platform.app
        where last_commit is not null and phase <> 'Deleting'
          and (reported_commit is distinct from last_commit or phase not in ('Running', 'Failed', 'Stopped'))
        order by last_commit_at desc limit 50`,
    )).map((r) => r.id);
    const open = ids.length > 0 ? await e.find(App, { id: { $in: ids } }, { filters: false }) : [];
    const service = new AppService(e, SYSTEM, runtime);
    for (const app of open) {
      if (stopped) return;
      try {
        const status = await deployStatus(service, app, checker, (commit, revision) => fleet.isAncestor(commit, revision));
        const space = await e.findOneOrFail(CloudSpace, { id: app.cloudspaceId }, { filters: false });
        const common = { app_id: app.id, app_name: app.name, cloudspace_id: app.cloudspaceId, cluster_id: space.clusterId, revision: status.revision ?? 0 };
        if (app.reportedCommit !== app.lastCommit && status.reachable) {
          queuePlatformEvent(e, 'app.deployed', app.tenantId, { ...common, address: app.address, image: app.image, deployed_at: new Date().toISOString() });
          app.reportedCommit = app.lastCommit;
        } else if (app.reportedCommit !== app.lastCommit && status.failure) {
          queuePlatformEvent(e, 'app.deploy_failed', app.tenantId, { ...common, reason: status.failure, message: status.message });
          app.reportedCommit = app.lastCommit;
        }
        if (app.phase !== status.phase || app.message !== status.message) {
          app.phase = status.phase;
          app.message = status.message;
          runtime.appEvents?.(app);
        }
        await e.flush();
        runtime.relays?.forEach((r) => r.nudge());
      } catch (error) {
        logger.warn({ app: app.id, error: (error as Error).message }, 'following an app deployment failed; will retry');
      }
    }
  };

  const pass = async () => {
    if (stopped || !orchestrator.configured || !(await leader.acquire())) return;
    await commitChanges();
    await finishDeletions();
    await reportOutcomes();
  };

  const loop = startPassLoop({ name: 'app controller', pass, intervalMs: options.intervalMs ?? 500, logger, runNow: true });
  return {
    nudge: loop.nudge,
    get leading() {
      return leader.leading;
    },
    pass,
    async stop() {
      stopped = true;
      await loop.stop();
      await leader.release();
    },
  };
}
