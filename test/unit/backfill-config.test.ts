/** The backfill's tuning variables: parsed once with the rest of the configuration, only those set. */
import { describe, expect, it } from 'vitest';
import { effectiveTuning } from '../../server/features/backfill/config.ts';
import { ConfigError, loadConfig } from '../../server/kernel/config/env.ts';

const CHUNK = 'SERVICE_BACKFILL_CHUNK_ROWS';
const THROTTLE = 'SERVICE_BACKFILL_THROTTLE_MS';
const CONCURRENCY = 'SERVICE_BACKFILL_CONCURRENCY';

describe('backfill tuning from the environment', () => {
  it.each([
    [{}, {}],
    [{ [CHUNK]: '3' }, { chunkRows: 3 }],
    [
      { [CHUNK]: ' 50000 ', [THROTTLE]: '0', [CONCURRENCY]: '4' },
      { chunkRows: 50_000, throttleMs: 0, concurrency: 4 },
    ],
    [
      { [THROTTLE]: '600000', [CONCURRENCY]: '16' },
      { throttleMs: 600_000, concurrency: 16 },
    ],
    [{ [CHUNK]: '' }, {}],
  ])('%o -> %o', (env, tuning) => {
    expect(loadConfig(env).backfill).toEqual(tuning);
  });

  it.each([
    [{ [CHUNK]: '0' }, `${CHUNK}=0 is not an integer between 1 and 100000000`],
    [{ [THROTTLE]: '-5' }, `${THROTTLE}=-5 is not an integer between 0 and 600000`],
    [{ [CONCURRENCY]: '17' }, `${CONCURRENCY}=17 is not an integer between 1 and 16`],
    [{ [CONCURRENCY]: '2.5' }, `${CONCURRENCY}=2.5 is not an integer between 1 and 16`],
    [{ [CHUNK]: 'many' }, `${CHUNK}=many is not an integer between 1 and 100000000`],
  ])('%o is refused, naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    [{}, { chunkRows: 200_000, throttleMs: 0, concurrency: 1 }],
    [
      { chunkRows: 3, throttleMs: 150 },
      { chunkRows: 3, throttleMs: 150, concurrency: 1 },
    ],
    [{ concurrency: 2 }, { chunkRows: 200_000, throttleMs: 0, concurrency: 2 }],
  ])('a row with %o runs with %o', (args, tuning) => {
    expect(effectiveTuning(args)).toEqual(tuning);
  });
});
