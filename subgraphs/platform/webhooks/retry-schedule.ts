/**
 * The published retry schedule of outbound deliveries: the delay before each attempt, counted
 * from the event. Nine attempts; the last at 23 h 45 min, inside the 24-hour window of spec 6.
 * After it fails, the delivery is failed for good (it can still be redelivered by hand).
 */
export const RETRY_SCHEDULE_SECS: readonly number[] = [0, 60, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 16 * 3600, 23 * 3600 + 45 * 60];

/** When attempt `attempt` (1-based) is due for an event that occurred at `occurredAt`; null when none is left. */
export function attemptDueAt(occurredAt: Date, attempt: number): Date | null {
  const offset = RETRY_SCHEDULE_SECS[attempt - 1];
  return offset === undefined ? null : new Date(occurredAt.getTime() + offset * 1000);
}
