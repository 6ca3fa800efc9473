/**
 * The fleet repository writer: the desired state of every app, as plain manifests in a Git
 * repository that a GitOps controller (Flux in production, the local applier in the local
 * profile) applies to each tenant's virtual cluster.
 *
 * Layout (one folder per tenant, virtual cluster and app; see {@link appFolder}):
 *
 * ```
 * tenants/<tenantId>/<namespace>/<vcluster>/<app>/<file>.yaml
 * ```
 *
 * where `<namespace>` is the CloudSpace's namespace on the host cluster and `<vcluster>` the
 * name of the Cluster API `Cluster` (its kubeconfig is the host Secret `<vcluster>-kubeconfig`).
 *
 * The writer works through a local working copy driven by the `git` CLI (`execFile`, no shell).
 * Each write fetches the branch, replaces one folder, commits once and pushes; a push refused
 * because the remote moved (another replica wrote first) is retried on top of the new head, so
 * any number of replicas can write at once without losing a commit. Calls on one
 * {@link FleetRepo} are serialized.
 */
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Logger } from '../../../kernel/logger.js';
import { commitFromRevision, emptyTree, git, GitError, listTree, readBlobs } from './git.js';

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

/** The top folder of tenant desired state in the fleet repository. */
export const TENANTS_ROOT = 'tenants';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A safe path segment for generic folders and file names: no leading dot (so no `.`, `..`, `.git`), no separators. */
const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;

const invalid = (message: string) => new AppError(ErrorCodes.validationFailed, message);

/** True when `value` is a DNS-1123 label (lower case, ≤ 63 characters): namespaces, vclusters, apps. */
export const isDnsLabel = (value: string): boolean => DNS_LABEL.test(value);

function dnsLabel(field: string, value: string): string {
  if (typeof value !== 'string' || !DNS_LABEL.test(value)) throw invalid(`${field} must be a DNS label (lower-case letters, digits and '-', at most 63 characters), got ${JSON.stringify(value)}`);
  return value;
}

function tenantSegment(value: string): string {
  if (typeof value === 'string' && UUID.test(value)) return value.toLowerCase();
  return dnsLabel('tenantId', value);
}

/** Where a virtual cluster's desired state lives. */
export interface VclusterRef {
  /** The tenant (a UUID, or a DNS label). */
  tenantId: string;
  /** The CloudSpace's namespace on the host cluster (where the Cluster and its kubeconfig Secret are). */
  namespace: string;
  /** The virtual cluster's name (the Cluster API `Cluster`). */
  vcluster: string;
}

/** Where one app's desired state lives. */
export interface AppRef extends VclusterRef {
  /** The app's name (a DNS label). */
  app: string;
}

/** `tenants/<tenantId>/<namespace>/<vcluster>`, every segment validated (UUID or DNS label). */
export function vclusterFolder(ref: VclusterRef): string {
  return [TENANTS_ROOT, tenantSegment(ref.tenantId), dnsLabel('namespace', ref.namespace), dnsLabel('vcluster', ref.vcluster)].join('/');
}

/** `tenants/<tenantId>/<namespace>/<vcluster>/<app>`, every segment validated. */
export function appFolder(ref: AppRef): string {
  return `${vclusterFolder(ref)}/${dnsLabel('app', ref.app)}`;
}

/**
 * The virtual cluster a path of the fleet repository belongs to (`tenants/<t>/<ns>/<vc>/...`),
 * or undefined when the path is not under a valid virtual-cluster folder.
 */
export function parseVclusterPath(path: string): (VclusterRef & { folder: string; rest: string }) | undefined {
  const parts = path.split('/');
  if (parts.length < 4 || parts[0] !== TENANTS_ROOT) return undefined;
  const [, tenantId, namespace, vcluster] = parts as [string, string, string, string];
  if (!(UUID.test(tenantId) || DNS_LABEL.test(tenantId)) || !DNS_LABEL.test(namespace) || !DNS_LABEL.test(vcluster)) return undefined;
  return { tenantId, namespace, vcluster, folder: parts.slice(0, 4).join('/'), rest: parts.slice(4).join('/') };
}

/**
 * Validates a repository-relative folder or file path: `/`-separated segments of letters, digits,
 * `.`, `_` and `-`, none starting with a dot (so `.`, `..` and `.git` are refused), no absolute
 * paths, no backslashes. Answers the normalized path (no trailing slash).
 */
export function safeRepoPath(path: string, what = 'path'): string {
  if (typeof path !== 'string') throw invalid(`${what} must be a string`);
  const trimmed = path.replace(/\/+$/, '');
  if (!trimmed) throw invalid(`${what} must not be empty (the repository root cannot be replaced)`);
  const segments = trimmed.split('/');
  for (const segment of segments) {
    if (!SAFE_SEGMENT.test(segment)) throw invalid(`${what} ${JSON.stringify(path)} has an invalid segment ${JSON.stringify(segment)} (letters, digits, '.', '_', '-', not starting with '.')`);
  }
  return segments.join('/');
}

// ---------------------------------------------------------------------------------------------
// Local bare repository
// ---------------------------------------------------------------------------------------------

const PLATFORM_IDENTITY = { name: 'cloudops platform', email: 'platform@cloudops.local' };

function identityEnv(author: { name: string; email: string }): Record<string, string> {
  return { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_COMMITTER_NAME: author.name, GIT_COMMITTER_EMAIL: author.email };
}

async function checkBranchName(branch: string): Promise<void> {
  if (typeof branch !== 'string' || !branch || branch.startsWith('-')) throw invalid(`branch ${JSON.stringify(branch)} is not a valid branch name`);
  await git(tmpdir(), ['check-ref-format', '--branch', branch]).catch(() => {
    throw invalid(`branch ${JSON.stringify(branch)} is not a valid branch name`);
  });
}

/**
 * Creates (when missing) a bare repository at `dir` with an initial empty commit on `branch`,
 * and answers its `file://` URL. Idempotent: an existing repository is kept as it is (the
 * branch is added when it is missing). For the local profile and tests.
 */
export async function createLocalBareRepo(dir: string, branch = 'main'): Promise<string> {
  await checkBranchName(branch);
  const path = resolve(dir);
  await mkdir(path, { recursive: true });
  // Only look at `dir` itself: no discovery of a repository around it.
  if (existsSync(join(path, 'HEAD')) && existsSync(join(path, 'objects'))) {
    const isBare = await git(path, [`--git-dir=${path}`, 'rev-parse', '--is-bare-repository'], { allow: [0, 128] });
    if (isBare.code !== 0 || isBare.stdout.trim() !== 'true') throw invalid(`${path} exists and is not a bare git repository`);
  } else if ((await readdir(path)).length > 0) {
    throw invalid(`${path} is not empty and not a bare git repository`);
  } else {
    await git(path, ['init', '--bare', '--quiet', path]);
  }
  const exists = await git(path, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allow: [0, 1] });
  if (exists.code !== 0) {
    const tree = await emptyTree(path);
    const commit = (await git(path, ['commit-tree', tree, '-m', 'Initialize fleet repository'], { env: identityEnv(PLATFORM_IDENTITY) })).stdout.trim();
    await git(path, ['update-ref', `refs/heads/${branch}`, commit, '']);
    await git(path, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
  }
  return pathToFileURL(path).href;
}

// ---------------------------------------------------------------------------------------------
// FleetRepo
// ---------------------------------------------------------------------------------------------

export interface FleetRepoOptions {
  /** Any URL git can fetch from and push to (`file://`, `https://`, `ssh://`...). Credentials come from git's own configuration. */
  url: string;
  /** The branch the GitOps controller follows; created (with an empty commit) when the repository does not have it. */
  branch: string;
  /** A directory for this process's working copy; created, or reused when it already holds one. */
  workdir: string;
  /** Author and committer of every commit. */
  author: { name: string; email: string };
  logger: Logger;
  /** Attempts of one write when pushes keep being refused because the remote moved. @default 8 */
  maxAttempts?: number;
  /** Timeout of one git call (fetch and push included). @default 120000 */
  gitTimeoutMs?: number;
}

/** The outcome of a write. */
export interface FleetWriteResult {
  /** The branch head after the write: the new commit, or the (unchanged) head when nothing changed. */
  commit: string;
  /** Whether a commit was made and pushed. */
  changed: boolean;
}

/** One commit, newest first in {@link FleetRepo.log}. */
export interface FleetCommit {
  sha: string;
  /** The full commit message, trimmed. */
  message: string;
  /** Author date, ISO 8601. */
  date: string;
}

/** A working copy of the fleet repository, writing to one branch. */
export interface FleetRepo {
  readonly url: string;
  readonly branch: string;
  readonly workdir: string;
  /**
   * Replaces the whole content of `path` (a repository-relative folder, see {@link appFolder})
   * with `files` (relative file names → text; sub-folders allowed), commits once with
   * `message` and pushes. Nothing is committed (`changed: false`) when the folder already holds
   * exactly these files. Retried on top of the new head when another writer pushed first.
   */
  writeFolder(path: string, files: Record<string, string>, message: string): Promise<FleetWriteResult>;
  /** Removes `path` and everything in it, in one commit; `changed: false` when it did not exist. */
  removeFolder(path: string, message: string): Promise<FleetWriteResult>;
  /** The remote branch head (fetched now). */
  head(): Promise<string>;
  /**
   * The files under `path` (relative names → text) at `revision` (a commit, or a Flux revision
   * such as `main@sha1:<sha>`; default: the remote head, fetched now). `{}` when it does not exist.
   */
  readFolder(path: string, revision?: string): Promise<Record<string, string>>;
  /**
   * Whether `commit` is contained in `revision` (the same commit or one of its ancestors). Both
   * may be commits or Flux revisions (`main@sha1:<sha>`). Unknown commits (after a fetch) answer false.
   */
  isAncestor(commit: string, revision: string): Promise<boolean>;
  /** The branch's history (fetched now), newest first, optionally only commits touching `path`. @default limit 50 */
  log(path?: string, limit?: number): Promise<FleetCommit[]>;
}

const REJECTED = /\[rejected\]|\[remote rejected\]|non-fast-forward|fetch first|cannot lock ref|failed to update ref|stale info|updates were rejected|incorrect old value|unable to update local ref|could not lock|index\.lock|shallow update not allowed/i;
const MISSING_BRANCH = /couldn't find remote ref|could not find remote ref|no such ref/i;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Opens a working copy of the fleet repository at `workdir` (cloning it, or reusing and
 * resetting one left by an earlier run) on `branch`, creating the branch with an empty commit
 * when the repository does not have it yet.
 */
export async function openFleetRepo(options: FleetRepoOptions): Promise<FleetRepo> {
  const { url, branch, author, logger } = options;
  await checkBranchName(branch);
  if (!author?.name || !author?.email) throw invalid('author needs a name and an email');
  await mkdir(resolve(options.workdir), { recursive: true });
  const workdir = await realpath(resolve(options.workdir));
  const maxAttempts = Math.max(1, options.maxAttempts ?? 8);
  const timeoutMs = options.gitTimeoutMs ?? 120_000;
  const remoteRef = `refs/remotes/origin/${branch}`;
  const log = logger.child({ component: 'fleet-repo', branch });
  const env = identityEnv(author);
  const run = (args: string[], allow?: number[], input?: string) => git(workdir, args, { allow, env, timeoutMs, input });

  // --- the working copy -----------------------------------------------------------------
  // A working copy of our own is `<workdir>/.git`; never discover a repository around workdir.
  const top = existsSync(join(workdir, '.git')) ? await git(workdir, ['rev-parse', '--show-toplevel'], { allow: [0, 128] }) : undefined;
  if (!top || top.code !== 0 || (await realpath(top.stdout.trim()).catch(() => '')) !== workdir) {
    if ((await readdir(workdir)).length > 0) throw invalid(`fleet repository workdir ${workdir} is not empty and not a git working copy`);
    await run(['init', '--quiet']);
    await run(['remote', 'add', 'origin', url]);
  } else {
    const remote = await run(['remote', 'get-url', 'origin'], [0, 2, 128]);
    if (remote.code === 0) {
      if (remote.stdout.trim() !== url) await run(['remote', 'set-url', 'origin', url]);
    } else {
      await run(['remote', 'add', 'origin', url]);
    }
  }
  for (const [key, value] of [
    ['user.name', author.name],
    ['user.email', author.email],
    ['commit.gpgsign', 'false'],
    ['core.autocrlf', 'false'],
    ['core.quotePath', 'false'],
    ['core.symlinks', 'false'],
  ] as const) {
    await run(['config', key, value]);
  }

  /** Fetches the branch into `refs/remotes/origin/<branch>`; false when the remote has no such branch. */
  async function fetch(): Promise<boolean> {
    const result = await run(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${branch}:${remoteRef}`], [0, 128]);
    if (result.code === 0) return true;
    if (MISSING_BRANCH.test(result.stderr)) return false;
    throw new GitError(['fetch'], result.code, result.stderr);
  }

  /** Fetches, creating the branch on the remote when it is missing; answers the remote head. */
  async function fetchOrCreate(): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      if (await fetch()) return (await run(['rev-parse', '--verify', `${remoteRef}^{commit}`])).stdout.trim();
      const tree = await emptyTree(workdir);
      const commit = (await run(['commit-tree', tree, '-m', 'Initialize fleet repository'])).stdout.trim();
      const push = await run(['push', '--quiet', 'origin', `${commit}:refs/heads/${branch}`], [0, 1, 128]);
      if (push.code === 0) {
        log.info({ commit }, 'created the fleet branch');
        await run(['update-ref', remoteRef, commit]);
        return commit;
      }
      if (attempt >= maxAttempts || !REJECTED.test(push.stderr)) throw new GitError(['push'], push.code, push.stderr);
    }
  }

  /**
   * The remote head the working copy is known to sit on, clean: set by a reset and by our own
   * push, cleared by anything that may have left it elsewhere. While it is known, a write starts
   * from it without fetching (most writes: one controller writes most commits); if the remote
   * moved meanwhile, the push is refused and the write is done again on a fresh reset.
   */
  let knownHead: string | undefined;

  /** Puts the working copy on `branch` exactly at the remote head, no local changes left. */
  async function resetToRemote(): Promise<string> {
    knownHead = undefined;
    const headSha = await fetchOrCreate();
    await run(['checkout', '--quiet', '--force', '-B', branch, remoteRef]);
    await run(['clean', '-ffdxq']);
    knownHead = headSha;
    return headSha;
  }

  await resetToRemote();
  log.info({ url: redactUrl(url), workdir }, 'fleet repository working copy ready');

  // --- serialization ---------------------------------------------------------------------
  let queue: Promise<unknown> = Promise.resolve();
  /** Runs `fn` after every call before it; a git failure surfaces as 503 upstream_unavailable. */
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const guarded = () =>
      fn().catch((error: unknown) => {
        if (error instanceof GitError) throw new AppError(ErrorCodes.upstreamUnavailable, `fleet repository ${redactUrl(url)}: ${error.message}`.slice(0, 600));
        throw error;
      });
    const next = queue.then(guarded, guarded);
    queue = next.catch(() => undefined);
    return next;
  }

  /** Refuses to write through a symbolic link committed somewhere on the folder's path. */
  async function assertNoLinks(folder: string): Promise<void> {
    let current = workdir;
    for (const segment of folder.split('/')) {
      current = join(current, segment);
      const stat = await lstat(current).catch(() => undefined);
      if (!stat) return;
      if (stat.isSymbolicLink() || !stat.isDirectory()) throw invalid(`fleet repository path ${folder} crosses ${current.slice(workdir.length + 1)}, which is not a folder`);
    }
  }

  async function replace(folder: string, files: Record<string, string> | undefined, message: string): Promise<FleetWriteResult> {
    try {
      return await replaceFrom(folder, files, message);
    } catch (error) {
      knownHead = undefined;
      throw error;
    }
  }

  async function replaceFrom(folder: string, files: Record<string, string> | undefined, message: string): Promise<FleetWriteResult> {
    let lastError: unknown;
    let fetched = false;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const optimistic: boolean = knownHead !== undefined && !fetched;
      const base = optimistic ? knownHead! : await resetToRemote();
      fetched = !optimistic;
      knownHead = undefined; // the working copy changes from here on
      await assertNoLinks(folder);
      const absolute = join(workdir, ...folder.split('/'));
      await rm(absolute, { recursive: true, force: true });
      for (const [name, content] of Object.entries(files ?? {})) {
        const target = join(absolute, ...name.split('/'));
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, content, 'utf8');
      }
      // The working copy was clean: the only changes are this folder's.
      await run(['add', '--all']);
      const diff = await run(['diff', '--cached', '--quiet'], [0, 1]);
      if (diff.code === 0) {
        // Unchanged here; without a fetch, the remote may hold another state of the folder.
        if (optimistic) {
          attempt -= 1;
          continue;
        }
        knownHead = base;
        return { commit: base, changed: false };
      }
      await run(['commit', '--quiet', '--no-verify', '--file=-'], undefined, message);
      const commit = (await run(['rev-parse', 'HEAD'])).stdout.trim();
      const push = await run(['push', '--porcelain', 'origin', `HEAD:refs/heads/${branch}`], [0, 1, 128]);
      if (push.code === 0) {
        await run(['update-ref', remoteRef, commit]);
        knownHead = commit;
        log.info({ commit, folder, attempt }, 'fleet commit pushed');
        return { commit, changed: true };
      }
      const output = `${push.stderr}\n${push.stdout}`;
      lastError = new GitError(['push'], push.code, output);
      if (!REJECTED.test(output)) break;
      log.debug({ folder, attempt }, 'fleet push refused (the remote moved); retrying on the new head');
      await sleep(Math.min(1000, 20 * 2 ** attempt) * (0.5 + Math.random()));
    }
    await resetToRemote().catch(() => undefined);
    throw new AppError(ErrorCodes.upstreamUnavailable, `fleet repository: could not push ${folder}: ${(lastError as Error)?.message ?? 'unknown error'}`.slice(0, 600));
  }

  /** A commit id for a commit or Flux revision, fetching once when it is not known locally. */
  async function resolveCommit(revision: string): Promise<string | undefined> {
    const candidate = commitFromRevision(revision) ?? revision;
    if (candidate.startsWith('-')) return undefined;
    const verify = () => run(['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`], [0, 1, 128]);
    let result = await verify();
    if (result.code !== 0) {
      await fetch();
      result = await verify();
    }
    return result.code === 0 ? result.stdout.trim() : undefined;
  }

  function validateFiles(files: Record<string, string>): Record<string, string> {
    if (!files || typeof files !== 'object') throw invalid('files must be an object of file names to text');
    const out: Record<string, string> = {};
    const seen = new Set<string>();
    for (const [name, content] of Object.entries(files)) {
      const normalized = safeRepoPath(name, 'file name');
      if (typeof content !== 'string') throw invalid(`file ${normalized}: content must be text`);
      const lower = normalized.toLowerCase();
      if (seen.has(lower)) throw invalid(`file ${normalized} is given twice`);
      seen.add(lower);
      out[normalized] = content;
    }
    const names = Object.keys(out);
    for (const name of names) {
      if (names.some((other) => other.startsWith(`${name}/`))) throw invalid(`file ${name} is also a folder of another file`);
    }
    return out;
  }

  return {
    url,
    branch,
    workdir,
    writeFolder(path, files, message) {
      const folder = safeRepoPath(path, 'folder');
      checkMessage(message);
      const checked = validateFiles(files);
      return serial(() => replace(folder, checked, message));
    },
    removeFolder(path, message) {
      const folder = safeRepoPath(path, 'folder');
      checkMessage(message);
      return serial(() => replace(folder, undefined, message));
    },
    head() {
      return serial(() => fetchOrCreate());
    },
    readFolder(path, revision) {
      const folder = safeRepoPath(path, 'folder');
      return serial(async () => {
        const commit = revision === undefined ? await fetchOrCreate() : await resolveCommit(revision);
        if (!commit) throw new AppError(ErrorCodes.notFound, `fleet repository: revision ${revision} not found`);
        const entries = (await listTree(workdir, commit, folder)).filter((e) => e.path.startsWith(`${folder}/`));
        const blobs = await readBlobs(workdir, entries.map((e) => e.object));
        const files: Record<string, string> = {};
        for (const entry of entries) files[entry.path.slice(folder.length + 1)] = blobs.get(entry.object) ?? '';
        return files;
      });
    },
    isAncestor(commit, revision) {
      return serial(async () => {
        const a = await resolveCommit(commit);
        const b = await resolveCommit(revision);
        if (!a || !b) return false;
        const result = await run(['merge-base', '--is-ancestor', a, b], [0, 1]);
        return result.code === 0;
      });
    },
    log(path, limit = 50) {
      const folder = path === undefined ? undefined : safeRepoPath(path, 'folder');
      const count = Math.max(1, Math.min(10_000, Math.floor(limit)));
      return serial(async () => {
        await fetchOrCreate();
        const args = ['log', `--max-count=${count}`, '--format=%H%x1f%aI%x1f%B%x1e', remoteRef];
        if (folder) args.push('--', folder);
        const { stdout } = await run(args);
        return stdout
          .split('\x1e')
          .map((record) => record.replace(/^\n/, ''))
          .filter((record) => record.includes('\x1f'))
          .map((record) => {
            const [sha, date, message] = record.split('\x1f') as [string, string, string];
            return { sha, date, message: message.trim() };
          });
      });
    },
  };
}

function checkMessage(message: string): void {
  if (typeof message !== 'string' || !message.trim()) throw invalid('a fleet commit needs a message');
}

/** A URL without its password, for logs. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

