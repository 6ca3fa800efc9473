/**
 * Container logs of simulated pods: a bounded buffer of timestamped lines per container, and the
 * followers of `kubectl logs -f` that get each new line as it is written.
 */

export interface LogLine {
  /** Milliseconds since the epoch. */
  at: number;
  text: string;
}

export interface LogFollower {
  line(line: LogLine): void;
  /** The container's pod is gone: the stream ends. */
  end(): void;
}

interface ContainerLog {
  lines: LogLine[];
  followers: Set<LogFollower>;
}

const key = (namespace: string, pod: string, container: string) => `${namespace}/${pod}/${container}`;

export class LogBook {
  private readonly logs = new Map<string, ContainerLog>();
  /** pod key → its containers' keys, to drop them with the pod. */
  private readonly byPod = new Map<string, Set<string>>();

  /** @param maxLines lines kept per container */
  constructor(private readonly maxLines = 5000) {}

  private entry(namespace: string, pod: string, container: string): ContainerLog {
    const k = key(namespace, pod, container);
    let log = this.logs.get(k);
    if (!log) {
      this.logs.set(k, (log = { lines: [], followers: new Set() }));
      const podKey = `${namespace}/${pod}`;
      let set = this.byPod.get(podKey);
      if (!set) this.byPod.set(podKey, (set = new Set()));
      set.add(k);
    }
    return log;
  }

  write(namespace: string, pod: string, container: string, text: string, at = Date.now()): void {
    const log = this.entry(namespace, pod, container);
    const line = { at, text };
    log.lines.push(line);
    if (log.lines.length > this.maxLines + 500) log.lines.splice(0, log.lines.length - this.maxLines);
    for (const f of log.followers) f.line(line);
  }

  lines(namespace: string, pod: string, container: string): readonly LogLine[] {
    return this.logs.get(key(namespace, pod, container))?.lines ?? [];
  }

  /** Adds a follower; answers a function removing it. */
  follow(namespace: string, pod: string, container: string, follower: LogFollower): () => void {
    const log = this.entry(namespace, pod, container);
    log.followers.add(follower);
    return () => log.followers.delete(follower);
  }

  /** The pod is gone: followers end, lines are dropped. */
  dropPod(namespace: string, pod: string): void {
    const podKey = `${namespace}/${pod}`;
    for (const k of this.byPod.get(podKey) ?? []) {
      const log = this.logs.get(k);
      if (log) for (const f of log.followers) f.end();
      this.logs.delete(k);
    }
    this.byPod.delete(podKey);
  }
}
