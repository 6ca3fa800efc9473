import type { EntityManager } from '@mikro-orm/postgresql';
import { timingSafeEqual } from 'node:crypto';
import { AppError, ErrorCodes, isUuid, notFound } from '../../../kernel/errors.js';
import { hashCredential } from '../../../kernel/credentials.js';
import { Pipeline } from '../pipeline/pipeline.entity.js';
import { RUN_UPDATED, type CicdRuntime } from '../runtime.js';
import { PipelineRun, RunStatus } from './run.entity.js';
import { mergeStages, moveRun, queueRunEvents, type RunChange, type StageReport } from './run.lifecycle.js';

export interface NewRunReport {
  status?: RunStatus | null;
  triggerType?: string | null;
  commit: string;
  branch?: string | null;
  author?: string | null;
  message?: string | null;
  startedAt?: Date | null;
  finishedAt?: Date | null;
  clusterId?: string | null;
  stages?: StageReport[] | null;
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Runs reported by a CI system with the pipeline's reporting token (`X-Pipeline-Token`, spec
 * 5.7): no user token, and a token only ever reaches its own pipeline's runs.
 */
export class RunReportService {
  constructor(
    private readonly em: EntityManager,
    private readonly runtime: CicdRuntime,
  ) {}

  /** The pipeline the token belongs to, which must be `pipelineId` when one is named. */
  private async pipelineOf(token: string | null | undefined, pipelineId?: string): Promise<Pipeline> {
    if (!token) throw new AppError(ErrorCodes.unauthenticated, 'X-Pipeline-Token is required');
    const hash = hashCredential(token);
    const pipeline = await this.em.findOne(Pipeline, { reportingTokenHash: hash }, { filters: false });
    // The lookup is by hash; the comparison below also keeps an attacker from learning anything
    // from timing about which pipeline a guessed token might have matched.
    if (!pipeline || !sameHash(pipeline.reportingTokenHash, hash)) throw new AppError(ErrorCodes.unauthenticated, 'pipeline token is not valid');
    if (pipelineId !== undefined && pipeline.id !== pipelineId) throw new AppError(ErrorCodes.forbidden, 'this token belongs to another pipeline');
    return pipeline;
  }

  async create(pipelineId: string, token: string | null | undefined, report: NewRunReport): Promise<PipelineRun> {
    if (!isUuid(pipelineId)) throw notFound('pipeline');
    const pipeline = await this.pipelineOf(token, pipelineId);
    const commit = report.commit.trim();
    if (!commit || commit.length > 100) throw new AppError(ErrorCodes.validationFailed, 'commit must be 1 to 100 characters');
    const run = this.em.create(PipelineRun, {
      pipelineId: pipeline.id,
      tenantId: pipeline.tenantId,
      commit,
      triggerType: report.triggerType?.trim() || 'manual',
      branch: report.branch?.trim() || pipeline.branch,
      author: report.author ?? '',
      message: report.message ?? '',
    });
    const change: RunChange = {
      status: report.status ?? RunStatus.queued,
      startedAt: report.startedAt ?? null,
      finishedAt: report.finishedAt ?? null,
      clusterId: report.clusterId ?? null,
    };
    moveRun(run, change);
    if (report.stages?.length) mergeStages(this.em, run, report.stages);
    const queued = queueRunEvents(this.em, run, pipeline, RunStatus.queued);
    await this.em.flush();
    this.published(run, queued);
    return run;
  }

  async update(runId: string, token: string | null | undefined, change: RunChange): Promise<PipelineRun> {
    const pipeline = await this.pipelineOf(token);
    const run = isUuid(runId) ? await this.em.findOne(PipelineRun, { id: runId }, { filters: false, populate: ['stages'] }) : null;
    if (!run) throw notFound('run');
    // Another pipeline's run is not this token's business, and its existence is not revealed.
    if (run.pipelineId !== pipeline.id) throw notFound('run');
    const previous = run.status;
    moveRun(run, change);
    if (change.stages?.length) mergeStages(this.em, run, change.stages);
    const queued = queueRunEvents(this.em, run, pipeline, previous);
    await this.em.flush();
    this.published(run, queued);
    return run;
  }

  /** After commit: relay the events now (when there are any), and tell subscribers. */
  private published(run: PipelineRun, queued: boolean): void {
    if (queued) this.runtime.relay.nudge();
    this.runtime.pubSub.publish(RUN_UPDATED, { tenantId: run.tenantId, pipelineId: run.pipelineId, runId: run.id });
  }
}
