import { describe, expect, it } from 'vitest';
import { nextRunDelayMs } from '../../server/app/worker/propagation/schedule.ts';
import { partitionEndMs } from '../../server/features/events/staging.ts';

const at = (iso: string) => Date.parse(iso);
const MIN = 60_000;

describe('nextRunDelayMs: the earlier of one interval and the next partition becoming eligible', () => {
  // Windows start at :00, :03, :06 ... ; with grace 30 s a partition is eligible 3 min 31 s after its start.
  it.each([
    // now, interval, grace, delay
    ['2026-11-01T00:00:00.000Z', MIN, 30, 31_000], // the previous window (23:57) turns eligible at 00:00:31
    ['2026-11-01T00:00:31.000Z', MIN, 30, MIN], // just ran for it: next eligible at 00:03:31, the interval is sooner
    ['2026-11-01T00:02:45.000Z', MIN, 30, 46_000], // 00:03:31 is sooner than the interval
    ['2026-11-01T00:03:30.500Z', MIN, 30, 500],
    ['2026-11-01T00:01:00.000Z', 5_000, 30, 5_000], // a short interval wins
    ['2026-11-01T00:02:30.000Z', MIN, 0, 31_000], // no grace: a second after the boundary
    ['2026-11-01T00:00:00.000Z', 3_600_000, 600, 61_000], // grace longer than a window: 23:51's partition at 00:01:01
  ])('at %s (interval %i ms, grace %i s) runs in %i ms', (now, interval, grace, delay) => {
    expect(nextRunDelayMs(at(now), interval, grace)).toBe(delay);
  });

  it('waits at most window + grace + margin after an event for its partition to be taken', () => {
    for (let ms = 0; ms < 3 * MIN; ms += 7_919) {
      const event = at('2026-11-01T00:00:00.000Z') + ms;
      // A run loop from the event onwards never steps over the moment the partition is eligible.
      const eligible = at('2026-11-01T00:03:31.000Z');
      let t = event;
      while (t < eligible) t += nextRunDelayMs(t, MIN, 30);
      expect(t).toBe(eligible);
    }
  });
});

describe('partitionEndMs', () => {
  it('is the start of the partition plus its three minutes', () => {
    expect(partitionEndMs('2026-11-01 00:03:00')).toBe(at('2026-11-01T00:06:00.000Z'));
  });
});
