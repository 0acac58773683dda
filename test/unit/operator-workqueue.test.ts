import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../operator/runtime/workqueue.ts';

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

describe('work queue', () => {
  it('deduplicates a key queued many times while it waits', async () => {
    const seen: string[] = [];
    const q = new WorkQueue(
      async (k) => {
        seen.push(k);
        await tick();
        return undefined;
      },
      { workers: 1 },
    );
    q.add('busy');
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    await q.idle();
    expect(seen).toEqual(['busy', 'a', 'b']);
    await q.stop();
  });

  it('never runs one key twice at once, and re-runs it when it changed meanwhile', async () => {
    let running = 0;
    let max = 0;
    let runs = 0;
    const q = new WorkQueue(
      async () => {
        running++;
        max = Math.max(max, running);
        runs++;
        await tick(20);
        running--;
        return undefined;
      },
      { workers: 4 },
    );
    q.add('x');
    await tick(5);
    q.add('x');
    q.add('x');
    await tick(80);
    await q.idle();
    expect(max).toBe(1);
    expect(runs).toBe(2);
    await q.stop();
  });

  it('backs off exponentially per key on failure and resets on success', async () => {
    const times: number[] = [];
    let calls = 0;
    const q = new WorkQueue(
      async () => {
        times.push(Date.now());
        calls++;
        if (calls < 4) throw new Error('boom');
        return undefined;
      },
      { baseBackoffMs: 20, maxBackoffMs: 1_000 },
    );
    expect([1, 2, 3, 4, 10].map((n) => q.backoffMs(n))).toEqual([20, 40, 80, 160, 1_000]);
    q.add('k');
    while (calls < 4) await tick(10);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(18);
    expect(gaps[1]).toBeGreaterThanOrEqual(38);
    expect(gaps[2]).toBeGreaterThanOrEqual(78);
    await q.stop();
  });

  it('requeues after the delay a handler asks for', async () => {
    let calls = 0;
    const q = new WorkQueue(async () => {
      calls++;
      return calls === 1 ? { requeueAfterMs: 30 } : undefined;
    });
    q.add('k');
    await tick(10);
    expect(calls).toBe(1);
    await tick(60);
    expect(calls).toBe(2);
    await q.stop();
  });
});
