import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { EXCHANGES } from '../../../kernel/bus.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { enqueue } from '../../../kernel/outbox.js';
import type { Pipeline } from '../pipeline/pipeline.entity.js';
import { FINISHED, RunStatus, StageRun, type PipelineRun } from './run.entity.js';

/** The forward order of run statuses; a run only moves forward, and never leaves a finished one. */
const RANK: Record<RunStatus, number> = { queued: 0, running: 1, success: 2, failed: 2, cancelled: 2 };

export interface StageReport {
  name: string;
  status: string;
  startedAt?: Date | null;
  finishedAt?: Date | null;
  errorMessage?: string | null;
  logExcerpt?: string | null;
  exitCode?: number | null;
  logUrl?: string | null;
  durationSecs?: number | null;
}

export interface RunChange {
  status?: RunStatus | null;
  startedAt?: Date | null;
  finishedAt?: Date | null;
  clusterId?: string | null;
  stages?: StageReport[] | null;
}

const seconds = (from: Date | null, to: Date | null) => (from && to ? Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000)) : null);

/** Excerpts of logs are kept short; the full log lives behind `log_url`. */
const LOG_EXCERPT_MAX = 8 * 1024;

/**
 * Applies a status change under the run rules: queued → running → success | failed | cancelled,
 * never backwards, and a finished run keeps its status (409 `invalid_transition`). Entering
 * `running` stamps `started_at`, finishing stamps `finished_at`, and the duration is computed.
 * Returns whether the status changed.
 */
export function moveRun(run: PipelineRun, change: RunChange, now = new Date()): boolean {
  if (change.startedAt) run.startedAt = change.startedAt;
  if (change.clusterId !== undefined && change.clusterId !== null) run.clusterId = change.clusterId;
  const target = change.status ?? run.status;
  const moved = target !== run.status;
  if (moved) {
    if (FINISHED.includes(run.status)) throw new AppError(ErrorCodes.invalidTransition, `run is already ${run.status}; a finished run does not change status`);
    if (RANK[target] < RANK[run.status]) throw new AppError(ErrorCodes.invalidTransition, `a ${run.status} run cannot go back to ${target}`);
    run.status = target;
  }
  if (run.status !== RunStatus.queued) run.startedAt ??= now;
  if (FINISHED.includes(run.status)) {
    if (change.finishedAt) run.finishedAt = change.finishedAt;
    run.finishedAt ??= now;
  } else if (change.finishedAt) {
    throw new AppError(ErrorCodes.validationFailed, 'finished_at needs a finished status (success, failed or cancelled)');
  }
  run.durationSecs = seconds(run.startedAt, run.finishedAt);
  run.updatedAt = now;
  return moved;
}

/** Stages are matched by name within the run; new names are appended in report order. */
export function mergeStages(em: EntityManager, run: PipelineRun, reports: readonly StageReport[]): void {
  const existing = new Map(run.stages.getItems().map((s) => [s.name, s]));
  let position = run.stages.length;
  for (const report of reports) {
    let stage = existing.get(report.name);
    if (!stage) {
      stage = em.create(StageRun, { run, name: report.name, status: report.status, position: position++ });
      run.stages.add(stage);
      existing.set(report.name, stage);
    }
    stage.status = report.status;
    if (report.startedAt !== undefined) stage.startedAt = report.startedAt;
    if (report.finishedAt !== undefined) stage.finishedAt = report.finishedAt;
    if (report.errorMessage !== undefined) stage.errorMessage = report.errorMessage;
    if (report.logExcerpt !== undefined) stage.logExcerpt = report.logExcerpt === null ? null : report.logExcerpt.slice(-LOG_EXCERPT_MAX);
    if (report.exitCode !== undefined) stage.exitCode = report.exitCode;
    if (report.logUrl !== undefined) stage.logUrl = report.logUrl;
    stage.durationSecs = report.durationSecs ?? seconds(stage.startedAt, stage.finishedAt) ?? stage.durationSecs;
  }
}

/** What every CI/CD event says about a run. */
export function runEventData(run: PipelineRun, pipeline: Pipeline): Record<string, unknown> {
  return {
    run_id: run.id,
    pipeline_id: pipeline.id,
    pipeline_name: pipeline.name,
    repository: pipeline.repository,
    provider: pipeline.provider,
    status: run.status,
    trigger_type: run.triggerType,
    commit: run.commit,
    branch: run.branch,
    author: run.author,
    message: run.message,
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    duration_secs: run.durationSecs,
    cluster_id: run.clusterId,
  };
}

function envelope(type: string, tenantId: string, data: Record<string, unknown>) {
  const id = randomUUID();
  return { id, body: { id, type, occurred_at: new Date().toISOString(), tenant_id: tenantId, data } };
}

/**
 * Queues the events a status change means, in the caller's transaction (spec 6):
 * `cicd.{provider}.run_started` on entering running; `.run_completed` on success; `.run_failed`
 * on failure; `.deployed` when a run that deploys (its report named a cluster, or its pipeline
 * has `deploy_cluster_id`) finishes successfully; and the platform event
 * `pipeline.run_completed` for outbound webhooks on every finish, cancelled included.
 * Returns whether anything was queued (a new queued run queues nothing).
 */
export function queueRunEvents(em: EntityManager, run: PipelineRun, pipeline: Pipeline, previous: RunStatus): boolean {
  if (run.status === previous) return false;
  if (run.status === RunStatus.success) run.clusterId ??= pipeline.deployClusterId;
  const data = runEventData(run, pipeline);
  const cicd = (suffix: string) => {
    const event = envelope(`cicd.${pipeline.provider}.${suffix}`, run.tenantId, data);
    enqueue(em, EXCHANGES.cicd, event.body.type, event.body, event.id);
  };
  if (run.status === RunStatus.running || (previous === RunStatus.queued && FINISHED.includes(run.status))) cicd('run_started');
  if (run.status === RunStatus.success) cicd('run_completed');
  if (run.status === RunStatus.failed) cicd('run_failed');
  if (run.status === RunStatus.success && run.clusterId) cicd('deployed');
  if (FINISHED.includes(run.status)) {
    const event = envelope('pipeline.run_completed', run.tenantId, data);
    enqueue(em, EXCHANGES.platform, 'pipeline.run_completed', event.body, event.id);
  }
  return true;
}
