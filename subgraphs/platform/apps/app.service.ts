import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflictOnDuplicate, findByIdOrNotFound } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { enqueue } from '../../../kernel/outbox.js';
import { pageNewestFirst, type PageOfRows } from '../../../kernel/pagination.js';
import { CloudSpace, CloudSpaceStatus } from '../cloudspaces/cloudspace.entity.js';
import { Cluster } from '../clusters/cluster.entity.js';
import { clusterUnavailable, type KubeClients } from '../orchestrator/kube.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import { requireOrchestrator, type PlatformRuntime } from '../runtime.js';
import { App, AppPhase, type StoredEnvVar } from './app.entity.js';
import { checkAppName, checkAutoscaling, checkDomain, checkEnv, checkHealthCheck, checkImage, checkPort, checkReplicas, checkResources, type AppFields } from './app.input.js';
import { APP_NAMESPACE, envSecretName, RESTARTED_AT, type EnvSpec, type PlatformAppSpec } from './app.render.js';

/** The outbox "exchange" whose rows the PlatformApp relay turns into resources (see app.relay.ts). */
export const PLATFORM_APP_EXCHANGE = 'platform-app';

export const secretEnvPurpose = (appId: string) => `platform.app.env:${appId}`;

/** The desired state of an app as its PlatformApp resource carries it. */
export function specOf(app: App, namespace: string): PlatformAppSpec & { namespace: string; stopped: boolean } {
  const env: EnvSpec[] = app.env.map((e) => (e.secret ? { name: e.name, secretKey: e.name } : { name: e.name, value: e.value ?? '' }));
  return {
    appId: app.id,
    tenantId: app.tenantId,
    cloudspaceId: app.cloudspaceId,
    namespace,
    vcluster: app.vcluster,
    image: app.image,
    port: app.port,
    replicas: app.replicas,
    resources: { cpuRequest: app.cpuRequest, memoryRequest: app.memoryRequest },
    tls: app.tls,
    address: app.address,
    autoscaling: app.replicas === 0 ? null : app.autoscaling,
    env,
    healthCheck: app.healthCheck,
    restartedAt: app.restartedAt,
    generation: app.generation,
    stopped: app.replicas === 0 && app.stoppedReplicas !== null,
  };
}

/** Env vars as the API shows them: secret values masked. */
export function maskedEnv(env: StoredEnvVar[]): { name: string; value: string | null; secret: boolean }[] {
  return env.map((e) => ({ name: e.name, value: e.secret ? null : e.value, secret: e.secret }));
}

/** Apps of the caller's tenant: desired state in PostgreSQL and Git, live state from the virtual cluster. */
export class AppService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {}

  private get orchestrator(): Orchestrator {
    return requireOrchestrator(this.runtime);
  }

  /** With `cloudspaceId`, that CloudSpace's apps; another tenant's CloudSpace is not found. */
  async list(args: { cloudspaceId?: string | null; limit?: number | null; cursor?: string | null }): Promise<PageOfRows<App>> {
    if (args.cloudspaceId) await findByIdOrNotFound(this.em, CloudSpace, args.cloudspaceId, 'CloudSpace');
    return pageNewestFirst<App>(this.em, App, args.cloudspaceId ? `apps:${args.cloudspaceId}` : 'apps', args.cloudspaceId ? { cloudspaceId: args.cloudspaceId } : {}, args);
  }

  get(id: string): Promise<App> {
    return findByIdOrNotFound(this.em, App, id, 'app');
  }

  async cloudSpaceOf(app: Pick<App, 'cloudspaceId'>): Promise<CloudSpace> {
    return findByIdOrNotFound(this.em, CloudSpace, app.cloudspaceId, 'CloudSpace');
  }

  /**
   * One atomic request: validated, the address computed here (a client-supplied one is not even
   * accepted), the app row and the outbox entry that creates its PlatformApp written in one
   * transaction. The relay creates the resource, retrying while the API server is away.
   */
  async create(input: AppFields): Promise<App> {
    const tenantId = this.identity.tenantId;
    if (!tenantId) throw new AppError(ErrorCodes.validationFailed, 'apps belong to a tenant; a platform-wide account has none');
    const name = checkAppName(input.name);
    const image = checkImage(input.source);
    const port = checkPort(input.port);
    const resources = checkResources(input.resources);
    const autoscaling = checkAutoscaling(input.autoscaling);
    const replicas = checkReplicas(input.replicas ?? autoscaling?.minReplicas ?? 1);
    const env = checkEnv(input.env);
    const healthCheck = checkHealthCheck(input.healthCheck, port);
    const domain = checkDomain(input.domain, this.runtime.config.apps.baseDomain);
    if (!input.cloudspaceId) throw new AppError(ErrorCodes.validationFailed, 'cloudspace_id is required');
    const space = await findByIdOrNotFound(this.em, CloudSpace, input.cloudspaceId, 'CloudSpace');
    if (space.status !== CloudSpaceStatus.Ready) throw new AppError(ErrorCodes.conflict, `CloudSpace ${space.name} is ${space.status}, not Ready`);
    const vcluster = input.tenantCrName ? checkAppName(input.tenantCrName) : space.defaultVcluster;
    if (vcluster !== space.defaultVcluster) await this.requireVirtualCluster(space, vcluster);
    const app = this.em.create(App, {
      tenantId,
      cloudspaceId: space.id,
      name,
      vcluster,
      image,
      port,
      cpuRequest: resources.cpuRequest,
      memoryRequest: resources.memoryRequest,
      tls: input.tls ?? true,
      domain,
      address: domain ?? `${name}-${space.name}.${this.runtime.config.apps.baseDomain}`,
      replicas,
      autoscaling,
      healthCheck,
      message: 'saved; its resource is being created',
    });
    app.env = this.sealEnv(app.id, env);
    this.queueApply(app, 'created');
    await conflictOnDuplicate(this.em.flush(), `an app named ${name} already exists in CloudSpace ${space.name}`);
    this.nudge();
    return app;
  }

  private async requireVirtualCluster(space: CloudSpace, vcluster: string): Promise<void> {
    const cluster = await findByIdOrNotFound(this.em, Cluster, space.clusterId, 'cluster', {}, { filters: false });
    const clients = await this.orchestrator.cluster(cluster);
    try {
      await clients.custom.getNamespacedCustomObject({ group: 'cluster.x-k8s.io', version: 'v1beta1', namespace: space.namespace, plural: 'clusters', name: vcluster });
    } catch (error) {
      if ((error as { code?: number }).code === 404) throw new AppError(ErrorCodes.validationFailed, `tenant_cr_name: CloudSpace ${space.name} has no virtual cluster ${vcluster}`);
      throw clusterUnavailable(`the cluster of CloudSpace ${space.name}`, error);
    }
  }

  private sealEnv(appId: string, env: { name: string; value: string; secret: boolean }[]): StoredEnvVar[] {
    return env.map((e) => (e.secret ? { name: e.name, value: null, sealed: this.runtime.box.seal(e.value, secretEnvPurpose(appId)), secret: true } : { name: e.name, value: e.value, sealed: null, secret: false }));
  }

  /** Records a change of desired state: a new generation and the outbox entry that applies it. */
  private queueApply(app: App, change: string): void {
    app.change = change.slice(0, 200);
    app.updatedAt = new Date();
    if (app.phase !== AppPhase.Pending) app.generation += 1;
    enqueue(this.em, PLATFORM_APP_EXCHANGE, 'apply', { app_id: app.id, generation: app.generation });
  }

  private nudge(): void {
    this.runtime.appRelay?.nudge();
  }

  /** `PUT /apps/{id}`: the whole configuration again (image, port, resources, tls, domain, autoscaling, env, health check, replicas). */
  async update(id: string, input: AppFields): Promise<App> {
    const app = await this.get(id);
    this.notDeleting(app);
    const changes: string[] = [];
    if (input.source) {
      const image = checkImage(input.source);
      if (image !== app.image) changes.push(`image ${image}`);
      app.image = image;
    }
    if (input.port !== undefined && input.port !== null) app.port = checkPort(input.port);
    if (input.resources) Object.assign(app, checkResources({ cpuRequest: input.resources.cpuRequest ?? app.cpuRequest, memoryRequest: input.resources.memoryRequest ?? app.memoryRequest }));
    if (input.tls !== undefined && input.tls !== null) app.tls = input.tls;
    if (input.domain !== undefined) this.setDomain(app, input.domain);
    if (input.autoscaling !== undefined) app.autoscaling = checkAutoscaling(input.autoscaling);
    if (input.replicas !== undefined && input.replicas !== null) app.replicas = checkReplicas(input.replicas);
    if (input.env) app.env = this.sealEnv(app.id, checkEnv(input.env));
    if (input.healthCheck !== undefined) app.healthCheck = checkHealthCheck(input.healthCheck, app.port);
    if (input.name && input.name !== app.name) throw new AppError(ErrorCodes.validationFailed, 'an app cannot be renamed');
    this.queueApply(app, changes.length > 0 ? changes.join(', ') : 'configuration updated');
    await this.em.flush();
    this.nudge();
    return app;
  }

  private setDomain(app: App, domain: string | null | undefined): void {
    app.domain = checkDomain(domain, this.runtime.config.apps.baseDomain);
  }

  /** `PATCH /apps/{id}/domain`: a custom domain, or null to go back to the platform address. */
  async updateDomain(id: string, domain: string | null): Promise<App> {
    const app = await this.get(id);
    this.notDeleting(app);
    const space = await this.cloudSpaceOf(app);
    this.setDomain(app, domain);
    app.address = app.domain ?? `${app.name}-${space.name}.${this.runtime.config.apps.baseDomain}`;
    this.queueApply(app, `address ${app.address}`);
    await this.em.flush();
    this.nudge();
    return app;
  }

  /** `PUT /apps/{id}/config/env-vars`: replaces the environment. */
  async updateEnv(id: string, env: AppFields['env']): Promise<App> {
    const app = await this.get(id);
    this.notDeleting(app);
    app.env = this.sealEnv(app.id, checkEnv(env));
    this.queueApply(app, `environment: ${app.env.map((e) => e.name).join(', ') || 'none'}`);
    await this.em.flush();
    this.nudge();
    return app;
  }

  private notDeleting(app: App): void {
    if (app.phase === AppPhase.Deleting) throw new AppError(ErrorCodes.conflict, `app ${app.name} is being deleted`);
  }

  /** Runs `fn` against the app's virtual cluster; 503 when it cannot be reached. */
  async inVirtualCluster<T>(app: App, fn: (clients: KubeClients) => Promise<T>): Promise<T> {
    const space = await this.cloudSpaceOf(app);
    const cluster = await findByIdOrNotFound(this.em, Cluster, space.clusterId, 'cluster', {}, { filters: false });
    try {
      return await this.orchestrator.virtualClusters(cluster).with(space.namespace, app.vcluster, fn);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw clusterUnavailable(`virtual cluster ${app.vcluster}`, error);
    }
  }

  /**
   * Instant operations (spec 1 behaviour 7): the Deployment in the virtual cluster changes now,
   * and the same change is written to desired state (and so to Git) at once, so a later
   * reconcile never undoes it.
   */
  async scale(id: string, replicas: number): Promise<App> {
    const app = await this.get(id);
    this.notDeleting(app);
    checkReplicas(replicas);
    if (app.autoscaling) throw new AppError(ErrorCodes.conflict, 'autoscaling manages this app\'s replicas: change autoscaling (PUT /apps/{id}) instead');
    await this.patchDeployment(app, { spec: { replicas } });
    app.replicas = replicas;
    app.stoppedReplicas = null;
    this.queueApply(app, `scaled to ${replicas}`);
    await this.em.flush();
    this.nudge();
    return app;
  }

  async restart(id: string): Promise<App> {
    const app = await this.get(id);
    this.notDeleting(app);
    const at = new Date().toISOString();
    await this.patchDeployment(app, { spec: { template: { metadata: { annotations: { [RESTARTED_AT]: at } } } } });
    app.restartedAt = at;
    this.queueApply(app, 'restarted');
    await this.em.flush();
    this.nudge();
    return app;
  }

  async stop(id: string): Promise<App> {
    const app = await this.get(id);
    this.notDeleting(app);
    if (app.replicas === 0 && app.stoppedReplicas !== null) return app;
    await this.patchDeployment(app, { spec: { replicas: 0 } });
    app.stoppedReplicas = app.replicas || 1;
    app.replicas = 0;
    app.phase = AppPhase.Stopped;
    this.queueApply(app, 'stopped');
    await this.em.flush();
    this.nudge();
    return app;
  }

  async start(id: string): Promise<App> {
    const app = await this.get(id);
    this.notDeleting(app);
    if (app.stoppedReplicas === null) return app;
    const replicas = app.stoppedReplicas;
    await this.patchDeployment(app, { spec: { replicas } });
    app.replicas = replicas;
    app.stoppedReplicas = null;
    app.phase = AppPhase.Deploying;
    this.queueApply(app, `started with ${replicas} replicas`);
    await this.em.flush();
    this.nudge();
    return app;
  }

  private async patchDeployment(app: App, patch: Record<string, unknown>): Promise<void> {
    await this.inVirtualCluster(app, async (clients) => {
      try {
        await clients.apps.patchNamespacedDeployment({ name: app.name, namespace: APP_NAMESPACE, body: patch }, mergePatch);
      } catch (error) {
        if ((error as { code?: number }).code === 404) throw new AppError(ErrorCodes.conflict, `app ${app.name} is not deployed yet`);
        throw error;
      }
    });
  }

  /**
   * Rollback (spec 1 behaviour 6): the chosen revision's image, port, environment and resources
   * become desired state and go through the normal Git path; the GitOps controller converges and
   * a new revision records it.
   */
  async rollback(id: string, target: { revision?: number | null; deploymentId?: string | null }): Promise<{ app: App; revision: number }> {
    const app = await this.get(id);
    this.notDeleting(app);
    const { listRevisions } = await import('./app.revisions.js');
    const revisions = await listRevisions(this, app);
    const chosen = revisions.find((r) => (target.revision !== undefined && target.revision !== null ? r.revision === target.revision : r.id === target.deploymentId));
    if (!chosen) throw new AppError(ErrorCodes.notFound, 'no such revision of this app');
    if (chosen.current) throw new AppError(ErrorCodes.conflict, `revision ${chosen.revision} is the one running`);
    app.image = chosen.image;
    app.port = chosen.port ?? app.port;
    if (chosen.resources.cpuRequest) app.cpuRequest = chosen.resources.cpuRequest;
    if (chosen.resources.memoryRequest) app.memoryRequest = chosen.resources.memoryRequest;
    const byName = new Map(app.env.map((e) => [e.name, e] as const));
    app.env = chosen.env.map((e) => (e.secret ? (byName.get(e.name) ?? { name: e.name, value: null, sealed: null, secret: true }) : { name: e.name, value: e.value ?? '', sealed: null, secret: false }));
    app.phase = AppPhase.Deploying;
    this.queueApply(app, `rolled back to revision ${chosen.revision} (${chosen.image})`);
    await this.em.flush();
    this.nudge();
    return { app, revision: chosen.revision };
  }

  /** Deleting: the relay removes the resource; the controller removes the app from Git and its virtual cluster, emits `app.deleted`, then the row goes. */
  async remove(id: string): Promise<App> {
    const app = await this.get(id);
    if (app.phase === AppPhase.Deleting) return app;
    app.phase = AppPhase.Deleting;
    app.message = 'deleting';
    app.updatedAt = new Date();
    enqueue(this.em, PLATFORM_APP_EXCHANGE, 'delete', { app_id: app.id });
    await this.em.flush();
    this.nudge();
    return app;
  }

  /** The env Secret's data (secret values only), for the relay. */
  secretValues(app: App): Record<string, string> {
    return Object.fromEntries(app.env.filter((e) => e.secret && e.sealed).map((e) => [e.name, this.runtime.box.open(e.sealed!, secretEnvPurpose(app.id))]));
  }
}

/** client-node chooses a patch's content type from this option. */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export { envSecretName };
