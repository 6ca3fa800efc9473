/**
 * The fleet repository writer against temporary bare repositories: one commit per change with
 * the given message, no commit when nothing changed, concurrent writers from two working copies
 * all landing, path validation, history and ancestry.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { appFolder, createLocalBareRepo, openFleetRepo, safeRepoPath, vclusterFolder, type FleetRepo } from '../../subgraphs/platform/gitops/fleet-repo.js';
import { logger, tempDir } from './support.js';

const run = promisify(execFile);
const TENANT = '5b0c4d1e-8f2a-4c3b-9d7e-1a2b3c4d5e6f';
const author = { name: 'platform bot', email: 'bot@cloudops.test' };

let dir: string;
let cleanup: () => Promise<void>;
let url: string;
let repo: FleetRepo;

/** Commits on the remote branch, read with plain git (not through FleetRepo). */
async function remoteLog(bare: string, branch = 'main'): Promise<{ sha: string; subject: string; author: string }[]> {
  const { stdout } = await run('git', ['--git-dir', bare, 'log', '--format=%H%x1f%s%x1f%an <%ae>', branch]);
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [sha, subject, who] = line.split('\x1f') as [string, string, string];
      return { sha, subject, author: who };
    });
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('fleet'));
  url = await createLocalBareRepo(join(dir, 'fleet.git'), 'main');
  repo = await openFleetRepo({ url, branch: 'main', workdir: join(dir, 'wc-a'), author, logger });
});

afterAll(async () => {
  await cleanup();
});

describe('paths', () => {
  it('builds one folder per tenant, CloudSpace namespace, virtual cluster and app', () => {
    expect(vclusterFolder({ tenantId: TENANT, namespace: 'cs-acme', vcluster: 'vc-main' })).toBe(`tenants/${TENANT}/cs-acme/vc-main`);
    expect(appFolder({ tenantId: TENANT.toUpperCase(), namespace: 'cs-acme', vcluster: 'vc-main', app: 'web' })).toBe(`tenants/${TENANT}/cs-acme/vc-main/web`);
    expect(appFolder({ tenantId: 'acme', namespace: 'cs-acme', vcluster: 'vc-main', app: 'web-2' })).toBe('tenants/acme/cs-acme/vc-main/web-2');
  });

  it.each([
    ['app', '..'],
    ['app', '../etc'],
    ['app', 'a/b'],
    ['app', 'Web'],
    ['app', ''],
    ['app', '-web'],
    ['app', 'x'.repeat(64)],
    ['namespace', '..'],
    ['vcluster', '.git'],
    ['tenantId', '../../x'],
  ])('refuses %s %j', (field, value) => {
    const ref = { tenantId: TENANT, namespace: 'cs-acme', vcluster: 'vc-main', app: 'web', [field]: value };
    expect(() => appFolder(ref)).toThrow(/must be a DNS label/);
  });

  it.each(['..', '../outside', 'tenants/../..', '/etc/passwd', 'tenants/.git', '.git', 'a/./b', 'a//b', 'a\\b', ''])('refuses the repository path %j', (path) => {
    expect(() => safeRepoPath(path)).toThrow();
  });

  it('refuses traversal in writeFolder and removeFolder, and in file names, before touching git', async () => {
    const before = await repo.head();
    expect(() => repo.writeFolder('../escape', { 'a.yaml': 'x' }, 'm')).toThrow(/invalid segment/);
    expect(() => repo.writeFolder('tenants/ok', { '../../escape.yaml': 'x' }, 'm')).toThrow(/invalid segment/);
    expect(() => repo.writeFolder('tenants/ok', { '.git/config': 'x' }, 'm')).toThrow(/invalid segment/);
    expect(() => repo.removeFolder('tenants/..', 'm')).toThrow(/invalid segment/);
    expect(() => repo.writeFolder('tenants/ok', { 'a.yaml': 'x' }, '  ')).toThrow(/needs a message/);
    expect(await repo.head()).toBe(before);
  });
});

describe('writing', () => {
  const folder = appFolder({ tenantId: TENANT, namespace: 'cs-acme', vcluster: 'vc-main', app: 'web' });

  it('commits once per change with the given message and author, and pushes', async () => {
    const before = await remoteLog(join(dir, 'fleet.git'));
    expect(before).toHaveLength(1); // the initial empty commit
    const result = await repo.writeFolder(folder, { 'deployment.yaml': 'kind: Deployment\n', 'service.yaml': 'kind: Service\n' }, 'deploy web: image nginx:1.25');
    expect(result.changed).toBe(true);
    const after = await remoteLog(join(dir, 'fleet.git'));
    expect(after).toHaveLength(2);
    expect(after[0]).toEqual({ sha: result.commit, subject: 'deploy web: image nginx:1.25', author: 'platform bot <bot@cloudops.test>' });
    expect(await repo.head()).toBe(result.commit);
    expect(await repo.readFolder(folder)).toEqual({ 'deployment.yaml': 'kind: Deployment\n', 'service.yaml': 'kind: Service\n' });
  });

  it('makes no commit when nothing changed', async () => {
    const head = await repo.head();
    const result = await repo.writeFolder(folder, { 'service.yaml': 'kind: Service\n', 'deployment.yaml': 'kind: Deployment\n' }, 'deploy web again');
    expect(result).toEqual({ commit: head, changed: false });
    expect(await remoteLog(join(dir, 'fleet.git'))).toHaveLength(2);
  });

  it('replaces the whole folder: files not given are removed, nested files allowed', async () => {
    const result = await repo.writeFolder(folder, { 'deployment.yaml': 'kind: Deployment\nimage: 2\n', 'extra/config.yaml': 'kind: ConfigMap\n' }, 'web: new image');
    expect(result.changed).toBe(true);
    expect(await repo.readFolder(folder)).toEqual({ 'deployment.yaml': 'kind: Deployment\nimage: 2\n', 'extra/config.yaml': 'kind: ConfigMap\n' });
    const log = await repo.log(folder, 10);
    expect(log.map((c) => c.message)).toEqual(['web: new image', 'deploy web: image nginx:1.25']);
    expect(log[0]!.sha).toBe(result.commit);
    expect(Number.isNaN(Date.parse(log[0]!.date))).toBe(false);
  });

  it('reads a folder at an earlier revision, also given as a Flux revision', async () => {
    const [, first] = await repo.log(folder, 10);
    expect(await repo.readFolder(folder, first!.sha)).toEqual({ 'deployment.yaml': 'kind: Deployment\n', 'service.yaml': 'kind: Service\n' });
    expect(await repo.readFolder(folder, `main@sha1:${first!.sha}`)).toEqual({ 'deployment.yaml': 'kind: Deployment\n', 'service.yaml': 'kind: Service\n' });
    expect(await repo.readFolder('tenants/nobody')).toEqual({});
  });

  it('answers whether a commit is contained in a revision', async () => {
    const [latest, earlier] = await repo.log(folder, 10);
    expect(await repo.isAncestor(earlier!.sha, latest!.sha)).toBe(true);
    expect(await repo.isAncestor(latest!.sha, latest!.sha)).toBe(true);
    expect(await repo.isAncestor(latest!.sha, earlier!.sha)).toBe(false);
    expect(await repo.isAncestor(earlier!.sha, `main@sha1:${latest!.sha}`)).toBe(true);
    expect(await repo.isAncestor('0123456789abcdef0123456789abcdef01234567', latest!.sha)).toBe(false);
  });

  it('removes a folder in one commit, and makes none when it is already gone', async () => {
    const removed = await repo.removeFolder(folder, 'remove web');
    expect(removed.changed).toBe(true);
    expect(await repo.readFolder(folder)).toEqual({});
    expect((await repo.log(undefined, 1))[0]).toMatchObject({ sha: removed.commit, message: 'remove web' });
    expect(await repo.removeFolder(folder, 'remove web again')).toEqual({ commit: removed.commit, changed: false });
  });
});

describe('working copies', () => {
  it('creates the branch in an empty repository, and reuses an existing working copy', async () => {
    const bare = join(dir, 'empty.git');
    await run('git', ['init', '--bare', '--quiet', bare]);
    const emptyUrl = `file://${bare}`;
    const first = await openFleetRepo({ url: emptyUrl, branch: 'fleet', workdir: join(dir, 'wc-empty'), author, logger });
    const head = await first.head();
    expect(await remoteLog(bare, 'fleet')).toEqual([expect.objectContaining({ sha: head, subject: 'Initialize fleet repository' })]);
    const written = await first.writeFolder('clusters/local', { 'a.yaml': 'a: 1\n' }, 'first');
    const reopened = await openFleetRepo({ url: emptyUrl, branch: 'fleet', workdir: join(dir, 'wc-empty'), author, logger });
    expect(await reopened.head()).toBe(written.commit);
    expect(await reopened.readFolder('clusters/local')).toEqual({ 'a.yaml': 'a: 1\n' });
  });

  it('createLocalBareRepo is idempotent', async () => {
    const again = await createLocalBareRepo(join(dir, 'fleet.git'), 'main');
    expect(again).toBe(url);
    const log = await remoteLog(join(dir, 'fleet.git'));
    expect(log[log.length - 1]!.subject).toBe('Initialize fleet repository');
  });

  it('serializes concurrent calls on one FleetRepo', async () => {
    const folders = [1, 2, 3, 4, 5].map((n) => appFolder({ tenantId: TENANT, namespace: 'cs-serial', vcluster: 'vc', app: `app-${n}` }));
    const results = await Promise.all(folders.map((f, n) => repo.writeFolder(f, { 'x.yaml': `n: ${n}\n` }, `serial ${n}`)));
    expect(results.every((r) => r.changed)).toBe(true);
    expect(new Set(results.map((r) => r.commit)).size).toBe(5);
    const messages = (await repo.log(undefined, 5)).map((c) => c.message).sort();
    expect(messages).toEqual(['serial 0', 'serial 1', 'serial 2', 'serial 3', 'serial 4']);
  });

  it('a working copy behind the remote still commits a folder the remote holds otherwise', async () => {
    const other = await openFleetRepo({ url, branch: 'main', workdir: join(dir, 'wc-behind'), author, logger });
    const folder = 'behind/app';
    await repo.writeFolder(folder, { 'd.yaml': 'v: 1\n' }, 'one writes v1');
    await other.writeFolder(folder, { 'd.yaml': 'v: 2\n' }, 'other writes v2');
    // `repo` last wrote v1 itself and has not fetched since: v1 is not "unchanged" on the remote.
    const again = await repo.writeFolder(folder, { 'd.yaml': 'v: 1\n' }, 'one writes v1 again');
    expect(again.changed).toBe(true);
    expect(await other.readFolder(folder)).toEqual({ 'd.yaml': 'v: 1\n' });
    expect((await repo.writeFolder(folder, { 'd.yaml': 'v: 1\n' }, 'nothing to write')).changed).toBe(false);
  });

  it('two working copies writing at the same time both land: no lost commit', async () => {
    const other = await openFleetRepo({ url, branch: 'main', workdir: join(dir, 'wc-b'), author: { name: 'replica two', email: 'two@cloudops.test' }, logger });
    const before = (await remoteLog(join(dir, 'fleet.git'))).length;
    const writes: Promise<{ commit: string; changed: boolean }>[] = [];
    for (let n = 0; n < 6; n++) {
      writes.push(repo.writeFolder(appFolder({ tenantId: TENANT, namespace: 'cs-race', vcluster: 'vc', app: `a-${n}` }), { 'd.yaml': `a: ${n}\n` }, `replica one writes a-${n}`));
      writes.push(other.writeFolder(appFolder({ tenantId: TENANT, namespace: 'cs-race', vcluster: 'vc', app: `b-${n}` }), { 'd.yaml': `b: ${n}\n` }, `replica two writes b-${n}`));
    }
    // Both also write the same folder: both commits land, the later one's content wins.
    writes.push(repo.writeFolder('shared/config', { 'c.yaml': 'from: one\n' }, 'replica one writes shared'));
    writes.push(other.writeFolder('shared/config', { 'c.yaml': 'from: two\n' }, 'replica two writes shared'));
    const results = await Promise.all(writes);
    expect(results.every((r) => r.changed)).toBe(true);

    const log = await remoteLog(join(dir, 'fleet.git'));
    expect(log).toHaveLength(before + 14);
    const subjects = log.map((c) => c.subject);
    for (let n = 0; n < 6; n++) {
      expect(subjects).toContain(`replica one writes a-${n}`);
      expect(subjects).toContain(`replica two writes b-${n}`);
    }
    for (const result of results) expect(log.map((c) => c.sha)).toContain(result.commit);
    // Linear history: every commit has one parent.
    const { stdout } = await run('git', ['--git-dir', join(dir, 'fleet.git'), 'rev-list', '--min-parents=2', 'main']);
    expect(stdout.trim()).toBe('');
    // Every folder is there, from both replicas' views.
    for (const reader of [repo, other]) {
      for (let n = 0; n < 6; n++) {
        expect(await reader.readFolder(appFolder({ tenantId: TENANT, namespace: 'cs-race', vcluster: 'vc', app: `a-${n}` }))).toEqual({ 'd.yaml': `a: ${n}\n` });
        expect(await reader.readFolder(appFolder({ tenantId: TENANT, namespace: 'cs-race', vcluster: 'vc', app: `b-${n}` }))).toEqual({ 'd.yaml': `b: ${n}\n` });
      }
    }
    const shared = await other.readFolder('shared/config');
    const lastShared = log.find((c) => c.subject.endsWith('writes shared'))!;
    expect(shared['c.yaml']).toBe(lastShared.subject.startsWith('replica one') ? 'from: one\n' : 'from: two\n');
  });
});
