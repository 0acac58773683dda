/**
 * Group commit of inserts per table, and the same coalescing for reads by id. Every statement the
 * analytics store runs pays a fixed cost (a synchronous insert creates a part; the analytics server
 * runs one statement at a time) that dwarfs the rows of one ingestion request, so what concurrent
 * requests send for the same key while a statement of that key is in flight waits and leaves
 * together in the next one. No timer: a lone request is served at once, and under load each
 * statement carries what arrived during the previous one.
 *
 * Durability is unchanged: a caller's promise settles with the insert that carried its rows, so a
 * request is acknowledged only once the store has acknowledged every one of its rows, and a failed
 * insert fails every request whose rows it carried.
 */

export type Flush<R> = (table: string, rows: R[]) => Promise<void>;

export interface GroupCommitOptions {
  /** Rows at most per statement; a larger backlog leaves in several, one after the other. */
  maxRows: number;
}

interface Waiter<I, O> {
  rows: I[];
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

interface Lane<I, O> {
  queue: Waiter<I, O>[];
  busy: boolean;
}

/**
 * Runs one statement per key for the items of every caller queued under that key; `run` answers
 * each caller's share, in the callers' order.
 */
export type RunGroup<I, O> = (key: string, callers: I[][]) => Promise<O[]>;

export class Coalescer<I, O> {
  readonly #run: RunGroup<I, O>;
  readonly #maxRows: number;
  readonly #lanes = new Map<string, Lane<I, O>>();

  constructor(run: RunGroup<I, O>, options: GroupCommitOptions) {
    this.#run = run;
    this.#maxRows = options.maxRows;
  }

  /** Resolves with this caller's share of the statement that carried `items`. */
  submit(key: string, items: I[]): Promise<O> {
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { queue: [], busy: false };
      this.#lanes.set(key, lane);
    }
    const done = new Promise<O>((resolve, reject) => lane.queue.push({ rows: items, resolve, reject }));
    if (!lane.busy) void this.#drain(key, lane);
    return done;
  }

  async #drain(key: string, lane: Lane<I, O>): Promise<void> {
    lane.busy = true;
    while (lane.queue.length > 0) {
      const group = takeGroup(lane.queue, this.#maxRows);
      try {
        const out = await this.#run(
          key,
          group.map((w) => w.rows),
        );
        for (const [i, w] of group.entries()) w.resolve(out[i]!);
      } catch (err) {
        for (const w of group) w.reject(err);
      }
    }
    lane.busy = false;
    this.#lanes.delete(key);
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
