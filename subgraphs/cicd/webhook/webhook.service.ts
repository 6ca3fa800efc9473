import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { Pipeline, PipelineProvider, TriggerEvent } from '../pipeline/pipeline.entity.js';
import { normaliseRepository } from '../pipeline/pipeline.service.js';
import { PipelineRun, RunStatus } from '../run/run.entity.js';
import { mergeStages, moveRun, queueRunEvents, type StageReport } from '../run/run.lifecycle.js';
import { RUN_UPDATED, webhookSecretPurpose, type CicdRuntime } from '../runtime.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';

export interface WebhookRequest {
  provider: PipelineProvider;
  /** The raw request body, exactly as received: signatures are over these bytes. */
  payload: string;
  /** host_a: `X-Hub-Signature-256` (`sha256=<hex>`). */
  signature?: string | null;
  /** host_b: `X-Git-Token`. */
  token?: string | null;
  /** host_a: the event header; host_b: taken from the payload's `object_kind`. */
  event?: string | null;
  /** The host's delivery id, for idempotency. */
  deliveryId?: string | null;
}

export interface WebhookReceipt {
  outcome: 'recorded' | 'ignored' | 'duplicate';
  event: string;
  reason: string | null;
  runs: { pipelineId: string; runId: string; status: RunStatus }[];
}

/** What one host event says about the run of a commit. */
interface RunEvidence {
  commit: string;
  branch: string;
  status: RunStatus;
  triggerType: string;
  /** Only a push creates runs on its own; CI events update the run of their commit (or make one). */
  createOnly?: boolean;
  author?: string;
  message?: string;
  startedAt?: Date | null;
  finishedAt?: Date | null;
  stages?: StageReport[];
}

type Json = Record<string, any>;

const constantTimeEqual = (a: string, b: string) => {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
};

/** host_b writes times as `2026-11-21 10:00:00 UTC`. */
function hostTime(value: unknown): Date | null {
  if (typeof value !== 'string' || !value) return null;
  const date = new Date(value.replace(/ UTC$/, 'Z').replace(/^(\d{4}-\d\d-\d\d) /, '$1T'));
  return Number.isNaN(date.getTime()) ? null : date;
}

const branchOf = (ref: unknown) => (typeof ref === 'string' ? ref.replace(/^refs\/heads\//, '') : '');

/** host_a's check and workflow states → run status. */
function hostAStatus(status: unknown, conclusion: unknown): RunStatus {
  if (status === 'queued' || status === 'requested' || status === 'waiting' || status === 'pending') return RunStatus.queued;
  if (status === 'in_progress') return RunStatus.running;
  switch (conclusion) {
    case 'success':
    case 'neutral':
      return RunStatus.success;
    case 'cancelled':
    case 'skipped':
    case 'stale':
      return RunStatus.cancelled;
    default:
      return RunStatus.failed;
  }
}

/** host_b's pipeline states → run status. */
function hostBStatus(status: unknown): RunStatus {
  switch (status) {
    case 'running':
      return RunStatus.running;
    case 'success':
      return RunStatus.success;
    case 'failed':
      return RunStatus.failed;
    case 'canceled':
    case 'cancelled':
    case 'skipped':
      return RunStatus.cancelled;
    default:
      return RunStatus.queued;
  }
}

/**
 * Inbound Git-host webhooks (spec 4.4, 5.8). A delivery is matched to pipelines by repository
 * name (several tenants may watch one repository), verified against each pipeline's own secret
 * in constant time, and recorded for every pipeline it verifies for. Redeliveries of a delivery
 * id change nothing.
 */
export class WebhookService {
  constructor(
    private readonly em: EntityManager,
    private readonly runtime: CicdRuntime,
  ) {}

  async receive(request: WebhookRequest): Promise<WebhookReceipt> {
    let body: Json;
    try {
      body = JSON.parse(request.payload) as Json;
    } catch {
      throw new AppError(ErrorCodes.badRequest, 'webhook payload is not JSON');
    }
    if (!body || typeof body !== 'object') throw new AppError(ErrorCodes.badRequest, 'webhook payload is not a JSON object');
    const repository =
      request.provider === PipelineProvider.host_a ? body.repository?.full_name : (body.project?.path_with_namespace ?? body.repository?.path_with_namespace);
    if (typeof repository !== 'string' || !repository) throw new AppError(ErrorCodes.badRequest, 'webhook payload names no repository');
    const candidates = await this.em.find(Pipeline, { repository: normaliseRepository(repository), provider: request.provider }, { filters: false });
    if (candidates.length === 0) throw new AppError(ErrorCodes.notFound, `no pipeline watches repository ${repository}`);
    const verified = candidates.filter((p) => this.verifies(p, request));
    if (verified.length === 0) throw new AppError(ErrorCodes.unauthenticated, request.provider === PipelineProvider.host_a ? 'X-Hub-Signature-256 does not match' : 'X-Git-Token does not match');

    const event = request.provider === PipelineProvider.host_a ? (request.event ?? '') : String(body.object_kind ?? request.event ?? '');
    const evidence = request.provider === PipelineProvider.host_a ? hostAEvidence(event, body) : hostBEvidence(event, body);
    if (typeof evidence === 'string') return { outcome: 'ignored', event, reason: evidence, runs: [] };

    const runs: WebhookReceipt['runs'] = [];
    let queued = false;
    let duplicates = 0;
    let ignored = '';
    for (const pipeline of verified) {
      const result = await this.record(pipeline, request, event, evidence);
      if (result === 'duplicate') duplicates += 1;
      else if (typeof result === 'string') ignored = result;
      else {
        runs.push({ pipelineId: pipeline.id, runId: result.run.id, status: result.run.status });
        queued ||= result.queued;
      }
    }
    // Wake the relay only when there is something to publish: a push queues no event.
    if (queued) this.runtime.relay.nudge();
    if (runs.length === 0 && duplicates > 0) return { outcome: 'duplicate', event, reason: 'this delivery was already recorded', runs: [] };
    if (runs.length === 0) return { outcome: 'ignored', event, reason: ignored || 'nothing to record', runs: [] };
    return { outcome: 'recorded', event, reason: null, runs };
  }

  private verifies(pipeline: Pipeline, request: WebhookRequest): boolean {
    const secret = this.runtime.box.open(pipeline.webhookSecretSealed, webhookSecretPurpose(pipeline.id));
    if (request.provider === PipelineProvider.host_a) {
      if (!request.signature?.startsWith('sha256=')) return false;
      const expected = `sha256=${createHmac('sha256', secret).update(request.payload, 'utf8').digest('hex')}`;
      return constantTimeEqual(expected, request.signature.toLowerCase());
    }
    return !!request.token && constantTimeEqual(secret, request.token);
  }

  private async record(pipeline: Pipeline, request: WebhookRequest, event: string, evidence: RunEvidence): Promise<{ run: PipelineRun; queued: boolean } | 'duplicate' | string> {
    if (evidence.triggerType === TriggerEvent.push && !pipeline.triggerEvents.includes(TriggerEvent.push)) return 'the pipeline does not run on push';
    try {
      return await this.em.transactional(async (em) => {
        if (request.deliveryId) em.create(WebhookDelivery, { provider: request.provider, deliveryId: request.deliveryId, pipelineId: pipeline.id, event, outcome: 'recorded' });
        const existing: PipelineRun | null = evidence.createOnly
          ? null
          : await em.findOne(PipelineRun, { pipelineId: pipeline.id, commit: evidence.commit }, { filters: false, orderBy: { createdAt: 'desc' }, populate: ['stages'] });
        let run: PipelineRun;
        let queued: boolean;
        if (!existing) {
          if (evidence.branch && evidence.branch !== pipeline.branch) return `branch ${evidence.branch} is not the pipeline's branch`;
          run = em.create(PipelineRun, {
            pipelineId: pipeline.id,
            tenantId: pipeline.tenantId,
            commit: evidence.commit,
            branch: evidence.branch || pipeline.branch,
            triggerType: evidence.triggerType,
            author: evidence.author ?? '',
            message: evidence.message ?? '',
          });
          moveRun(run, { status: evidence.status, startedAt: evidence.startedAt ?? null, finishedAt: evidence.finishedAt ?? null });
          queued = queueRunEvents(em, run, pipeline, RunStatus.queued);
        } else {
          run = existing;
          const previous = run.status;
          // Hosts deliver out of order and repeat themselves: a late or stale state is not an
          // error here, it is simply not applied.
          try {
            moveRun(run, { status: evidence.status, startedAt: evidence.startedAt ?? null, finishedAt: evidence.finishedAt ?? null });
          } catch (error) {
            if (!(error instanceof AppError) || error.definition !== ErrorCodes.invalidTransition) throw error;
          }
          queued = queueRunEvents(em, run, pipeline, previous);
        }
        if (evidence.stages?.length) mergeStages(em, run, evidence.stages);
        await em.flush();
        this.runtime.pubSub.publish(RUN_UPDATED, { tenantId: run.tenantId, pipelineId: run.pipelineId, runId: run.id });
        return { run, queued };
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) return 'duplicate';
      throw error;
    }
  }
}

function hostAEvidence(event: string, body: Json): RunEvidence | string {
  switch (event) {
    case 'push': {
      if (body.deleted || /^0+$/.test(String(body.after ?? ''))) return 'a deleted branch builds nothing';
      const commit = body.head_commit?.id ?? body.after;
      if (typeof commit !== 'string' || !commit) return 'push names no commit';
      return {
        commit,
        branch: branchOf(body.ref),
        status: RunStatus.queued,
        triggerType: TriggerEvent.push,
        createOnly: true,
        author: body.head_commit?.author?.username ?? body.head_commit?.author?.name ?? body.pusher?.name ?? '',
        message: body.head_commit?.message ?? '',
      };
    }
    case 'workflow_run': {
      const run = body.workflow_run;
      if (!run?.head_sha) return 'workflow_run names no commit';
      return {
        commit: run.head_sha,
        branch: run.head_branch ?? '',
        status: hostAStatus(run.status, run.conclusion),
        triggerType: run.event ?? 'workflow_run',
        author: run.actor?.login ?? run.head_commit?.author?.name ?? '',
        message: run.head_commit?.message ?? run.display_title ?? '',
        startedAt: run.run_started_at ? new Date(run.run_started_at) : null,
        finishedAt: run.status === 'completed' && run.updated_at ? new Date(run.updated_at) : null,
        stages: run.name ? [{ name: run.name, status: run.conclusion ?? run.status, logUrl: run.html_url ?? null }] : [],
      };
    }
    case 'check_suite': {
      const suite = body.check_suite;
      if (!suite?.head_sha) return 'check_suite names no commit';
      return {
        commit: suite.head_sha,
        branch: suite.head_branch ?? '',
        status: hostAStatus(suite.status, suite.conclusion),
        triggerType: 'check_suite',
        author: suite.head_commit?.author?.name ?? '',
        message: suite.head_commit?.message ?? '',
        finishedAt: suite.status === 'completed' && suite.updated_at ? new Date(suite.updated_at) : null,
      };
    }
    default:
      return `event "${event || 'unknown'}" is not recorded (push, workflow_run and check_suite are)`;
  }
}

function hostBEvidence(event: string, body: Json): RunEvidence | string {
  if (event !== 'pipeline') return `event "${event || 'unknown'}" is not recorded (pipeline is)`;
  const attributes = body.object_attributes;
  if (!attributes?.sha) return 'pipeline event names no commit';
  const builds: Json[] = Array.isArray(body.builds) ? [...body.builds] : [];
  builds.sort((a, b) => Number(a.id ?? 0) - Number(b.id ?? 0));
  return {
    commit: attributes.sha,
    branch: branchOf(attributes.ref),
    status: hostBStatus(attributes.status),
    triggerType: attributes.source ?? 'push',
    author: body.user?.username ?? body.commit?.author?.name ?? '',
    message: body.commit?.message ?? '',
    startedAt: hostTime(attributes.created_at),
    finishedAt: hostTime(attributes.finished_at),
    stages: builds.map((b) => ({
      name: String(b.name ?? b.stage ?? `job ${b.id}`),
      status: String(b.status ?? 'unknown'),
      startedAt: hostTime(b.started_at),
      finishedAt: hostTime(b.finished_at),
      durationSecs: typeof b.duration === 'number' ? Math.round(b.duration) : null,
    })),
  };
}
