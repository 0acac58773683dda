/**
 * The backfill's wait for the ingestion log. A write accepted in legacy mode writes only the
 * legacy tables, whenever the drain gets to it; a step reading those tables before that would
 * leave the write out of the events tables for good. So a step starts once every write accepted
 * before it is in the store, and, when the drain does not get there in time (no worker drains, or
 * the store refuses a file), it is refused with the reason and runs again later.
 */
export interface LogWait {
  /** Writes accepted before the step started and not in the store yet. */
  pending: () => Promise<number>;
  shouldStop: () => boolean;
  maxWaitMs: number;
  recheckMs: number;
  onWait: (pending: number) => void;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Resolves once nothing is pending (undefined), or with why the step may not start yet. */
export async function awaitLogDrained(o: LogWait): Promise<string | undefined> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = now();
  for (;;) {
    const pending = await o.pending();
    if (pending === 0) return undefined;
    if (o.shouldStop() || now() - started >= o.maxWaitMs)
      return `${pending} writes accepted before it are still in the ingestion log, not in the analytics store (is a worker draining the log?)`;
    o.onWait(pending);
    await sleep(o.recheckMs);
  }
}
