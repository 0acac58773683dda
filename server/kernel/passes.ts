import type { Logger } from 'pino';

/**
 * A pass every `everyMs`, one at a time: a tick that comes while a pass runs queues behind it, and a
 * pass that fails is logged as `<name> failed` without stopping the ones after it.
 */
export class PassTimer {
  readonly #timer: NodeJS.Timeout;
  #last: Promise<void> = Promise.resolve();

  constructor(name: string, everyMs: number, pass: () => Promise<unknown>, log: Logger) {
    const failed = (err: Error) => log.error({ err: err.message }, `${name} failed`);
    this.#timer = setInterval(() => {
      this.#last = this.#last.then(() => pass()).then(() => undefined, failed);
    }, everyMs);
  }

  /** No pass starts any more; resolves when the one under way (and those queued behind it) ended. */
  stop(): Promise<void> {
    clearInterval(this.#timer);
    return this.#last;
  }
}

/** Waits for `work`, but never longer than `ms` (what is still running is left to finish alone). */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Sleeps a loop can be woken from: `wake()` ends the pause under way at once (used on stop). */
export function wakeablePause() {
  let wake: (() => void) | undefined;
  return {
    pause: (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    wake: () => wake?.(),
  };
}
