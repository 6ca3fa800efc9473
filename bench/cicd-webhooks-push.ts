/**
 * The requests of the `webhook` target of `npm run bench -- cicd-webhooks`: host_a push
 * deliveries, each one distinct (its own commit, delivery id and signature), built as they are
 * sent.
 *
 * autocannon runs in a worker thread and functions cannot cross into it, so this module is handed
 * to it by path and `require`d there: what it exports as `module.exports` (Node's require(esm)
 * answers that export, not the namespace) is the `setupRequest(request, context)` called before
 * every request, `context` being a {@link PushContext} structured-cloned into the worker. Keep its
 * imports to node built-ins: the whole import graph is loaded again in every worker.
 *
 * The benchmark process imports the same module to build and check its own deliveries.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';

/** What setupRequest needs to know, passed as autocannon's `initialContext`. */
export interface PushContext {
  /** The pipeline's webhook secret. */
  secret: string;
  /** `owner/name`, as host_a writes it. */
  repository: string;
  branch: string;
}

/** The part of autocannon's request object this module touches. */
interface AutocannonRequest {
  body?: string | Buffer;
  headers?: Record<string, string | string[] | undefined>;
}

/** `X-Hub-Signature-256`: `sha256=` and the hex HMAC-SHA256 of the exact body with the secret. */
export function sign(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * A push of one commit as host_a delivers it (the fields of its push event a CI integration
 * reads, trimmed of the URLs and ids nobody here reads): about 2 KiB, signed over every byte.
 */
export function pushPayload(repository: string, branch: string, before: string, commit: string, sequence: number, at: Date): string {
  const [owner, name] = repository.split('/') as [string, string];
  const timestamp = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const person = { name: 'Bench Author', email: 'bench.author@example.com', username: 'bench-author' };
  const headCommit = {
    id: commit,
    tree_id: createHash('sha1').update(`tree:${commit}`).digest('hex'),
    distinct: true,
    message: `Benchmark push ${sequence}\n\nTouches the checkout service so that the pipeline has something to build.`,
    timestamp,
    url: `https://host-a.example/${repository}/commit/${commit}`,
    author: person,
    committer: person,
    added: [],
    removed: [],
    modified: ['services/checkout/src/cart.ts', 'services/checkout/test/cart.test.ts'],
  };
  return JSON.stringify({
    ref: `refs/heads/${branch}`,
    before,
    after: commit,
    repository: {
      id: 734_120_553,
      node_id: 'R_kgDOK8xB6Q',
      name,
      full_name: repository,
      private: true,
      owner: { name: owner, login: owner, id: 90_112_334, type: 'Organization' },
      html_url: `https://host-a.example/${repository}`,
      clone_url: `https://host-a.example/${repository}.git`,
      default_branch: branch,
      pushed_at: Math.floor(at.getTime() / 1000),
    },
    pusher: { name: person.username, email: person.email },
    sender: { login: person.username, id: 5_517_201, type: 'User' },
    created: false,
    deleted: false,
    forced: false,
    base_ref: null,
    compare: `https://host-a.example/${repository}/compare/${before.slice(0, 12)}...${commit.slice(0, 12)}`,
    commits: [headCommit],
    head_commit: headCommit,
  });
}

/** Distinct in every worker (each autocannon run starts a new one), so commits never repeat. */
const origin = randomBytes(16).toString('hex');
let sequence = 0;
/** The branch's head, so that each push continues from the one before, as on a real branch. */
let head = createHash('sha1').update(`${origin}:0`).digest('hex');

/** The next push on the branch, signed, with a delivery id of its own. */
export function nextPush(context: PushContext): { body: string; headers: Record<string, string>; commit: string } {
  sequence += 1;
  const commit = createHash('sha1').update(`${origin}:${sequence}`).digest('hex');
  const body = pushPayload(context.repository, context.branch, head, commit, sequence, new Date());
  head = commit;
  return { body, commit, headers: { 'x-hub-signature-256': sign(context.secret, body), 'x-github-delivery': randomUUID() } };
}

/** autocannon's setupRequest: the target's constant headers (event, content type) plus this push's. */
function setupRequest(request: AutocannonRequest, context: PushContext): AutocannonRequest {
  const push = nextPush(context);
  request.body = push.body;
  request.headers = { ...request.headers, ...push.headers };
  return request;
}

export { setupRequest as 'module.exports' };
