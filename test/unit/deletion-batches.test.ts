import { describe, expect, it } from 'vitest';
import {
  type PendingDeletion,
  planBatch,
  stateAfter,
} from '../../server/features/deletion/deletion-batches.ts';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const d = (id: string, n: number, done = 0): PendingDeletion => ({ id, traceIds: ids(id, n), done });

describe('planBatch', () => {
  it.each([
    ['one small deletion whole', [d('a', 3)], 10, [{ id: 'a', from: 0, to: 3 }]],
    [
      'several deletions together up to the limit',
      [d('a', 3), d('b', 4), d('c', 5)],
      10,
      [
        { id: 'a', from: 0, to: 3 },
        { id: 'b', from: 0, to: 4 },
        { id: 'c', from: 0, to: 3 },
      ],
    ],
    ['a deletion larger than the limit: its first slice', [d('a', 25)], 10, [{ id: 'a', from: 0, to: 10 }]],
    ['resumes after what is done', [d('a', 25, 20)], 10, [{ id: 'a', from: 20, to: 25 }]],
    ['skips deletions with nothing left', [d('a', 5, 5), d('b', 2)], 10, [{ id: 'b', from: 0, to: 2 }]],
    ['nothing pending', [], 10, []],
    ['an exact fit leaves the next one out', [d('a', 10), d('b', 1)], 10, [{ id: 'a', from: 0, to: 10 }]],
  ])('%s', (_name, pending, limit, slices) => {
    const batch = planBatch(pending, limit);
    expect(batch.slices).toEqual(slices);
    const expected = slices.flatMap((s) => ids(s.id, s.to).slice(s.from));
    expect(batch.traceIds).toEqual(expected);
    expect(batch.traceIds.length).toBeLessThanOrEqual(limit);
  });

  it('names an id two deletions share once', () => {
    const shared: PendingDeletion[] = [
      { id: 'a', traceIds: ['x', 'y'], done: 0 },
      { id: 'b', traceIds: ['y', 'z'], done: 0 },
    ];
    expect(planBatch(shared, 10).traceIds).toEqual(['x', 'y', 'z']);
  });
});

describe('stateAfter', () => {
  it.each([
    [{ id: 'a', from: 0, to: 10 }, 10, 'succeeded'],
    [{ id: 'a', from: 0, to: 10 }, 25, 'running'],
    [{ id: 'a', from: 20, to: 25 }, 25, 'succeeded'],
  ] as const)('%o of %i ids: %s', (slice, total, state) => {
    expect(stateAfter(slice, total)).toBe(state);
  });
});
