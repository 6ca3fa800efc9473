import { sign, verify } from '@octokit/webhooks-methods';
import amqp from 'amqplib';
import { createClient } from 'graphql-ws/client';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { WebSocket } from 'ws';
import { expectError, httpClient } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const TENANT_A = '0e000000-0000-4000-8000-00000000000e';
const TENANT_B = '0f000000-0000-4000-8000-00000000000f';

let stack: Stack;
let tokenA: string;
let tokenB: string;

beforeAll(async () => {
  stack = await startStack('e2e_cicd');
  tokenA = await stack.token({ subject: 'alice', tenantId: TENANT_A, roles: ['admin'], scopes: ['read', 'deploy'] });
  tokenB = await stack.token({ subject: 'bob', tenantId: TENANT_B, roles: ['admin'], scopes: ['read', 'deploy'] });
});

afterAll(async () => {
  await stack?.stop();
});

const call = httpClient(() => stack.base);

let repoCounter = 0;
async function createPipeline(token = tokenA, fields: Record<string, unknown> = {}) {
  repoCounter += 1;
  const r = await call('POST', '/cicd/api/v1/pipelines', { token, body: { name: `shop ${repoCounter}`, repository: `Acme/Shop-${repoCounter}`, provider: 'host_a', ...fields } });
  expect(r.status).toBe(201);
  return r.json as { webhook_secret: string; reporting_token: string; webhook_url: string; pipeline: any };
}

const report = (method: string, path: string, token: string, body: unknown) => call(method, `/cicd/api/v1${path}`, { headers: { 'x-pipeline-token': token }, body });

function pushPayload(repository: string, commit: string, branch = 'main') {
  return JSON.stringify({
    ref: `refs/heads/${branch}`,
    before: '0'.repeat(40),
    after: commit,
    created: false,
    deleted: false,
    forced: false,
    head_commit: { id: commit, message: 'Fix checkout', timestamp: '2026-11-21T10:00:00Z', author: { name: 'Alice', email: 'alice@example.com', username: 'alice' } },
    repository: { id: 1, name: repository.split('/')[1], full_name: repository, private: true, owner: { login: repository.split('/')[0] } },
    pusher: { name: 'alice', email: 'alice@example.com' },
    sender: { login: 'alice', id: 1 },
  });
}

async function hostA(event: string, payload: string, secret: string, deliveryId = randomUUID()) {
  return call('POST', '/cicd/webhook/host_a', {
    raw: payload,
    headers: { 'x-hub-signature-256': await sign(secret, payload), 'x-github-event': event, 'x-github-delivery': deliveryId, 'content-type': 'application/json' },
  });
}

describe('pipelines', () => {
  it('creates a pipeline and shows its secrets once, stored encrypted and hashed', async () => {
    const created = await createPipeline();
    expect(created.pipeline).toMatchObject({ tenant_id: TENANT_A, repository: `acme/shop-${repoCounter}`, branch: 'main', provider: 'host_a', trigger_events: ['push', 'manual'] });
    expect(created.webhook_url).toBe('http://127.0.0.1:8000/api/cicd/webhook/host_a');
    expect(created.reporting_token).toMatch(/^cop_ppl_/);
    const detail = await call('GET', `/cicd/api/v1/pipelines/${created.pipeline.id}`, { token: tokenA });
    expect(JSON.stringify(detail.json)).not.toContain(created.webhook_secret);
    const db = new pg.Client({ connectionString: stack.database.url });
    await db.connect();
    const { rows } = await db.query('select webhook_secret_sealed, reporting_token_hash from cicd.pipeline where id = $1', [created.pipeline.id]);
    await db.end();
    expect(rows[0].webhook_secret_sealed).toMatch(/^v1\./);
    expect(rows[0].webhook_secret_sealed).not.toContain(created.webhook_secret);
    expect(rows[0].reporting_token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('serves the same pipelines at the platform front door, tenant-scoped', async () => {
    const created = await createPipeline();
    const viaPlatform = await call('GET', `/platform/api/v1/pipelines/${created.pipeline.id}`, { token: tokenA });
    expect(viaPlatform.status).toBe(200);
    expect(viaPlatform.json.id).toBe(created.pipeline.id);
    expectError(await call('GET', `/platform/api/v1/pipelines/${created.pipeline.id}`, { token: tokenB }), 404, 'not_found');
    expectError(await call('PATCH', `/cicd/api/v1/pipelines/${created.pipeline.id}`, { token: tokenB, body: { name: 'x' } }), 404, 'not_found');
    const listB = await call('GET', '/platform/api/v1/pipelines', { token: tokenB });
    expect(listB.json.data.map((p: any) => p.id)).not.toContain(created.pipeline.id);
    const patched = await call('PATCH', `/platform/api/v1/pipelines/${created.pipeline.id}`, { token: tokenA, body: { branch: 'release', trigger_events: ['push', 'schedule'] } });
    expect(patched.json).toMatchObject({ branch: 'release', trigger_events: ['push', 'schedule'] });
  });

  it('validates pipelines', async () => {
    expectError(await call('POST', '/cicd/api/v1/pipelines', { token: tokenA, body: { name: 'x', repository: 'acme/x', provider: 'host_c' } }), 400, 'validation_failed');
    expectError(await call('POST', '/cicd/api/v1/pipelines', { token: tokenA, body: { name: 'x', repository: 'not a repo', provider: 'host_a' } }), 400, 'validation_failed');
    expectError(await call('POST', '/cicd/api/v1/pipelines', { token: tokenA, body: { name: 'x', repository: 'acme/x', provider: 'generic', trigger_events: ['nightly'] } }), 400, 'validation_failed');
    expectError(await call('POST', '/cicd/api/v1/pipelines', { token: tokenA, body: { name: 'x', repository: 'acme/x', provider: 'generic', trigger_events: [] } }), 400, 'validation_failed');
    const reader = await stack.token({ subject: 'r', tenantId: TENANT_A, scopes: ['read'] });
    expectError(await call('POST', '/cicd/api/v1/pipelines', { token: reader, body: { name: 'x', repository: 'acme/x', provider: 'generic' } }), 403, 'forbidden');
  });
});

describe('runs reported with the reporting token', () => {
  it('creates and moves a run through its statuses, merging stages by name and computing durations', async () => {
    const { pipeline, reporting_token: token } = await createPipeline();
    const created = await report('POST', `/pipelines/${pipeline.id}/runs`, token, { commit: 'abc123', trigger_type: 'push', branch: 'main', author: 'alice', message: 'm' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'queued', commit: 'abc123', started_at: null, stages: [] });

    const start = '2026-11-21T10:00:00.000Z';
    const running = await report('PATCH', `/runs/${created.json.id}`, token, { status: 'running', started_at: start, stages: [{ name: 'build', status: 'running', started_at: start }] });
    expect(running.json).toMatchObject({ status: 'running', started_at: start });
    const done = await report('PATCH', `/runs/${created.json.id}`, token, {
      status: 'success',
      finished_at: '2026-11-21T10:05:00.000Z',
      stages: [
        { name: 'build', status: 'success', finished_at: '2026-11-21T10:02:00.000Z' },
        { name: 'test', status: 'success', duration_secs: 170, exit_code: 0, log_url: 'https://ci.example.com/logs/1', log_excerpt: 'ok' },
      ],
    });
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ status: 'success', duration_secs: 300, finished_at: '2026-11-21T10:05:00.000Z' });
    expect(done.json.stages.map((s: any) => [s.name, s.status, s.duration_secs])).toEqual([
      ['build', 'success', 120],
      ['test', 'success', 170],
    ]);

    const again = await report('PATCH', `/runs/${created.json.id}`, token, { status: 'failed' });
    expectError(again, 409, 'invalid_transition');
    const back = await report('POST', `/pipelines/${pipeline.id}/runs`, token, { commit: 'def456', status: 'running' });
    expectError(await report('PATCH', `/runs/${back.json.id}`, token, { status: 'queued' }), 409, 'invalid_transition');
  });

  it('refuses another pipeline\'s token and a missing one', async () => {
    const a = await createPipeline();
    const b = await createPipeline();
    const run = await report('POST', `/pipelines/${a.pipeline.id}/runs`, a.reporting_token, { commit: 'c1' });
    expectError(await report('POST', `/pipelines/${a.pipeline.id}/runs`, b.reporting_token, { commit: 'c2' }), 403, 'forbidden');
    expectError(await report('PATCH', `/runs/${run.json.id}`, b.reporting_token, { status: 'running' }), 404, 'not_found');
    expectError(await call('PATCH', `/cicd/api/v1/runs/${run.json.id}`, { body: { status: 'running' } }), 401, 'unauthenticated');
    expectError(await report('PATCH', `/runs/${run.json.id}`, 'cop_ppl_not-a-token', { status: 'running' }), 401, 'unauthenticated');
    const still = await call('GET', `/cicd/api/v1/pipelines/${a.pipeline.id}/runs/find?commit=c1`, { token: tokenA });
    expect(still.json.status).toBe('queued');
  });

  it('lists runs newest first, finds a run by commit, and summarises 7 days in SQL', async () => {
    const { pipeline, reporting_token: token } = await createPipeline();
    const at = (minutes: number) => new Date(Date.UTC(2026, 10, 21, 9, minutes)).toISOString();
    const finished = async (commit: string, status: string, seconds: number) =>
      report('POST', `/pipelines/${pipeline.id}/runs`, token, { commit, status, started_at: at(0), finished_at: new Date(Date.parse(at(0)) + seconds * 1000).toISOString() });
    await finished('s1', 'success', 60);
    await finished('s2', 'success', 120);
    await finished('s3', 'success', 180);
    await finished('f1', 'failed', 30);
    await finished('c1', 'cancelled', 10);
    await report('POST', `/pipelines/${pipeline.id}/runs`, token, { commit: 'r1', status: 'running' });

    const summary = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs/summary`, { token: tokenA });
    expect(summary.json).toMatchObject({ runs: 6, succeeded: 3, failed: 1, cancelled: 1, in_progress: 1, success_rate: 0.6, average_duration_secs: 80 });
    const viaPlatform = await call('GET', `/platform/api/v1/pipelines/${pipeline.id}/runs/summary`, { token: tokenA });
    expect(viaPlatform.json.runs).toBe(6);
    const all = await call('GET', '/cicd/api/v1/pipelines/summary', { token: tokenB });
    expect(all.json.runs).toBe(0);

    const page = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs?limit=4`, { token: tokenA });
    expect(page.json.total).toBe(6);
    expect(page.json.data.map((r: any) => r.commit)).toEqual(['r1', 'c1', 'f1', 's3']);
    const next = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs?limit=4&cursor=${page.json.next_cursor}`, { token: tokenA });
    expect(next.json.data.map((r: any) => r.commit)).toEqual(['s2', 's1']);
    const found = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs/find?commit=f1`, { token: tokenA });
    expect(found.json).toMatchObject({ commit: 'f1', status: 'failed', duration_secs: 30 });
    expectError(await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs/find?commit=nope`, { token: tokenA }), 404, 'not_found');
  });

  it('rotates secrets: the old ones stop working at once', async () => {
    const created = await createPipeline();
    const rotated = await call('POST', `/cicd/api/v1/pipelines/${created.pipeline.id}/rotate-secrets`, { token: tokenA });
    expect(rotated.status).toBe(200);
    expect(rotated.json.reporting_token).not.toBe(created.reporting_token);
    expectError(await report('POST', `/pipelines/${created.pipeline.id}/runs`, created.reporting_token, { commit: 'x' }), 401, 'unauthenticated');
    expect((await report('POST', `/pipelines/${created.pipeline.id}/runs`, rotated.json.reporting_token, { commit: 'x' })).status).toBe(201);
    const repository = created.pipeline.repository;
    expectError(await hostA('push', pushPayload(repository, 'a'.repeat(40)), created.webhook_secret), 401, 'unauthenticated');
    expect((await hostA('push', pushPayload(repository, 'a'.repeat(40)), rotated.json.webhook_secret)).json.outcome).toBe('recorded');
  });
});

describe('Git-host webhooks', () => {
  it('signs like host_a\'s own library, published test vector included', async () => {
    const vector = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    expect(await sign("It's a Secret to Everybody", 'Hello, World!')).toBe(`sha256=${vector}`);
    expect(await verify("It's a Secret to Everybody", 'Hello, World!', `sha256=${vector}`)).toBe(true);
  });

  it('host_a: a signed push queues a run, later events update it, and redeliveries change nothing', async () => {
    const { pipeline, webhook_secret: secret } = await createPipeline(tokenA, { deploy_cluster_id: 'cluster-7' });
    const commit = 'b'.repeat(40);
    const delivery = randomUUID();
    const push = await hostA('push', pushPayload(pipeline.repository, commit), secret, delivery);
    expect(push.status).toBe(200);
    expect(push.json).toMatchObject({ outcome: 'recorded', event: 'push', runs: [{ pipeline_id: pipeline.id, status: 'queued' }] });
    const replay = await hostA('push', pushPayload(pipeline.repository, commit), secret, delivery);
    expect(replay.json.outcome).toBe('duplicate');
    const runs = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs`, { token: tokenA });
    expect(runs.json.total).toBe(1);
    expect(runs.json.data[0]).toMatchObject({ commit, branch: 'main', author: 'alice', message: 'Fix checkout', trigger_type: 'push' });

    const workflow = (status: string, conclusion: string | null) =>
      JSON.stringify({
        action: status === 'completed' ? 'completed' : 'in_progress',
        workflow_run: { id: 42, name: 'CI', head_sha: commit, head_branch: 'main', status, conclusion, event: 'push', run_started_at: '2026-11-21T10:00:00Z', updated_at: '2026-11-21T10:04:00Z', html_url: 'https://host-a.example/acme/shop/actions/runs/42' },
        repository: { full_name: pipeline.repository },
      });
    expect((await hostA('workflow_run', workflow('in_progress', null), secret)).json.runs[0].status).toBe('running');
    expect((await hostA('workflow_run', workflow('completed', 'success'), secret)).json.runs[0].status).toBe('success');
    const run = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs/find?commit=${commit}`, { token: tokenA });
    expect(run.json).toMatchObject({ status: 'success', duration_secs: 240, cluster_id: 'cluster-7' });
    expect(run.json.stages).toEqual([expect.objectContaining({ name: 'CI', status: 'success', log_url: 'https://host-a.example/acme/shop/actions/runs/42' })]);

    const suite = JSON.stringify({ action: 'completed', check_suite: { id: 7, head_sha: 'c'.repeat(40), head_branch: 'main', status: 'completed', conclusion: 'failure', updated_at: '2026-11-21T11:00:00Z' }, repository: { full_name: pipeline.repository } });
    expect((await hostA('check_suite', suite, secret)).json.runs[0].status).toBe('failed');
  });

  it('host_a: 401 for a bad signature, 404 for an unknown repository, 2xx ignored for other events', async () => {
    const { pipeline, webhook_secret: secret } = await createPipeline();
    const payload = pushPayload(pipeline.repository, 'd'.repeat(40));
    expectError(await hostA('push', payload, 'not the secret'), 401, 'unauthenticated');
    expectError(await call('POST', '/cicd/webhook/host_a', { raw: payload, headers: { 'x-github-event': 'push' } }), 401, 'unauthenticated');
    expectError(await hostA('push', pushPayload('nobody/nothing', 'e'.repeat(40)), secret), 404, 'not_found');
    const issue = await hostA('issues', JSON.stringify({ action: 'opened', issue: { number: 1 }, repository: { full_name: pipeline.repository } }), secret);
    expect(issue.status).toBe(200);
    expect(issue.json).toMatchObject({ outcome: 'ignored', event: 'issues' });
    expect((await hostA('push', pushPayload(pipeline.repository, 'f'.repeat(40), 'feature/x'), secret)).json.outcome).toBe('ignored');
    expectError(await call('POST', '/cicd/webhook/host_a', { raw: '{not json', headers: { 'x-github-event': 'push', 'x-hub-signature-256': await sign(secret, '{not json') } }), 400, 'bad_request');
    const runs = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs`, { token: tokenA });
    expect(runs.json.total).toBe(0);
  });

  it('records for every pipeline that watches the repository, across tenants, each with its own secret', async () => {
    const a = await createPipeline(tokenA, { repository: 'shared/monorepo' });
    const b = await createPipeline(tokenB, { repository: 'shared/monorepo' });
    const payload = pushPayload('shared/monorepo', '1'.repeat(40));
    const forA = await hostA('push', payload, a.webhook_secret);
    expect(forA.json.runs.map((r: any) => r.pipeline_id)).toEqual([a.pipeline.id]);
    const runsB = await call('GET', `/cicd/api/v1/pipelines/${b.pipeline.id}/runs`, { token: tokenB });
    expect(runsB.json.total).toBe(0);
  });

  it('host_b: a pipeline event with the right X-Git-Token records the run and its jobs', async () => {
    const { pipeline, webhook_secret: secret } = await createPipeline(tokenA, { provider: 'host_b' });
    const body = JSON.stringify({
      object_kind: 'pipeline',
      object_attributes: { id: 31, ref: 'main', sha: '2'.repeat(40), status: 'failed', source: 'push', created_at: '2026-11-21 10:00:00 UTC', finished_at: '2026-11-21 10:03:00 UTC', duration: 180 },
      user: { name: 'Bob', username: 'bob' },
      project: { id: 9, path_with_namespace: pipeline.repository },
      commit: { id: '2'.repeat(40), message: 'Break things', author: { name: 'Bob' } },
      builds: [
        { id: 2, stage: 'test', name: 'rspec', status: 'failed', started_at: '2026-11-21 10:01:00 UTC', finished_at: '2026-11-21 10:03:00 UTC', duration: 120.4 },
        { id: 1, stage: 'build', name: 'compile', status: 'success', started_at: '2026-11-21 10:00:00 UTC', finished_at: '2026-11-21 10:01:00 UTC', duration: 60 },
      ],
    });
    expectError(await call('POST', '/cicd/webhook/host_b', { raw: body, headers: { 'x-git-token': 'wrong' } }), 401, 'unauthenticated');
    const ok = await call('POST', '/cicd/webhook/host_b', { raw: body, headers: { 'x-git-token': secret, 'x-gitlab-event-uuid': randomUUID() } });
    expect(ok.json).toMatchObject({ outcome: 'recorded', event: 'pipeline' });
    const run = await call('GET', `/cicd/api/v1/pipelines/${pipeline.id}/runs/find?commit=${'2'.repeat(40)}`, { token: tokenA });
    expect(run.json).toMatchObject({ status: 'failed', duration_secs: 180, author: 'bob', message: 'Break things' });
    expect(run.json.stages.map((s: any) => [s.name, s.status, s.duration_secs])).toEqual([
      ['compile', 'success', 60],
      ['rspec', 'failed', 120],
    ]);
    const push = JSON.stringify({ object_kind: 'push', project: { path_with_namespace: pipeline.repository } });
    expect((await call('POST', '/cicd/webhook/host_b', { raw: push, headers: { 'x-git-token': secret } })).json.outcome).toBe('ignored');
  });
});

const rabbitUrl = process.env.RABBITMQ_URL;
if (!rabbitUrl) process.stdout.write('cicd.test.ts: RABBITMQ_URL is not set, so the broker test is skipped\n');

(rabbitUrl ? describe : describe.skip)('events on a real RabbitMQ', () => {
  it('publishes the routing keys of a run\'s life to cicd.events, and pipeline.run_completed to platform.events', async () => {
    const connection = await amqp.connect(rabbitUrl!);
    const channel = await connection.createChannel();
    await channel.assertExchange('cicd.events', 'topic', { durable: true });
    await channel.assertExchange('platform.events', 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, 'cicd.events', 'cicd.#');
    await channel.bindQueue(queue, 'platform.events', 'pipeline.#');
    const seen: { key: string; body: any }[] = [];
    await channel.consume(queue, (m) => m && seen.push({ key: m.fields.routingKey, body: JSON.parse(m.content.toString()) }), { noAck: true });
    try {
      const { pipeline, reporting_token: token } = await createPipeline(tokenA, { provider: 'generic', deploy_cluster_id: 'prod-1' });
      const run = await report('POST', `/pipelines/${pipeline.id}/runs`, token, { commit: 'e1' });
      await report('PATCH', `/runs/${run.json.id}`, token, { status: 'running' });
      await report('PATCH', `/runs/${run.json.id}`, token, { status: 'success' });
      const failed = await report('POST', `/pipelines/${pipeline.id}/runs`, token, { commit: 'e2', status: 'running' });
      await report('PATCH', `/runs/${failed.json.id}`, token, { status: 'failed' });
      const deadline = Date.now() + 10_000;
      const mine = () => seen.filter((s) => s.body.data?.pipeline_id === pipeline.id);
      while (mine().length < 7 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      const keys = mine().map((s) => `${s.key}:${s.body.data.commit}`);
      expect(keys.sort()).toEqual(
        [
          'cicd.generic.run_started:e1',
          'cicd.generic.run_completed:e1',
          'cicd.generic.deployed:e1',
          'pipeline.run_completed:e1',
          'cicd.generic.run_started:e2',
          'cicd.generic.run_failed:e2',
          'pipeline.run_completed:e2',
        ].sort(),
      );
      const completed = mine().find((s) => s.key === 'pipeline.run_completed')!.body;
      expect(completed).toMatchObject({ type: 'pipeline.run_completed', tenant_id: TENANT_A, data: { pipeline_id: pipeline.id } });
      expect(completed.id).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await channel.close();
      await connection.close();
    }
  });
});

describe('pipelineRunUpdated over graphql-ws through the edge', () => {
  const wsUrl = () => `${stack.base.replace(/^http/, 'ws')}/graphql`;

  it('delivers run updates to a subscriber of the pipeline\'s tenant', async () => {
    const { pipeline, reporting_token: token } = await createPipeline();
    const client = createClient({ url: wsUrl(), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${tokenA}` }, retryAttempts: 0 });
    const updates = client.iterate<{ pipelineRunUpdated: { commit: string; status: string } }>({
      query: /* GraphQL */ `subscription($id: ID!) { pipelineRunUpdated(pipelineId: $id) { commit status } }`,
      variables: { id: pipeline.id },
    });
    const received: string[] = [];
    const reading = (async () => {
      for await (const result of updates) {
        received.push(`${result.data?.pipelineRunUpdated.commit}:${result.data?.pipelineRunUpdated.status}`);
        if (received.length === 2) break;
      }
    })();
    // Give the subscription time to reach the subgraph before the first change.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const run = await report('POST', `/pipelines/${pipeline.id}/runs`, token, { commit: 'ws1' });
    await report('PATCH', `/runs/${run.json.id}`, token, { status: 'running' });
    await Promise.race([reading, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out with ${received.join(', ')}`)), 10_000))]);
    await client.dispose();
    expect(received).toEqual(['ws1:queued', 'ws1:running']);
  });

  it('refuses a connection without a valid token', async () => {
    for (const params of [{}, { authorization: 'Bearer not.a.token' }]) {
      const client = createClient({ url: wsUrl(), webSocketImpl: WebSocket, connectionParams: params, retryAttempts: 0 });
      const outcome = await new Promise<string>((resolve) => {
        client.subscribe(
          { query: 'subscription { pipelineRunUpdated(pipelineId: "0e000000-0000-4000-8000-000000000001") { status } }' },
          { next: () => resolve('next'), error: (e: any) => resolve(`error:${e?.code ?? e?.message ?? 'closed'}`), complete: () => resolve('complete') },
        );
      });
      await client.dispose();
      expect(outcome).toMatch(/^error:/);
    }
  });
});
