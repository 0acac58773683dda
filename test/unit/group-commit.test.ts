import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Coalescer, GroupCommit, takeGroup } from '../../server/features/write-model/group-commit.ts';

const waiters = (...sizes: number[]) =>
  sizes.map((n, i) => ({ id: i, rows: Array.from({ length: n }, () => i) }));

describe('takeGroup', () => {
  it.each([
    { sizes: [3], max: 10, taken: [0], left: [] },
    { sizes: [3, 4, 2], max: 10, taken: [0, 1, 2], left: [] },
    { sizes: [3, 4, 5], max: 10, taken: [0, 1], left: [2] },
    { sizes: [12, 1], max: 10, taken: [0], left: [1] },
    { sizes: [4, 6, 1], max: 10, taken: [0, 1], left: [2] },
    { sizes: [4, 7, 1], max: 10, taken: [0], left: [1, 2] },
  ])('$sizes with at most $max rows takes $taken', ({ sizes, max, taken, left }) => {
    const queue = waiters(...sizes);
    expect(takeGroup(queue, max).map((w) => w.id)).toEqual(taken);
    expect(queue.map((w) => w.id)).toEqual(left);
  });
});

/** A flush the test completes by hand, recording what each insert carried. */
function manualStore() {
  const calls: { table: string; rows: number[]; settle: (err?: Error) => void }[] = [];
  const flush = (table: string, rows: number[]) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ table, rows, settle: (err) => (err ? reject(err) : resolve()) });
    });
  return { calls, flush };
}

const tick = () => new Promise((r) => setImmediate(r));
const state = (p: Promise<void>) =>
  Promise.race([
    p.then(
      () => 'resolved',
      () => 'rejected',
    ),
    tick().then(() => 'pending'),
  ]);

describe('GroupCommit', () => {
  it('writes a lone insert at once and joins what arrives meanwhile into the next insert', async () => {
    const store = manualStore();
    const gc = new GroupCommit(store.flush, { maxRows: 100 });
    const a = gc.insert('t', [1]);
    await tick();
    expect(store.calls.map((c) => c.rows)).toEqual([[1]]);
    const b = gc.insert('t', [2, 3]);
    const c = gc.insert('t', [4]);
    await tick();
    expect(store.calls).toHaveLength(1);
    expect(await state(b)).toBe('pending');
    store.calls[0]!.settle();
    expect(await state(a)).toBe('resolved');
    await tick();
    expect(store.calls.map((x) => x.rows)).toEqual([[1], [2, 3, 4]]);
    // Not acknowledged before the insert carrying the rows is.
    expect(await state(b)).toBe('pending');
    store.calls[1]!.settle();
    expect([await state(b), await state(c)]).toEqual(['resolved', 'resolved']);
  });

  it('fails every caller whose rows a failed insert carried, and only those', async () => {
    const store = manualStore();
    const gc = new GroupCommit(store.flush, { maxRows: 100 });
    const a = gc.insert('t', [1]);
    await tick();
    const b = gc.insert('t', [2]);
    const c = gc.insert('t', [3]);
    store.calls[0]!.settle();
    await tick();
    store.calls[1]!.settle(new Error('store went away'));
    await expect(b).rejects.toThrow('store went away');
    await expect(c).rejects.toThrow('store went away');
    expect(await state(a)).toBe('resolved');
    const d = gc.insert('t', [4]);
    await tick();
    store.calls[2]!.settle();
    expect(await state(d)).toBe('resolved');
  });

  it('keeps tables apart and never writes an empty insert', async () => {
    const store = manualStore();
    const gc = new GroupCommit(store.flush, { maxRows: 100 });
    await gc.insert('t', []);
    const a = gc.insert('t', [1]);
    const b = gc.insert('u', [2]);
    await tick();
    expect(store.calls.map((c) => [c.table, c.rows])).toEqual([
      ['t', [1]],
      ['u', [2]],
    ]);
    for (const c of store.calls) c.settle();
    await Promise.all([a, b]);
  });

  it('splits a backlog larger than maxRows over consecutive inserts', async () => {
    const store = manualStore();
    const gc = new GroupCommit(store.flush, { maxRows: 3 });
    const first = gc.insert('t', [0]);
    const rest = [gc.insert('t', [1, 2]), gc.insert('t', [3]), gc.insert('t', [4, 5])];
    for (let i = 0; i < 3; i++) {
      await tick();
      store.calls[i]!.settle();
    }
    await Promise.all([first, ...rest]);
    expect(store.calls.map((c) => c.rows)).toEqual([[0], [1, 2, 3], [4, 5]]);
  });
});

describe('Coalescer (shared reads)', () => {
  it('answers each caller its own share of one statement run for everyone queued meanwhile', async () => {
    const runs: string[][][] = [];
    const release: (() => void)[] = [];
    const co = new Coalescer<string, string[]>(
      async (_key, callers) => {
        runs.push(callers);
        await new Promise<void>((r) => release.push(r));
        return callers.map((ids) => ids.map((id) => `row ${id}`));
      },
      { maxRows: 100 },
    );
    const a = co.submit('k', ['1']);
    await tick();
    const b = co.submit('k', ['2', '3']);
    const c = co.submit('k', ['4']);
    release.shift()!();
    expect(await a).toEqual(['row 1']);
    await tick();
    expect(runs).toEqual([[['1']], [['2', '3'], ['4']]]);
    release.shift()!();
    expect([await b, await c]).toEqual([['row 2', 'row 3'], ['row 4']]);
  });
});

describe('Coalescer linger under load', () => {
  /** A coalescer whose statements take `statementMs` of fake time, recording what each carried. */
  function timed(statementMs: number, lingerMs: number) {
    const runs: number[][] = [];
    const co = new Coalescer<number, void>(
      async (_key, callers) => {
        runs.push(callers.flat());
        await new Promise((r) => setTimeout(r, statementMs));
        return callers.map(() => undefined);
      },
      { maxRows: 100, lingerMs },
    );
    /** A statement for caller 0, then (after a linger) one carrying the `n` callers queued meanwhile. */
    const crowd = async (n: number) => {
      const all = [co.submit('k', [0]), ...Array.from({ length: n }, (_, i) => co.submit('k', [i + 1]))];
      await vi.advanceTimersByTimeAsync(2 * statementMs + lingerMs);
      await Promise.all(all);
      runs.length = 0;
    };
    return { co, runs, crowd };
  }

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits for as many callers as the last statement had, and leaves as soon as they are there', async () => {
    const { co, runs, crowd } = timed(100, 50);
    await crowd(3);
    const next = [co.submit('k', [4])];
    await vi.advanceTimersByTimeAsync(10);
    expect(runs).toEqual([]);
    next.push(co.submit('k', [5]), co.submit('k', [6]));
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([[4, 5, 6]]);
    await vi.advanceTimersByTimeAsync(100);
    await Promise.all(next);
  });

  // The wait is the linger, or the last statement's time when that is shorter.
  it.each([
    { statementMs: 100, lingerMs: 50, waits: 50 },
    { statementMs: 20, lingerMs: 250, waits: 20 },
  ])(
    'statements of $statementMs ms, linger $lingerMs ms: a lone caller leaves after $waits ms, the next at once',
    async ({ statementMs, lingerMs, waits }) => {
      const { co, runs, crowd } = timed(statementMs, lingerMs);
      await crowd(2);
      const lone = co.submit('k', [3]);
      await vi.advanceTimersByTimeAsync(waits - 1);
      expect(runs).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(runs).toEqual([[3]]);
      await vi.advanceTimersByTimeAsync(statementMs);
      await lone;
      // That statement carried one caller: the next lone caller is served at once.
      const next = co.submit('k', [4]);
      await vi.advanceTimersByTimeAsync(0);
      expect(runs).toEqual([[3], [4]]);
      await vi.advanceTimersByTimeAsync(statementMs);
      await next;
    },
  );

  it('without a linger, a lone caller after a crowded statement is served at once', async () => {
    const { co, runs, crowd } = timed(100, 0);
    await crowd(2);
    const lone = co.submit('k', [3]);
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([[3]]);
    await vi.advanceTimersByTimeAsync(100);
    await lone;
  });
});
