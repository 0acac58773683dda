/**
 * The analytics store reads behind the backfill's pause under pressure, on the embedded ClickHouse
 * engine: free disk from system.disks, a table's rows and bytes from system.parts, and the
 * engine's own memory-limit error recognised as one the backfill pauses on.
 */
import { statfsSync } from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskPressure, isMemoryLimit } from '../../server/features/backfill/pressure.ts';
import { readFreeBytes, readTableSize } from '../../server/features/backfill/store-space.ts';
import { OBS_PER_TRACE } from '../bench/history.ts';
import { type EmbeddedHistory, embeddedHistory } from '../fixtures/embedded-history.ts';

const TRACES = 500;
let store: EmbeddedHistory;
let ch: ClickHouseClient;

beforeAll(async () => {
  store = await embeddedHistory('store-pressure', TRACES);
  ch = store.client;
});
afterAll(async () => {
  await store?.stop();
});

describe('analytics store pressure', () => {
  it('reads the free disk of the filesystem the store writes to', async () => {
    const free = await readFreeBytes(ch);
    const fs = statfsSync(store.dir);
    // The engine and statfs look at the same filesystem a moment apart: same order of magnitude.
    expect(free).toBeGreaterThan(0);
    expect(free).toBeLessThanOrEqual(fs.blocks * fs.bsize);
  });

  it("reads a table's rows and bytes, and nothing for a table that does not exist", async () => {
    const traces = await readTableSize(ch, 'traces');
    const observations = await readTableSize(ch, 'observations');
    expect(traces.rows).toBe(TRACES);
    expect(observations.rows).toBe(TRACES * OBS_PER_TRACE);
    expect(observations.bytes).toBeGreaterThan(traces.bytes / 2);
    expect(await readTableSize(ch, 'no_such_table')).toEqual({ rows: 0, bytes: 0 });
    // The decision on real figures: the store holds far more than 3x this small source.
    const free = await readFreeBytes(ch);
    expect(diskPressure({ step: 2, ...observations, chunksDone: 0, chunksTotal: 0 }, free)).toBeUndefined();
    expect(diskPressure({ step: 2, bytes: free, chunksDone: 0, chunksTotal: 0 }, free)).toMatch(
      /backfill step 2 needs about/,
    );
  });

  it("recognises the engine's memory limit error as a pause, not a failure", async () => {
    const err = await ch
      .query({
        query: 'SELECT groupArray(id) FROM observations',
        clickhouse_settings: { max_memory_usage: '1000' },
        format: 'JSONEachRow',
      })
      .then((rs) => rs.json())
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeDefined();
    expect(isMemoryLimit(err)).toBe(true);
    const other = await ch.query({ query: 'SELECT * FROM no_such_table' }).catch((e: unknown) => e);
    expect(isMemoryLimit(other)).toBe(false);
  });
});
