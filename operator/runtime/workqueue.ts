/**
 * A level-triggered work queue keyed by object (namespace/name), in the spirit of client-go's:
 * a key is queued at most once however many events arrive, is never processed by two workers at
 * once (an event during processing re-queues it for after), failures back off exponentially per
 * key, and a handler can ask to be called again after a delay.
 *
 * A queue made `closed` drops every key until `open()`: events that arrive before the process
 * leads with synced caches are not worth keeping, since opening enqueues every object anyway.
 */

export interface Outcome {
  /** Run again after this many milliseconds even if nothing changes (polling external gates). */
  requeueAfterMs?: number;
}

export type Handler = (key: string) => Promise<Outcome | undefined>;

export interface WorkQueueOptions {
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  workers?: number;
  /** Drop every key until `open()` (default: open). */
  closed?: boolean;
  onError?: (key: string, err: unknown, retryInMs: number) => void;
}

export class WorkQueue {
  readonly #handler: Handler;
  readonly #o: Required<Omit<WorkQueueOptions, 'onError' | 'closed'>> & Pick<WorkQueueOptions, 'onError'>;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #active = 0;
  #stopped = false;
  #closed: boolean;
  #idle: (() => void)[] = [];

  constructor(handler: Handler, options: WorkQueueOptions = {}) {
    this.#handler = handler;
    this.#o = {
      baseBackoffMs: options.baseBackoffMs ?? 1_000,
      maxBackoffMs: options.maxBackoffMs ?? 300_000,
      workers: options.workers ?? 2,
      onError: options.onError,
    };
    this.#closed = options.closed ?? false;
  }

  /** Starts taking keys (a queue made `closed`). */
  open(): void {
    this.#closed = false;
  }

  /** Queues the key now (an earlier delayed run is superseded). */
  add(key: string): void {
    if (this.#stopped || this.#closed) return;
    this.#clearTimer(key);
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  /** Queues the key after a delay, unless it is queued sooner. */
  addAfter(key: string, delayMs: number): void {
    if (this.#stopped || this.#closed) return;
    const existing = this.#timers.get(key);
    if (existing) clearTimeout(existing);
    const t = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    t.unref();
    this.#timers.set(key, t);
  }

  /** Backoff for the n-th consecutive failure of a key. */
  backoffMs(failures: number): number {
    return Math.min(this.#o.maxBackoffMs, this.#o.baseBackoffMs * 2 ** Math.max(0, failures - 1));
  }

  get length(): number {
    return this.#queue.length;
  }

  #clearTimer(key: string): void {
    const t = this.#timers.get(key);
    if (t) clearTimeout(t);
    this.#timers.delete(key);
  }

  #pump(): void {
    while (!this.#stopped && this.#active < this.#o.workers && this.#queue.length > 0) {
      const key = this.#queue.shift()!;
      this.#queued.delete(key);
      this.#processing.add(key);
      this.#active++;
      void this.#run(key);
    }
    if (this.#active === 0 && this.#queue.length === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #run(key: string): Promise<void> {
    let retryIn: number | undefined;
    try {
      const outcome = await this.#handler(key);
      this.#failures.delete(key);
      retryIn = outcome?.requeueAfterMs;
    } catch (err) {
      const n = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, n);
      retryIn = this.backoffMs(n);
      this.#o.onError?.(key, err, retryIn);
    } finally {
      this.#processing.delete(key);
      this.#active--;
      if (this.#dirty.delete(key)) this.add(key);
      else if (retryIn !== undefined) this.addAfter(key, retryIn);
      this.#pump();
    }
  }

  /** Resolves when nothing is queued or running (tests and shutdown). */
  idle(): Promise<void> {
    if (this.#active === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops taking work; running handlers finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    this.#queue.length = 0;
    this.#queued.clear();
    while (this.#active > 0) await new Promise((r) => setTimeout(r, 10));
  }
}
