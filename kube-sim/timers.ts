/**
 * Every timer of a simulated cluster goes through one `Timers`, so that stopping the cluster
 * stops them all, and a throwing callback is logged instead of taking the process down.
 * Timers are unref'd: a forgotten kube-sim never keeps a test process alive on its own.
 */
import type { Logger } from 'pino';
import { StatusError } from './status.js';

export class Timers {
  private readonly handles = new Set<NodeJS.Timeout>();
  private readonly keyed = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly logger: Logger) {}

  private guard(what: string, fn: () => void): () => void {
    return () => {
      try {
        fn();
      } catch (error) {
        this.logger.error({ err: error }, `kube-sim: ${what} failed`);
      }
    };
  }

  /** Runs `fn` once after `ms`; answers a function cancelling it. */
  after(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const run = this.guard('timer', fn);
    const handle = setTimeout(() => {
      this.handles.delete(handle);
      run();
    }, ms);
    handle.unref();
    this.handles.add(handle);
    return () => {
      clearTimeout(handle);
      this.handles.delete(handle);
    };
  }

  /** Like {@link after}, replacing any timer already set under `key`. */
  afterKeyed(key: string, ms: number, fn: () => void): void {
    this.cancel(key);
    if (this.stopped) return;
    const run = this.guard(key, fn);
    const handle = setTimeout(() => {
      this.keyed.delete(key);
      run();
    }, ms);
    handle.unref();
    this.keyed.set(key, handle);
  }

  has(key: string): boolean {
    return this.keyed.has(key);
  }

  cancel(key: string): void {
    const handle = this.keyed.get(key);
    if (handle) clearTimeout(handle);
    this.keyed.delete(key);
  }

  /** Runs `fn` every `ms`; answers a function stopping it. */
  every(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const handle = setInterval(this.guard('interval', fn), ms);
    handle.unref();
    this.handles.add(handle);
    return () => {
      clearInterval(handle);
      this.handles.delete(handle);
    };
  }

  stop(): void {
    this.stopped = true;
    for (const h of this.handles) clearTimeout(h);
    for (const h of this.keyed.values()) clearTimeout(h);
    this.handles.clear();
    this.keyed.clear();
  }
}

/**
 * A controller's queue of object keys (`namespace/name`): a key added many times before it is
 * processed is processed once, on the next turn of the event loop, which is how change
 * notifications (that must not write) turn into reconciles (that do).
 */
export class WorkQueue {
  private readonly pending = new Set<string>();
  private scheduled = false;

  constructor(
    private readonly name: string,
    private readonly timers: Timers,
    private readonly logger: Logger,
    private readonly reconcile: (key: string) => void,
  ) {}

  add(key: string): void {
    this.pending.add(key);
    if (this.scheduled) return;
    this.scheduled = true;
    this.timers.after(0, () => this.drain());
  }

  /** Adds `key` after `ms`, replacing an earlier delayed add of the same key. */
  addAfter(key: string, ms: number): void {
    this.timers.afterKeyed(`${this.name}:${key}`, ms, () => this.add(key));
  }

  private drain(): void {
    this.scheduled = false;
    const keys = [...this.pending];
    this.pending.clear();
    for (const key of keys) {
      try {
        this.reconcile(key);
      } catch (error) {
        // A conflict means something else wrote first: look again shortly, as controllers do.
        if (error instanceof StatusError && error.code === 409) {
          this.addAfter(key, 20);
        } else {
          this.logger.error({ err: error, controller: this.name, key }, 'kube-sim: reconcile failed');
          this.addAfter(key, 500);
        }
      }
    }
  }
}
