/**
 * A backfill step waits for the ingestion log: it starts once no write accepted before it is
 * pending (one accepted in legacy mode would otherwise never reach the events tables), and is
 * refused with the reason when the drain does not get there in time or the process stops.
 */
import { describe, expect, it } from 'vitest';
import { awaitLogDrained, type LogWait } from '../../server/features/ingestion/log/wait-drained.ts';

/** A clock that moves only when the wait sleeps; `counts` are what successive reads of the queue find. */
function wait(counts: number[], extra: Partial<LogWait> = {}) {
  let clock = 0;
  const reads: number[] = [];
  const waits: number[] = [];
  const o: LogWait = {
    pending: async () => {
      const n = counts[Math.min(reads.length, counts.length - 1)]!;
      reads.push(n);
      return n;
    },
    shouldStop: () => false,
    maxWaitMs: 10_000,
    recheckMs: 1_000,
    onWait: (n) => waits.push(n),
    sleep: async (ms) => {
      clock += ms;
    },
    now: () => clock,
    ...extra,
  };
  return { run: () => awaitLogDrained(o), reads, waits, clock: () => clock };
}

describe('a backfill step and the ingestion log', () => {
  it('starts at once when nothing accepted before it is pending', async () => {
    const w = wait([0]);
    expect(await w.run()).toBeUndefined();
    expect(w.waits).toEqual([]);
  });

  it('waits while the drain writes what was accepted before it, then starts', async () => {
    const w = wait([3, 2, 2, 0]);
    expect(await w.run()).toBeUndefined();
    expect(w.waits).toEqual([3, 2, 2]);
    expect(w.clock()).toBe(3_000);
  });

  it('is refused, naming the backlog, when the drain does not get there in time', async () => {
    const w = wait([4]);
    expect(await w.run()).toMatch(/^4 writes accepted before it are still in the ingestion log/);
    expect(w.clock()).toBe(10_000);
  });

  it('is refused at once when the process stops', async () => {
    const w = wait([1], { shouldStop: () => true });
    expect(await w.run()).toMatch(/^1 writes accepted before it/);
    expect(w.reads).toEqual([1]);
  });
});
