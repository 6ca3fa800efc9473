/**
 * A thin, shell-free wrapper around the `git` CLI (git ≥ 2.30), shared by the fleet repository
 * writer and the local applier. Every call goes through `execFile` with an argument vector, a
 * cleaned environment (no inherited `GIT_DIR`-style variables, no terminal prompts, C locale so
 * that messages can be matched, literal pathspecs) and a timeout.
 */
import { setPriority } from 'node:os';
import { execFile } from 'node:child_process';

/** The outcome of one git invocation. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A git invocation that exited with a code the caller did not allow. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' / ').slice(0, 500)}`);
    this.name = 'GitError';
  }
}

export interface GitCallOptions {
  /** Exit codes that are answers rather than failures (e.g. 1 for `diff --quiet`). @default [0] */
  allow?: number[];
  /** Extra environment (author and committer identity). */
  env?: Record<string, string>;
  /** Written to the process's standard input. */
  input?: string;
  /** @default 120000 */
  timeoutMs?: number;
}

/** Variables that would point git at another repository or index than the one we name. */
const SCRUBBED = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_NAMESPACE', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_CEILING_DIRECTORIES'];

function gitEnv(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED) delete env[name];
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_LITERAL_PATHSPECS: '1',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
    LANG: 'C',
    ...extra,
  };
}

/** Niceness of git processes (0 normal, 19 lowest). */
const GIT_NICENESS = 10;

/** Runs `git <args>` in `cwd`; rejects with {@link GitError} on a code outside `options.allow`. */
export function git(cwd: string, args: string[], options: GitCallOptions = {}): Promise<GitResult> {
  const allow = options.allow ?? [0];
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      { cwd, env: gitEnv(options.env), maxBuffer: 256 * 1024 * 1024, timeout: options.timeoutMs ?? 120_000, encoding: 'utf8', windowsHide: true },
      (error, stdout, stderr) => {
        let code = 0;
        if (error) {
          const raw = (error as NodeJS.ErrnoException & { code?: unknown }).code;
          if (typeof raw === 'number') code = raw;
          else return reject(new GitError(args, -1, `${error.message}${stderr ? `\n${stderr}` : ''}`));
        }
        if (!allow.includes(code)) return reject(new GitError(args, code, stderr || stdout));
        resolve({ code, stdout, stderr });
      },
    );
    // Git is background work: it yields the CPU to the requests the same machine serves.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, GIT_NICENESS);
      } catch {
        // Not permitted here: it runs at normal priority.
      }
    }
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

/** One entry of `git ls-tree -r`. */
export interface TreeEntry {
  mode: string;
  type: string;
  object: string;
  path: string;
}

/** The files (blobs) under `path` at `revision`, recursively; none when the path does not exist. */
export async function listTree(cwd: string, revision: string, path?: string): Promise<TreeEntry[]> {
  const args = ['ls-tree', '-r', '-z', '--full-tree', revision];
  if (path) args.push('--', path);
  const { stdout } = await git(cwd, args);
  const entries: TreeEntry[] = [];
  for (const record of stdout.split('\0')) {
    if (!record) continue;
    const tab = record.indexOf('\t');
    const [mode, type, object] = record.slice(0, tab).split(' ');
    entries.push({ mode: mode!, type: type!, object: object!, path: record.slice(tab + 1) });
  }
  return entries.filter((e) => e.type === 'blob');
}

/** Reads many blobs in one `git cat-file --batch` process; answers object id → UTF-8 text. */
export function readBlobs(cwd: string, objects: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(objects)];
  if (unique.length === 0) return Promise.resolve(new Map());
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['cat-file', '--batch'],
      { cwd, env: gitEnv(undefined), maxBuffer: 512 * 1024 * 1024, timeout: 120_000, encoding: 'buffer', windowsHide: true },
      (error, stdout, stderr) => {
        if (error) return reject(new GitError(['cat-file', '--batch'], typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : -1, stderr.toString('utf8') || error.message));
        const out = new Map<string, string>();
        let offset = 0;
        while (offset < stdout.length) {
          const newline = stdout.indexOf(0x0a, offset);
          if (newline < 0) break;
          const header = stdout.subarray(offset, newline).toString('utf8');
          const [id, type, size] = header.split(' ');
          if (type === 'missing' || size === undefined) {
            offset = newline + 1;
            continue;
          }
          const length = Number(size);
          out.set(id!, stdout.subarray(newline + 1, newline + 1 + length).toString('utf8'));
          offset = newline + 1 + length + 1;
        }
        resolve(out);
      },
    );
    child.stdin?.end(unique.join('\n') + '\n');
  });
}

/** The object id of the empty tree in this repository's hash (SHA-1 or SHA-256), written to it. */
export async function emptyTree(cwd: string): Promise<string> {
  return (await git(cwd, ['hash-object', '-t', 'tree', '-w', '--stdin'], { input: '' })).stdout.trim();
}

/** A commit id (4–64 hex digits), as given or inside a Flux revision (`main@sha1:<sha>`, `main/<sha>`). */
export function commitFromRevision(revision: string): string | undefined {
  const text = revision.trim();
  const flux = /(?:@sha1:|@sha256:|\/)([0-9a-f]{40}|[0-9a-f]{64})$/i.exec(text);
  if (flux) return flux[1]!.toLowerCase();
  if (/^[0-9a-f]{4,64}$/i.test(text)) return text.toLowerCase();
  return undefined;
}
