import type { Logger } from './logger.js';

export interface PassLoop {
  /** Runs a pass now, or right after the one in progress. */
  nudge(): void;
  /** Stops the timer and waits for the pass in progress. */
  stop(): Promise<void>;
  readonly stopped: boolean;
}

/**
 * Runs `pass` every `intervalMs` and whenever nudged, never two at once: a nudge during a pass
 * runs one more pass after it, so no change is missed and none is handled twice in parallel. A
 * failing pass is logged and the loop goes on.
 */
export function startPassLoop(options: { name: string; pass: () => Promise<unknown>; intervalMs: number; logger: Logger; runNow?: boolean }): PassLoop {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await options.pass();
        } catch (error) {
          if (!stopped) options.logger.warn({ err: error }, `${options.name} pass failed`);
        }
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
    });
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  // Not synchronously: the caller may refer to the loop from its pass.
  if (options.runNow) queueMicrotask(tick);
  return {
    nudge: tick,
    get stopped() {
      return stopped;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
