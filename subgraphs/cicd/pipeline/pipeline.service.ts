import type { EntityManager } from '@mikro-orm/postgresql';
import { findByIdOrNotFound } from '../../../kernel/db.js';
import { randomBytes } from 'node:crypto';
import { AppError, ErrorCodes, notFound } from '../../../kernel/errors.js';
import { generateCredentialValue, hashCredential } from '../../../kernel/credentials.js';
import type { Identity } from '../../../kernel/identity.js';
import { pageNewestFirst, type PageOfRows } from '../../../kernel/pagination.js';
import { NO_TENANT, TENANT_FILTER } from '../../../kernel/tenancy.js';
import { PipelineRun } from '../run/run.entity.js';
import { webhookSecretPurpose, type CicdRuntime } from '../runtime.js';
import { Pipeline, PipelineProvider, TriggerEvent } from './pipeline.entity.js';

export interface PipelineFields {
  name?: string | null;
  repository?: string | null;
  branch?: string | null;
  provider?: PipelineProvider | null;
  triggerEvents?: TriggerEvent[] | null;
  deployClusterId?: string | null;
}

/** A pipeline just created or re-keyed, with its secrets, shown this once. */
export interface PipelineSecrets {
  pipeline: Pipeline;
  webhookSecret: string;
  reportingToken: string;
  webhookUrl: string | null;
}

export interface RunSummary {
  runs: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  inProgress: number;
  successRate: number | null;
  averageDurationSecs: number | null;
  since: Date;
}

const REPOSITORY = /^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/;
const BRANCH = /^[^\s~^:?*[\\]{1,255}$/;

export const normaliseRepository = (value: string): string => value.trim().replace(/\.git$/, '').toLowerCase();

function checkFields(fields: PipelineFields): void {
  if (fields.name !== undefined && (!fields.name || fields.name.trim().length < 1 || fields.name.trim().length > 100)) {
    throw new AppError(ErrorCodes.validationFailed, 'name must be 1 to 100 characters');
  }
  if (fields.repository !== undefined && (!fields.repository || !REPOSITORY.test(fields.repository.trim()))) {
    throw new AppError(ErrorCodes.validationFailed, 'repository must look like owner/name');
  }
  if (fields.branch !== undefined && (!fields.branch || !BRANCH.test(fields.branch))) throw new AppError(ErrorCodes.validationFailed, 'branch is not a valid branch name');
  if (fields.triggerEvents !== undefined && fields.triggerEvents !== null && fields.triggerEvents.length === 0) {
    throw new AppError(ErrorCodes.validationFailed, 'trigger_events needs at least one of push, pull_request, manual, schedule');
  }
}

/** Pipelines of the caller's tenant (spec 4.3, 4.4). */
export class PipelineService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
    private readonly runtime: CicdRuntime,
  ) {}

  list(args: { limit?: number | null; cursor?: string | null }): Promise<PageOfRows<Pipeline>> {
    return pageNewestFirst<Pipeline>(this.em, Pipeline, 'pipelines', {}, args);
  }

  async get(id: string): Promise<Pipeline> {
    return findByIdOrNotFound(this.em, Pipeline, id, 'pipeline');
  }

  async create(input: PipelineFields & { name: string; repository: string; provider: PipelineProvider }): Promise<PipelineSecrets> {
    const tenantId = this.identity.tenantId;
    if (!tenantId) throw new AppError(ErrorCodes.validationFailed, 'pipelines belong to a tenant; a platform-wide account has none');
    checkFields({ ...input, branch: input.branch ?? 'main' });
    const pipeline = this.em.create(Pipeline, {
      tenantId,
      name: input.name.trim(),
      repository: normaliseRepository(input.repository),
      branch: input.branch?.trim() || 'main',
      provider: input.provider,
      triggerEvents: input.triggerEvents?.length ? [...new Set(input.triggerEvents)] : [TriggerEvent.push, TriggerEvent.manual],
      deployClusterId: input.deployClusterId ?? null,
      webhookSecretSealed: '',
      reportingTokenHash: '',
    });
    const secrets = this.rekey(pipeline);
    await this.em.flush();
    return secrets;
  }

  async update(id: string, input: PipelineFields): Promise<Pipeline> {
    const pipeline = await this.get(id);
    checkFields(input);
    if (input.name) pipeline.name = input.name.trim();
    if (input.repository) pipeline.repository = normaliseRepository(input.repository);
    if (input.branch) pipeline.branch = input.branch.trim();
    if (input.provider) pipeline.provider = input.provider;
    if (input.triggerEvents) pipeline.triggerEvents = [...new Set(input.triggerEvents)];
    if (input.deployClusterId !== undefined) pipeline.deployClusterId = input.deployClusterId;
    pipeline.updatedAt = new Date();
    await this.em.flush();
    return pipeline;
  }

  async remove(id: string): Promise<void> {
    const pipeline = await this.get(id);
    // Stages go with their runs (on delete cascade).
    await this.em.nativeDelete(PipelineRun, { pipelineId: pipeline.id });
    await this.em.nativeDelete(Pipeline, { id: pipeline.id });
  }

  /** Replaces the webhook secret and the reporting token; the old ones stop working at once. */
  async rotateSecrets(id: string): Promise<PipelineSecrets> {
    const pipeline = await this.get(id);
    const secrets = this.rekey(pipeline);
    pipeline.updatedAt = new Date();
    await this.em.flush();
    return secrets;
  }

  private rekey(pipeline: Pipeline): PipelineSecrets {
    const webhookSecret = randomBytes(32).toString('base64url');
    const reportingToken = generateCredentialValue('pipeline_token');
    pipeline.webhookSecretSealed = this.runtime.box.seal(webhookSecret, webhookSecretPurpose(pipeline.id));
    pipeline.reportingTokenHash = hashCredential(reportingToken);
    const webhookUrl = pipeline.provider === PipelineProvider.generic ? null : `${this.runtime.config.publicUrl}/cicd/webhook/${pipeline.provider}`;
    return { pipeline, webhookSecret, reportingToken, webhookUrl };
  }

  async runs(pipelineId: string, args: { limit?: number | null; cursor?: string | null }): Promise<PageOfRows<PipelineRun>> {
    const pipeline = await this.get(pipelineId);
    return pageNewestFirst<PipelineRun>(this.em, PipelineRun, `runs:${pipeline.id}`, { pipelineId: pipeline.id }, args, ['stages']);
  }

  async findRun(pipelineId: string, commit: string): Promise<PipelineRun> {
    const pipeline = await this.get(pipelineId);
    const sha = commit.trim();
    if (!sha) throw new AppError(ErrorCodes.validationFailed, 'commit is required');
    const run = await this.em.findOne(PipelineRun, { pipelineId: pipeline.id, commit: sha }, { orderBy: { createdAt: 'desc' }, populate: ['stages'] });
    if (!run) throw notFound('run for this commit');
    return run;
  }

  /**
   * The last 7 days in one SQL statement: runs, outcomes, success rate (successes over finished
   * runs) and average duration of finished runs.
   */
  async summary(pipelineId?: string): Promise<RunSummary> {
    if (pipelineId) await this.get(pipelineId);
    const params = this.em.getFilterParams<{ tenantId: string | null; allTenants: boolean }>(TENANT_FILTER);
    const knex = this.em.getKnex();
    const since = new Date(Date.now() - 7 * 24 * 3600 * 1000);
    const query = knex
      .withSchema('cicd')
      .from('pipeline_run')
      .where('created_at', '>', since)
      .select(
        knex.raw('count(*)::int as runs'),
        knex.raw("(count(*) filter (where status = 'success'))::int as succeeded"),
        knex.raw("(count(*) filter (where status = 'failed'))::int as failed"),
        knex.raw("(count(*) filter (where status = 'cancelled'))::int as cancelled"),
        knex.raw("(count(*) filter (where status in ('queued', 'running')))::int as in_progress"),
        knex.raw("avg(duration_secs) filter (where status in ('success', 'failed', 'cancelled') and duration_secs is not null) as avg_duration"),
      );
    if (!params.allTenants) query.where('tenant_id', params.tenantId ?? NO_TENANT);
    if (pipelineId) query.where('pipeline_id', pipelineId);
    const [row] = (await query) as { runs: number; succeeded: number; failed: number; cancelled: number; in_progress: number; avg_duration: string | null }[];
    const finished = row!.succeeded + row!.failed + row!.cancelled;
    return {
      runs: row!.runs,
      succeeded: row!.succeeded,
      failed: row!.failed,
      cancelled: row!.cancelled,
      inProgress: row!.in_progress,
      successRate: finished === 0 ? null : Math.round((row!.succeeded / finished) * 10_000) / 10_000,
      averageDurationSecs: row!.avg_duration === null ? null : Math.round(Number(row!.avg_duration) * 10) / 10,
      since,
    };
  }
}
