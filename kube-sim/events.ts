/**
 * `v1` Events written by the simulated controllers, as kubelet, the scheduler and the
 * controller manager write them: named `<object>.<hex>`, in the object's namespace, and a repeat
 * of the same reason and message bumps `count` and `lastTimestamp` instead of adding an event.
 */
import type { SimCluster } from './cluster.js';
import { StatusError } from './status.js';
import { timestamp, type StoredObject } from './types.js';

export type EventType = 'Normal' | 'Warning';

const MAX_REMEMBERED = 20_000;
/** Events last seen longer ago than this are deleted, like the API server's default event TTL. */
const EVENT_TTL_MS = 60 * 60 * 1000;
const EXPIRY_EVERY_MS = 60 * 1000;

export class EventRecorder {
  /** involved uid + reason + message → the event's name, for counting repeats. */
  private readonly seen = new Map<string, string>();
  private sequence = 0;

  constructor(private readonly cluster: SimCluster) {}

  /** Starts deleting expired events, so a long-running kube-sim does not grow without end. */
  startExpiry(): void {
    this.cluster.timers.every(EXPIRY_EVERY_MS, () => {
      const events = this.cluster.type('events');
      const cutoff = Date.now() - EVENT_TTL_MS;
      for (const e of this.cluster.store.list('events')) {
        const last = Date.parse(String(e.lastTimestamp ?? e.metadata.creationTimestamp));
        if (last < cutoff && this.cluster.find(events, e.metadata.namespace ?? '', e.metadata.name)) this.cluster.delete(events, e.metadata.namespace ?? '', e.metadata.name);
      }
    });
  }

  record(involved: StoredObject, type: EventType, reason: string, message: string, component: string): void {
    const events = this.cluster.type('events');
    const namespace = involved.metadata.namespace || 'default';
    const key = `${involved.metadata.uid}|${reason}|${message}`;
    const now = timestamp();
    try {
      const known = this.seen.get(key);
      if (known && this.cluster.find(events, namespace, known)) {
        this.cluster.mutate(events, namespace, known, (e) => {
          e.count = Number(e.count ?? 1) + 1;
          e.lastTimestamp = now;
        });
        return;
      }
      if (this.seen.size > MAX_REMEMBERED) this.seen.clear();
      this.sequence += 1;
      const name = `${involved.metadata.name}.${(BigInt(Date.now()) * 1_000_000n + BigInt(this.sequence)).toString(16)}`;
      this.cluster.create(events, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: involved.apiVersion,
          kind: involved.kind,
          name: involved.metadata.name,
          ...(involved.metadata.namespace ? { namespace: involved.metadata.namespace } : {}),
          uid: involved.metadata.uid,
          resourceVersion: involved.metadata.resourceVersion,
        },
        reason,
        message,
        source: { component },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: component,
        reportingInstance: '',
      });
      this.seen.set(key, name);
    } catch (error) {
      // The namespace went away with the object: nothing to record it in.
      if (!(error instanceof StatusError && error.code === 404)) throw error;
    }
  }
}
