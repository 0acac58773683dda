import { describe, expect, it } from 'vitest';
import { V4_DEFAULTS, type WriteMode } from '../../server/contract/write-modes.ts';
import { EVENTS_ONLY_REFUSAL, processBatch } from '../../server/features/ingestion/batch.ts';
import { refusalReason } from '../../server/features/ingestion/sdk-versions.ts';
import { describeIssues, ingestionEvent } from '../../server/features/write-model/bodies.ts';
import { type EntityLocks, entityLockKeys } from '../../server/features/write-model/entity-locks.ts';
import { costDetails, mergedVersion, usageDetails } from '../../server/features/write-model/records.ts';
import { chTime } from '../../server/features/write-model/time.ts';
import { memoryStore, memoryTombstones } from '../fixtures/memory-store.ts';

/** One request at a time here: the locks themselves are tested against PostgreSQL. */
const locks: EntityLocks = { hold: (_keys, work) => work() };
const attribution = { apiKey: 'pk', sdkName: 'javascript', sdkVersion: '3.38.0' };
const settings = (writeMode: WriteMode) => ({
  ...V4_DEFAULTS,
  release: '4' as const,
  writeMode,
  nativeOtelBehaviour: writeMode === 'events_only' ? ('direct' as const) : ('dual_write' as const),
  enableHistoricBackfill: writeMode !== 'legacy',
});
/** What processBatch is given for project p in `mode`, writing to `store`, sent by `sender`. */
const batchContext = (
  mode: WriteMode,
  store: ReturnType<typeof memoryStore>['store'],
  sender = attribution,
) => ({
  projectId: 'p',
  settings: settings(mode),
  attribution: sender,
  store,
  locks,
  tombstones: memoryTombstones().tombstones,
});
const ts = '2026-11-22T10:00:00.000Z';
const ev = (id: string, type: string, body: object, timestamp = ts) => ({ id, type, timestamp, body });

const batch = [
  ev('e1', 'trace-create', {
    id: 't1',
    name: 'chat',
    userId: 'u1',
    sessionId: 's1',
    tags: ['b'],
    metadata: { a: 1 },
  }),
  ev('e2', 'span-create', { id: 'o1', traceId: 't1', name: 'retrieve', startTime: ts }),
  ev('e3', 'generation-create', {
    id: 'o2',
    traceId: 't1',
    parentObservationId: 'o1',
    model: 'gpt',
    usage: { input: 3, output: 4 },
  }),
  ev('e4', 'score-create', { id: 'sc1', traceId: 't1', name: 'quality', value: 0.5 }),
  ev('e5', 'sdk-log', { log: 'hello' }),
];

describe('batch ingestion by write mode', () => {
  it.each([
    ['legacy', { traces: 1, observations: 2, scores: 1, observations_batch_staging: 0 }],
    ['dual', { traces: 1, observations: 2, scores: 1, observations_batch_staging: 3 }],
    ['events_only', { traces: 0, observations: 0, scores: 1, observations_batch_staging: 0 }],
  ] as const)('%s writes %j', async (mode, counts) => {
    const m = memoryStore();
    const result = await processBatch(batch, batchContext(mode, m.store));
    for (const [table, n] of Object.entries(counts)) expect(m.rows(table)).toHaveLength(n);
    if (mode === 'events_only') {
      expect(result.successes.map((s) => s.id)).toEqual(['e4']);
      expect(result.errors.map((e) => [e.id, e.status, e.message])).toEqual(
        ['e1', 'e2', 'e3', 'e5'].map((id) => [id, 400, 'Event type not accepted']),
      );
      // JS/TS SDK 3.x is one of the SDKs events_only rejects: the refusal names it.
      expect(result.errors[0]!.error).toBe(refusalReason(attribution));
      const modern = { ...attribution, sdkName: 'javascript', sdkVersion: '5.4.0' };
      const other = await processBatch(batch, batchContext(mode, memoryStore().store, modern));
      expect(other.errors[0]!.error).toBe(EVENTS_ONLY_REFUSAL);
    } else {
      expect(result.errors).toEqual([]);
      expect(result.successes).toHaveLength(5);
    }
  });

  it('stages the trace as virtual root span t-<traceId> of type SPAN with no parent', async () => {
    const m = memoryStore();
    await processBatch(batch, batchContext('dual', m.store));
    const root = m.rows('observations_batch_staging').find((r) => r['id'] === 't-t1')!;
    expect(root).toMatchObject({ type: 'SPAN', parent_observation_id: null, trace_id: 't1', name: 'chat' });
    expect(root['ingestion_sdk_version']).toBe('3.38.0');
  });

  it('merges updates onto stored rows and keeps earlier fields', async () => {
    const m = memoryStore();
    const ctx = batchContext('legacy', m.store);
    await processBatch(batch, ctx);
    await processBatch(
      [
        ev(
          'u1',
          'generation-update',
          { id: 'o2', output: { text: 'hi' }, endTime: '2026-11-22T10:00:01.000Z' },
          '2026-11-22T10:00:01.000Z',
        ),
        ev('u2', 'trace-create', { id: 't1', tags: ['a'], metadata: { c: 'x' } }),
      ],
      ctx,
    );
    const gen = m.rows('observations').at(-1)!;
    expect(gen).toMatchObject({
      id: 'o2',
      type: 'GENERATION',
      provided_model_name: 'gpt',
      output: '{"text":"hi"}',
    });
    expect(gen['end_time']).toBe('2026-11-22 10:00:01.000');
    const trace = m.rows('traces').at(-1)!;
    expect(trace).toMatchObject({
      name: 'chat',
      user_id: 'u1',
      tags: ['a', 'b'],
      metadata: { a: '1', c: 'x' },
    });
  });

  it.each([
    [
      'dual',
      [{ projectId: 'p', traceId: 't1', set: ['tags = {tags:Array(String)}', 'public = {public:Bool}'] }],
    ],
    ['legacy', []],
  ] as const)(
    'in %s, a trace update that changes fields events carry updates its events: %j',
    async (mode, expected) => {
      const m = memoryStore();
      const ctx = batchContext(mode, m.store);
      await processBatch(batch, ctx);
      // The first batch creates the trace: nothing stored yet, nothing to update.
      expect(m.updates).toEqual([]);
      await processBatch([ev('u1', 'trace-create', { id: 't1', tags: ['z'], metadata: { c: 'x' } })], ctx);
      await processBatch(
        [
          ev('u2', 'trace-create', { id: 't1', metadata: { d: 'y' } }),
          ev('u3', 'trace-create', { id: 't1' }),
        ],
        ctx,
      );
      m.updates.length = 0;
      await processBatch([ev('u4', 'trace-create', { id: 't1', tags: ['y'], public: true })], ctx);
      expect(m.updates).toEqual(expected);
    },
  );

  it('answers each invalid event with 400 and the field path, and stores the valid ones', async () => {
    const m = memoryStore();
    const result = await processBatch(
      [
        ev('bad1', 'score-create', { traceId: 't', name: 'n', value: 'x', dataType: 'NUMERIC' }),
        { id: 'bad2', type: 'nope', timestamp: ts, body: {} },
        ev('bad3', 'span-create', { traceId: 't' }),
        ev('ok', 'score-create', { traceId: 't', name: 'n', value: 1 }),
      ],
      batchContext('legacy', m.store),
    );
    expect(result.successes.map((s) => s.id)).toEqual(['ok']);
    expect(result.errors.map((e) => e.id)).toEqual(['bad1', 'bad2', 'bad3']);
    expect(result.errors[0]!.error).toContain('body.value: NUMERIC scores need a number value');
    expect(result.errors[2]!.error).toContain('body.id');
    expect(m.rows('scores')).toHaveLength(1);
  });
});

describe('usage, cost and time', () => {
  it.each([
    [{ usage: { input: 3, output: 4 } }, { input: 3, output: 4, total: 7 }],
    [{ usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } }, { input: 1, output: 2, total: 3 }],
    [
      {
        usageDetails: { prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 2 } },
      },
      { input: 5, output: 1, input_cached_tokens: 2, total: 6 },
    ],
  ])('usage %j', (body, expected) => expect(usageDetails(body as never)).toEqual(expected));
  it.each([
    [{ usage: { inputCost: 0.1, outputCost: 0.2 } }, { input: 0.1, output: 0.2, total: 0.30000000000000004 }],
    [{ costDetails: { total: 1 } }, { total: 1 }],
  ])('cost %j', (body, expected) => expect(costDetails(body as never)).toEqual(expected));
  it.each([
    ['2026-11-22T10:00:00.123456Z', 6, '2026-11-22 10:00:00.123456'],
    ['2026-11-22T10:00:00.123456Z', 3, '2026-11-22 10:00:00.123'],
    ['2026-11-22T12:00:00+02:00', 3, '2026-11-22 10:00:00.000'],
  ] as const)('chTime(%s, %i)', (v, d, out) => expect(chTime(v, d)).toBe(out));
  it('formats epoch ms the same when the last one is asked again, at either precision', () => {
    const [a, b] = [Date.UTC(2026, 10, 22, 10, 0, 0, 123), Date.UTC(2026, 10, 22, 10, 0, 1, 5)];
    for (let i = 0; i < 2; i++) {
      expect(chTime(a)).toBe('2026-11-22 10:00:00.123');
      expect(chTime(a)).toBe('2026-11-22 10:00:00.123');
      expect(chTime(a, 6)).toBe('2026-11-22 10:00:00.123000');
      expect(chTime(b)).toBe('2026-11-22 10:00:01.005');
      expect(chTime(new Date(a))).toBe('2026-11-22 10:00:00.123');
    }
    expect(() => chTime(Number.NaN)).toThrow(RangeError);
    expect(() => chTime(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(chTime(b)).toBe('2026-11-22 10:00:01.005');
  });
});

describe('negative usage and cost, however deep, are refused naming the field', () => {
  const parse = (body: object) => {
    const r = ingestionEvent.safeParse({
      id: 'e',
      type: 'generation-create',
      timestamp: '2026-11-22T10:00:00.000Z',
      body: { id: 'g', ...body },
    });
    return r.success ? null : describeIssues(r.error);
  };
  it.each([
    [{ usage: { input: -1 } }, 'body.usage.input'],
    [{ usage: { totalCost: -1 } }, 'body.usage.totalCost'],
    [{ usage: { prompt_tokens: -3 } }, 'body.usage.prompt_tokens'],
    [
      { usage: { prompt_tokens_details: { cached_tokens: -5 } } },
      'body.usage.prompt_tokens_details.cached_tokens',
    ],
    [
      { usage: { output_tokens_details: [{ reasoning: -1 }] } },
      'body.usage.output_tokens_details.0.reasoning',
    ],
    [{ usageDetails: { input: -5 } }, 'body.usageDetails.input'],
    [
      { usageDetails: { prompt_tokens_details: { cached_tokens: -5 } } },
      'body.usageDetails.prompt_tokens_details.cached_tokens',
    ],
    [{ costDetails: { total: -0.5 } }, 'body.costDetails.total'],
    // Beyond the store's columns.
    [{ usage: { input: 1e21 } }, 'body.usage.input'],
    [{ usageDetails: { input: 2 ** 53 } }, 'body.usageDetails.input'],
    [{ usage: { totalCost: 1e6 } }, 'body.usage.totalCost'],
    [{ costDetails: { total: 1e6 } }, 'body.costDetails.total'],
  ])('%j -> 400 naming %s', (body, field) => expect(parse(body)).toContain(`${field}: `));
  it.each([
    [{ usage: { input: 1, prompt_tokens_details: { cached_tokens: 0 }, note: 'x' } }],
    [{ usageDetails: { prompt_tokens: 5, prompt_tokens_details: { cached_tokens: 2 } } }],
  ])('%j is accepted', (body) => expect(parse(body)).toBeNull());
  it('keys the store does not read are not kept', () => {
    const r = ingestionEvent.parse({
      id: 'e',
      type: 'generation-create',
      timestamp: '2026-11-22T10:00:00.000Z',
      body: { id: 'g', usage: { input: 1, prompt_tokens_details: { cached_tokens: 2 } } },
    });
    expect(r.body).toMatchObject({ usage: { input: 1 } });
    expect(JSON.stringify(r.body)).not.toContain('cached_tokens');
  });
});

describe("a trace's virtual root when the trace's timestamp moves", () => {
  const create = (timestamp: string) => [ev('c', 'trace-create', { id: 'tm', name: 'moved', timestamp })];
  const later = '2026-11-22T10:05:00.000Z';

  it.each([
    ['dual', [{ span_id: 't-tm', start_time: chTime(ts), is_deleted: 1, trace_id: 'tm' }]],
    ['legacy', []],
  ] as const)('%s: the root at the old time is deleted in events_full', async (mode, tombstones) => {
    const { store, rows } = memoryStore();
    const ctx = batchContext(mode, store);
    await processBatch(create(ts), { ...ctx, now: 1 });
    expect(rows('events_full')).toEqual([]);
    await processBatch(create(later), { ...ctx, now: 2 });
    expect(rows('events_full')).toMatchObject(tombstones);
    expect(rows('events_full')).toHaveLength(tombstones.length);
  });

  it('an update that keeps the timestamp deletes nothing', async () => {
    const { store, rows } = memoryStore();
    const ctx = batchContext('dual', store);
    await processBatch(create(ts), { ...ctx, now: 1 });
    await processBatch(create(ts), { ...ctx, now: 2 });
    expect(rows('events_full')).toEqual([]);
  });
});

describe('the version of a merged write', () => {
  const stored = (at: number) => ({ event_ts: chTime(at) });
  it.each([
    ['nothing stored', 1_000, [], 1_000],
    ['stored rows older', 1_000, [stored(400), stored(999)], 1_000],
    ['a row written at the same millisecond', 1_000, [stored(1_000)], 1_001],
    ['a row written after this request began', 1_000, [stored(1_500), stored(1_200)], 1_501],
  ] as const)('%s', (_, now, rows, version) => {
    expect(mergedVersion(now, [...rows])).toBe(version);
  });
});

describe('the entity lock keys of a commit', () => {
  it.each([
    ['none', [], [], []],
    [
      'traces and observations, sorted',
      ['t2', 't1'],
      ['o1'],
      ['observation:p:o1', 'trace:p:t1', 'trace:p:t2'],
    ],
    ['a trace and an observation of one id stay two keys', ['x'], ['x'], ['observation:p:x', 'trace:p:x']],
    ['repeats once', ['t1', 't1'], [], ['trace:p:t1']],
  ] as const)('%s', (_, traces, observations, keys) => {
    expect(entityLockKeys('p', traces, observations)).toEqual({ projectId: 'p', keys });
  });
});

describe('a batch update of a trace that OTLP spans made, in dual', () => {
  const otlpSpan = {
    id: 'root',
    trace_id: 'to',
    project_id: 'p',
    metadata: { resourceAttributes: '{}' },
    event_ts: chTime(1),
  };
  const update = [
    ev('u', 'trace-create', { id: 'to', name: 'renamed', timestamp: '2026-11-22T10:07:00.000Z' }),
  ];

  it.each([
    ['an OTLP trace keeps its own root: no virtual root is staged or deleted', true, []],
    ['a batch trace gets its virtual root', false, ['t-to']],
  ] as const)('%s', async (_, fromOtlp, staged) => {
    const { store, rows } = memoryStore();
    const ctx = batchContext('dual', store);
    await store.insert('traces', [
      { id: 'to', project_id: 'p', timestamp: chTime(ts), tags: [], metadata: {} },
    ]);
    if (fromOtlp) await store.insert('observations', [otlpSpan]);
    await processBatch(update, { ...ctx, now: 2 });
    expect(rows('observations_batch_staging').map((r) => r['id'])).toEqual(staged);
    expect(rows('events_full').map((r) => r['span_id'])).toEqual(fromOtlp ? [] : ['t-to']);
    expect(rows('traces').at(-1)).toMatchObject({ id: 'to', name: 'renamed' });
  });
});
