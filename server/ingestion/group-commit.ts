/**
 * Group commit of inserts per table. Every synchronous insert into ClickHouse creates a part and
 * pays a fixed cost that dwarfs the rows of one ingestion request, so rows that concurrent requests
 * insert into the same table while an insert of that table is in flight wait and leave together in
 * the next one. No timer: a lone request is written at once, and under load each insert carries
 * what arrived during the previous one.
 *
 * Durability is unchanged: a caller's promise settles with the insert that carried its rows, so a
 * request is acknowledged only once the store has acknowledged every one of its rows, and a failed
 * insert fails every request whose rows it carried.
 */

export type Flush<R> = (table: string, rows: R[]) => Promise<void>;

export interface GroupCommitOptions {
  /** Rows at most per insert; a larger backlog leaves in several inserts, one after the other. */
  maxRows: number;
}

interface Waiter<R> {
  rows: R[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface Lane<R> {
  queue: Waiter<R>[];
  busy: boolean;
}

export class GroupCommit<R> {
  readonly #flush: Flush<R>;
  readonly #maxRows: number;
  readonly #lanes = new Map<string, Lane<R>>();

  constructor(flush: Flush<R>, options: GroupCommitOptions) {
    this.#flush = flush;
    this.#maxRows = options.maxRows;
  }

  /** Resolves once an insert carrying all of `rows` has been acknowledged by the store. */
  insert(table: string, rows: R[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    let lane = this.#lanes.get(table);
    if (!lane) {
      lane = { queue: [], busy: false };
      this.#lanes.set(table, lane);
    }
    const done = new Promise<void>((resolve, reject) => lane.queue.push({ rows, resolve, reject }));
    if (!lane.busy) void this.#drain(table, lane);
    return done;
  }

  async #drain(table: string, lane: Lane<R>): Promise<void> {
    lane.busy = true;
    while (lane.queue.length > 0) {
      const group = takeGroup(lane.queue, this.#maxRows);
      try {
        await this.#flush(
          table,
          group.flatMap((w) => w.rows),
        );
        for (const w of group) w.resolve();
      } catch (err) {
        for (const w of group) w.reject(err);
      }
    }
    lane.busy = false;
    this.#lanes.delete(table);
  }
}

/** Removes from the front of `queue` the callers whose rows fit in one insert (at least one caller). */
export function takeGroup<W extends { rows: unknown[] }>(queue: W[], maxRows: number): W[] {
  let rows = queue[0]!.rows.length;
  let n = 1;
  while (n < queue.length && rows + queue[n]!.rows.length <= maxRows) {
    rows += queue[n]!.rows.length;
    n++;
  }
  return queue.splice(0, n);
}
