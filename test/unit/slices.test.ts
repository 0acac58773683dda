import { describe, expect, it } from 'vitest';
import { forEachInSlices } from '../../server/features/ingestion/slices.ts';

describe('forEachInSlices', () => {
  // A clock that advances `step` per reading: the slice boundaries depend on it alone.
  const clockOf = (step: number) => {
    let t = 0;
    return () => (t += step);
  };

  it.each([
    // [ms per clock reading, where the event loop got a turn between the items (|)]
    [1, '0 1 2 3 4 5'],
    [5, '0 1 | 2 3 | 4 5'],
    [4, '0 1 2 | 3 4 5'],
    [10, '0 | 1 | 2 | 3 | 4 | 5'],
  ])('6 items, 10 ms slices, clock step %i: %s', async (step, expected) => {
    const seen: string[] = [];
    let running = true;
    const turn = () => {
      if (!running) return;
      seen.push('|');
      setImmediate(turn);
    };
    setImmediate(turn);
    await forEachInSlices([0, 1, 2, 3, 4, 5], (i) => seen.push(String(i)), {
      sliceMs: 10,
      clock: clockOf(step),
    });
    running = false;
    expect(seen.join(' ').replace(/( \|)+$/, '')).toBe(expected);
  });
});
