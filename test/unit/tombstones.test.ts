/**
 * Tombstones in the write path and in the copying statements, as pure logic: a write leaves out
 * every row of a deleted trace (a trace, its observations, scores and events) and keeps the rest; a
 * trace deleted while a write was under way is deleted again after it; the statements' parameters
 * and the late tombstones a statement did not honour. The stores' side is in
 * test/integration/tombstones.test.ts and the deletion oracle.
 */
import { describe, expect, it } from 'vitest';
import { V4_DEFAULTS } from '../../server/contract/write-modes.ts';
import { processBatch } from '../../server/features/ingestion/batch.ts';
import { traceIdsOf, withoutTraces } from '../../server/features/ingestion/tombstone-filter.ts';
import { applyWrites, type IngestionWrite } from '../../server/features/ingestion/write.ts';
import {
  byProject,
  lateTombstones,
  tombstoneKey,
  tombstoneParams,
} from '../../server/features/tombstones/sql.ts';
import type { EntityLocks } from '../../server/features/write-model/entity-locks.ts';
import { memoryStore, memoryTombstones } from '../fixtures/memory-store.ts';

const locks: EntityLocks = { hold: (_keys, work) => work() };
const at = '2026-11-22T10:00:00.000Z';
const ev = (id: string, type: string, body: object) => ({ id, type, timestamp: at, body });

/** One request touching traces t1 and t2: each a trace, a span, a score; an event-less span of t1. */
const batch = [
  ev('e1', 'trace-create', { id: 't1', name: 'one' }),
  ev('e2', 'span-create', { id: 's1', traceId: 't1', name: 'a', startTime: at }),
  ev('e3', 'score-create', { id: 'sc1', traceId: 't1', name: 'q', value: 1 }),
  ev('e4', 'trace-create', { id: 't2', name: 'two' }),
  ev('e5', 'span-create', { id: 's2', traceId: 't2', name: 'b', startTime: at }),
  ev('e6', 'score-create', { id: 'sc2', traceId: 't2', name: 'q', value: 2 }),
  ev('e7', 'score-create', { id: 'sc3', sessionId: 'sess', name: 'q', value: 3 }),
];

async function accepted(): Promise<IngestionWrite[]> {
  const writes: IngestionWrite[] = [];
  await processBatch(batch, {
    projectId: 'p',
    settings: { ...V4_DEFAULTS, release: '4' as const, writeMode: 'legacy' as const },
    attribution: { apiKey: 'pk', sdkName: 'python', sdkVersion: '2.60.0' },
    store: memoryStore().store,
    locks,
    tombstones: memoryTombstones().tombstones,
    log: { record: async (w) => void writes.push(w) },
  });
  return writes;
}

const ids = (rows: Record<string, unknown>[], column = 'id') => rows.map((r) => String(r[column])).sort();

describe('a write and the tombstones', () => {
  it('names the traces of its rows', async () => {
    const [w] = await accepted();
    expect([...traceIdsOf(w!)].sort()).toEqual(['t1', 't2']);
  });

  it.each([
    [[], ['t1', 't2'], ['s1', 's2'], ['sc1', 'sc2', 'sc3']],
    [['t1'], ['t2'], ['s2'], ['sc2', 'sc3']],
    [['t1', 't2'], [], [], ['sc3']],
    [['elsewhere'], ['t1', 't2'], ['s1', 's2'], ['sc1', 'sc2', 'sc3']],
  ])('deleted %j: writes traces %j, observations %j, scores %j', async (deleted, traces, obs, scores) => {
    const writes = await accepted();
    const m = memoryStore();
    const t = memoryTombstones(deleted);
    await applyWrites(writes, { store: m.store, locks, tombstones: t.tombstones });
    expect(ids(m.rows('traces'))).toEqual(traces);
    expect(ids(m.rows('observations'))).toEqual(obs);
    expect(ids(m.rows('scores'))).toEqual(scores);
    expect(t.purged).toEqual([]);
  });

  it('deletes again what it wrote of a trace deleted while it was being written', async () => {
    const writes = await accepted();
    const m = memoryStore();
    const t = memoryTombstones();
    // The deletion of t2 commits its tombstone while the write's rows are on their way.
    const store = {
      ...m.store,
      insert: async (table: string, rows: Record<string, unknown>[]) => {
        t.traces.add('t2');
        await m.store.insert(table, rows);
      },
    };
    await applyWrites(writes, { store, locks, tombstones: t.tombstones });
    expect(t.purged).toEqual(['t2']);
  });

  it('keeps a write with nothing deleted as it is', async () => {
    const [w] = await accepted();
    expect(withoutTraces(w!, new Set())).toBe(w);
  });
});

describe('tombstones in copying statements', () => {
  const tombs = [
    { projectId: 'p1', traceId: 'a' },
    { projectId: 'p1', traceId: 'b' },
    { projectId: 'p2', traceId: '' },
  ];

  it('bind traces as pairs and deleted projects on their own', () => {
    expect(tombstoneParams(tombs)).toEqual({
      tombstoned_traces: [
        ['p1', 'a'],
        ['p1', 'b'],
      ],
      tombstoned_projects: ['p2'],
    });
    expect(tombstoneParams([])).toEqual({ tombstoned_traces: [], tombstoned_projects: [] });
  });

  it.each([
    [[], tombs],
    [[tombs[0]!], [tombs[1], tombs[2]]],
    [tombs, []],
  ])('a statement that ran with %j did not honour %j', (ran, late) => {
    expect(lateTombstones(new Set(ran.map(tombstoneKey)), tombs)).toEqual(late);
  });

  it('group late tombstones by project, a deleted project as a whole', () => {
    expect([...byProject(tombs)]).toEqual([
      ['p1', { all: false, traceIds: ['a', 'b'] }],
      ['p2', { all: true, traceIds: [] }],
    ]);
  });
});
