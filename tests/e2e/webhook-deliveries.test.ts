import { expectError, httpClient } from '../helpers/http.js';
import { createTestPki, startHttpsReceiver, type HttpsReceiver, type TestPki } from '../helpers/https-receiver.js';
import { startStack, type Stack } from '../helpers/stack.js';

const TENANT_A = '2a000000-0000-4000-8000-00000000002a';
const TENANT_B = '2b000000-0000-4000-8000-00000000002b';

let stack: Stack;
let pki: TestPki;
let receiver: HttpsReceiver;
let tokenA: string;
let tokenB: string;
const call = httpClient(() => stack.base);

beforeAll(async () => {
  pki = createTestPki();
  receiver = await startHttpsReceiver(pki);
  // Through RabbitMQ when RABBITMQ_URL is set (as in CI), through the launcher-style bus otherwise.
  stack = await startStack('e2e_webhook_deliveries', {}, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_CA_FILE: pki.caFile });
  tokenA = await stack.token({ subject: 'alice', tenantId: TENANT_A, scopes: ['read', 'deploy'] });
  tokenB = await stack.token({ subject: 'bob', tenantId: TENANT_B, scopes: ['read', 'deploy'] });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
  pki?.remove();
});

async function subscribe(token: string, path: string, events: string[]) {
  const r = await call('POST', '/platform/api/v1/webhooks', { token, body: { url: `${receiver.url}${path}`, events } });
  expect(r.status).toBe(201);
  receiver.secrets.set(path, [r.json.secret]);
  return r.json.subscription as { id: string };
}

/** A pipeline run reported from start to finish: cicd publishes pipeline.run_completed through its outbox. */
async function finishRun(token: string, repository: string) {
  const pipeline = await call('POST', '/cicd/api/v1/pipelines', { token, body: { name: repository, repository, provider: 'host_a' } });
  expect(pipeline.status).toBe(201);
  const report = (method: string, path: string, body: unknown) => call(method, `/cicd/api/v1${path}`, { headers: { 'x-pipeline-token': pipeline.json.reporting_token }, body });
  const run = await report('POST', `/pipelines/${pipeline.json.pipeline.id}/runs`, { commit: 'c0ffee', trigger_type: 'push', branch: 'main', author: 'alice', message: 'ship it' });
  expect(run.status).toBe(201);
  const done = await report('PATCH', `/runs/${run.json.id}`, { status: 'success', started_at: '2026-11-21T10:00:00.000Z', finished_at: '2026-11-21T10:03:00.000Z' });
  expect(done.status).toBe(200);
  return { pipelineId: pipeline.json.pipeline.id as string, runId: run.json.id as string };
}

describe('outbound webhooks end to end', () => {
  it('delivers pipeline.run_completed, signed, to the tenant\'s subscriber only, and logs it', async () => {
    const mine = await subscribe(tokenA, '/a/runs', ['pipeline.run_completed']);
    const theirs = await subscribe(tokenB, '/b/runs', ['pipeline.run_completed']);
    const { runId, pipelineId } = await finishRun(tokenA, 'Acme/Deliveries');
    const got = await receiver.waitFor((d) => d.path === '/a/runs' && d.event.data.run_id === runId);
    expect(got.event).toMatchObject({ type: 'pipeline.run_completed', tenant_id: TENANT_A, data: { run_id: runId, pipeline_id: pipelineId, status: 'success', duration_secs: 180 } });
    expect(got.headers['service-event-id']).toBe(got.event.id);
    expect(got.headers['service-attempt']).toBe('1');

    let log = await call('GET', `/platform/api/v1/webhooks/${mine.id}/deliveries`, { token: tokenA });
    for (let i = 0; i < 50 && log.json.data[0]?.status !== 'succeeded'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      log = await call('GET', `/platform/api/v1/webhooks/${mine.id}/deliveries`, { token: tokenA });
    }
    expect(log.status).toBe(200);
    expect(log.json).toMatchObject({ total: 1, next_cursor: null });
    const [delivery] = log.json.data;
    expect(delivery).toMatchObject({ subscription_id: mine.id, event_id: got.event.id, event_type: 'pipeline.run_completed', status: 'succeeded', attempt_count: 1, last_status_code: 200 });
    expect(delivery.event).toEqual(got.event);
    expect(delivery.attempts).toEqual([expect.objectContaining({ number: 1, status_code: 200, response_excerpt: 'ok', error: null, succeeded: true })]);

    const theirLog = await call('GET', `/platform/api/v1/webhooks/${theirs.id}/deliveries`, { token: tokenB });
    expect(theirLog.json.total).toBe(0);
    expect(receiver.received.filter((d) => d.path === '/b/runs')).toHaveLength(0);

    // Redelivery: 202, the same event id, the next attempt number.
    const again = await call('POST', `/platform/api/v1/webhooks/${mine.id}/deliveries/${delivery.id}/redeliver`, { token: tokenA });
    expect(again.status).toBe(202);
    expect(again.json).toMatchObject({ id: delivery.id, status: 'pending' });
    const second = await receiver.waitFor((d) => d.path === '/a/runs' && d.headers['service-attempt'] === '2');
    expect(second.event.id).toBe(got.event.id);
  });

  it('filters the log by status and pages it', async () => {
    const sub = await subscribe(tokenA, '/a/failing', ['pipeline.run_completed']);
    receiver.behave('/a/failing', () => ({ status: 503, body: 'down for maintenance' }));
    await finishRun(tokenA, 'Acme/Failing');
    await receiver.waitFor((d) => d.path === '/a/failing');
    let pending = await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries?status=pending&limit=1`, { token: tokenA });
    for (let i = 0; i < 50 && pending.json.data[0]?.attempt_count !== 1; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      pending = await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries?status=pending&limit=1`, { token: tokenA });
    }
    expect(pending.json.data[0]).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: 503 });
    expect(pending.json.data[0].attempts[0]).toMatchObject({ status_code: 503, response_excerpt: 'down for maintenance', error: 'receiver answered 503' });
    const succeeded = await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries?status=succeeded`, { token: tokenA });
    expect(succeeded.json.total).toBe(0);
  });

  it('answers bad input and other tenants\' objects with the envelope', async () => {
    const sub = await subscribe(tokenA, '/a/other', ['app.deleted']);
    expectError(await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries?status=lost`, { token: tokenA }), 400, 'validation_failed');
    expectError(await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries?limit=0`, { token: tokenA }), 400, 'validation_failed');
    expectError(await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries?cursor=garbage`, { token: tokenA }), 400, 'invalid_cursor');
    expectError(await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries`, { token: tokenB }), 404, 'not_found');
    expectError(await call('GET', '/platform/api/v1/webhooks/not-a-uuid/deliveries', { token: tokenA }), 404, 'not_found');
    expectError(await call('POST', `/platform/api/v1/webhooks/${sub.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`, { token: tokenA }), 404, 'not_found');
    expectError(await call('GET', `/platform/api/v1/webhooks/${sub.id}/deliveries`), 401, 'unauthenticated');
    const reader = await stack.token({ subject: 'r', tenantId: TENANT_A, scopes: ['read'] });
    expectError(await call('POST', `/platform/api/v1/webhooks/${sub.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`, { token: reader }), 403, 'forbidden');
  });
});
