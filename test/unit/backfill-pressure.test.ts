// When the backfill waits for the analytics store: the disk it still needs against what is free,
// and which chunk failures pause and retry (memory) or fail the step after a few attempts.
import { describe, expect, it } from 'vitest';
import { diskNeededBytes } from '../../server/contract/worker-api.ts';
import {
  chunkRetryDelayMs,
  diskPressure,
  diskRecheckMs,
  isMemoryLimit,
} from '../../server/features/backfill/pressure.ts';

const GIB = 1024 ** 3;

describe('diskNeededBytes', () => {
  it.each([
    ['a step not planned yet needs 3x its source', 10 * GIB, 0, 0, 30 * GIB],
    ['half done', 10 * GIB, 5, 10, 15 * GIB],
    ['all done', 10 * GIB, 10, 10, 0],
    ['an empty source', 0, 0, 0, 0],
    ['more done than planned (a re-plan) needs nothing', GIB, 12, 10, 0],
  ])('%s', (_, bytes, done, total, expected) => {
    expect(diskNeededBytes(bytes, done, total)).toBe(expected);
  });
});

describe('diskPressure', () => {
  const step = { step: 2, bytes: 10 * GIB, chunksDone: 0, chunksTotal: 0 };
  it.each([
    ['enough room', 31 * GIB, undefined],
    ['exactly enough', 30 * GIB, undefined],
    [
      'short',
      20 * GIB,
      'the analytics store has 20 GiB free; backfill step 2 needs about 30 GiB (3x the 10 GiB of its source still to move)',
    ],
  ])('%s', (_, free, expected) => {
    expect(diskPressure(step, free)).toBe(expected);
  });

  it('counts only what is left to move', () => {
    expect(diskPressure({ ...step, chunksDone: 9, chunksTotal: 10 }, 4 * GIB)).toBeUndefined();
    expect(diskPressure({ ...step, chunksDone: 5, chunksTotal: 10 }, 4 * GIB)).toContain(
      'needs about 15 GiB',
    );
  });
});

describe('chunk failures', () => {
  const memory = Object.assign(new Error('Memory limit (total) exceeded: would use 9.31 GiB'), {
    code: '241',
    type: 'MEMORY_LIMIT_EXCEEDED',
  });
  const other = Object.assign(new Error('Timeout exceeded'), { code: '159', type: 'TIMEOUT_EXCEEDED' });
  it.each([
    ['the client error of code 241', memory, true],
    [
      'the name in the message only',
      new Error('Code: 241. DB::Exception: ... (MEMORY_LIMIT_EXCEEDED)'),
      true,
    ],
    ['another store error', other, false],
    ['no error object', undefined, false],
  ])('isMemoryLimit: %s', (_, err, expected) => {
    expect(isMemoryLimit(err)).toBe(expected);
  });

  it.each([
    ['memory, first retry', memory, 1, 10_000],
    ['memory, grows', memory, 4, 80_000],
    ['memory, capped at five minutes', memory, 7, 300_000],
    ['memory, gives up after eight attempts', memory, 8, undefined],
    ['other, first retry', other, 1, 2_000],
    ['other, second retry', other, 2, 4_000],
    ['other, gives up after three attempts', other, 3, undefined],
  ])('chunkRetryDelayMs: %s', (_, err, attempt, expected) => {
    expect(chunkRetryDelayMs(err, attempt)).toBe(expected);
  });

  it.each([
    [0, 15_000],
    [2, 60_000],
    [6, 600_000],
  ])('a disk recheck after %d checks waits %d ms', (checks, ms) => {
    expect(diskRecheckMs(checks)).toBe(ms);
  });
});
