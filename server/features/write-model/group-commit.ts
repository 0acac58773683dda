/**
 * Group commit of inserts per table, and the same coalescing for reads by id. Every statement the
 * analytics store runs pays a fixed cost (a synchronous insert creates a part; the analytics server
 * runs one statement at a time) that dwarfs the rows of one ingestion request, so what concurrent
 * requests send for the same key while a statement of that key is in flight waits and leaves
 * together in the next one. A lone request is served at once. Under load, clients answered together
 * come back together, but spread out (each request is decoded, authenticated and locked on its
 * own): a statement then waits a bounded linger for as many callers as were present at once last
 * time, so a group is not split into the first arrival and the rest (which, with the statements
 * of one store running one at a time, would halve every group from then on).
 *
 * Durability is unchanged: a caller's promise settles with the insert that carried its rows, so a
 * request is acknowledged only once the store has acknowledged every one of its rows, and a failed
 * insert fails every request whose rows it carried.
 */

export type Flush<R> = (table: string, rows: R[]) => Promise<void>;

export interface GroupCommitOptions {
  /** Rows at most per statement; a larger backlog leaves in several, one after the other. */
  maxRows: number;
  /**
   * Longest wait for the callers expected under the current load before a statement leaves with
   * fewer (0: never wait). The wait is also at most the key's last statement time: waiting longer
   * than a statement takes would cost more than the statement it saves.
   */
  lingerMs?: number;
}

/** Keys whose last load is remembered; past this the memory starts over (keys carry project ids). */
const MAX_REMEMBERED_KEYS = 1_000;

interface Waiter<I, O> {
  rows: I[];
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

interface Lane<I, O> {
  queue: Waiter<I, O>[];
  busy: boolean;
  /** Ends a linger early: called when the queue reaches the expected callers. */
  wake?: () => void;
  /** Callers present at once in the last statement, and that statement's time. */
  load: Load;
}

interface Load {
  expected: number;
  lastMs: number;
}

/**
 * Runs one statement per key for the items of every caller queued under that key; `run` answers
 * each caller's share, in the callers' order.
 */
export type RunGroup<I, O> = (key: string, callers: I[][]) => Promise<O[]>;

export class Coalescer<I, O> {
  readonly #run: RunGroup<I, O>;
  readonly #maxRows: number;
  readonly #lingerMs: number;
  readonly #lanes = new Map<string, Lane<I, O>>();
  /** Each key's last load, kept while its lane is idle: how many callers to wait for next time. */
  readonly #load = new Map<string, Load>();

  constructor(run: RunGroup<I, O>, options: GroupCommitOptions) {
    this.#run = run;
    this.#maxRows = options.maxRows;
    this.#lingerMs = options.lingerMs ?? 0;
  }

  /** Resolves with this caller's share of the statement that carried `items`. */
  submit(key: string, items: I[]): Promise<O> {
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { queue: [], busy: false, load: this.#load.get(key) ?? { expected: 1, lastMs: 0 } };
      this.#lanes.set(key, lane);
    }
    const done = new Promise<O>((resolve, reject) => lane.queue.push({ rows: items, resolve, reject }));
    if (lane.wake && this.#complete(lane)) lane.wake();
    if (!lane.busy) void this.#drain(key, lane);
    return done;
  }

  /** The queue holds the callers expected, or a full statement's rows. */
  #complete(lane: Lane<I, O>): boolean {
    if (lane.queue.length >= lane.load.expected) return true;
    let rows = 0;
    for (const w of lane.queue) rows += w.rows.length;
    return rows >= this.#maxRows;
  }

  /** How long to wait for company before the next statement (0: leave at once). */
  #lingerFor(lane: Lane<I, O>): number {
    return this.#complete(lane) ? 0 : Math.min(this.#lingerMs, lane.load.lastMs);
  }

  async #linger(lane: Lane<I, O>, ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      lane.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    lane.wake = undefined;
  }

  async #drain(key: string, lane: Lane<I, O>): Promise<void> {
    lane.busy = true;
    while (lane.queue.length > 0) {
      // Awaited only when lingering, so a statement that leaves at once does so in this tick.
      const ms = this.#lingerFor(lane);
      if (ms > 0) await this.#linger(lane, ms);
      const group = takeGroup(lane.queue, this.#maxRows);
      const started = performance.now();
      try {
        const out = await this.#run(
          key,
          group.map((w) => w.rows),
        );
        for (const [i, w] of group.entries()) w.resolve(out[i]!);
      } catch (err) {
        for (const w of group) w.reject(err);
      }
      lane.load = { expected: group.length + lane.queue.length, lastMs: performance.now() - started };
    }
    lane.busy = false;
    this.#lanes.delete(key);
    if (this.#load.size >= MAX_REMEMBERED_KEYS) this.#load.clear();
    this.#load.set(key, lane.load);
  }
}

export class GroupCommit<R> {
  readonly #inserts: Coalescer<R, void>;

  constructor(flush: Flush<R>, options: GroupCommitOptions) {
    this.#inserts = new Coalescer<R, void>(async (table, callers) => {
      await flush(table, callers.flat());
      return callers.map(() => undefined);
    }, options);
  }

  /** Resolves once an insert carrying all of `rows` has been acknowledged by the store. */
  insert(table: string, rows: R[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return this.#inserts.submit(table, rows);
  }
}

/** Removes from the front of `queue` the callers whose rows fit in one statement (at least one caller). */
export function takeGroup<W extends { rows: unknown[] }>(queue: W[], maxRows: number): W[] {
  let rows = queue[0]!.rows.length;
  let n = 1;
  while (n < queue.length && rows + queue[n]!.rows.length <= maxRows) {
    rows += queue[n]!.rows.length;
    n++;
  }
  return queue.splice(0, n);
}
