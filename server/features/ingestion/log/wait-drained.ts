/**
 * The wait of a step that must see every write the log accepted before it in the store. A backfill
 * step reads the legacy tables: a write drained after it would stay out of the events tables for
 * good. A schema rollback drops the tables that logged writes of version 4 target: drained after
 * it, they fail. So such a step starts once those writes are drained, and, when the drain does not
 * get there in time (no worker drains, or the store refuses a file), it is refused with the reason.
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
