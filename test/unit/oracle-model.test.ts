/**
 * The oracle's model of `events_full` and its comparison, on small hand-made histories whose
 * outcome the spec states.
 */
import { describe, expect, it } from 'vitest';
import { compareEvents, type StoreRow } from '../oracle/compare.ts';
import { DATASET, type Producer, type SpanSpec, type Step, type TraceAttrs } from '../oracle/history.ts';
import { type EventFields, type ExpectedRow, expectedEvents } from '../oracle/model.ts';

const BASE = 1_700_000_000_000_000;
const attrs = (n: number, metadata: Record<string, string> = { tm: 't' }): TraceAttrs => ({
  name: `trace-${n}`,
  userId: `user-${n}`,
  sessionId: `session-${n}`,
  tags: ['a'],
  release: 'r1',
  version: 'tv',
  environment: 'production',
  public: true,
  metadata,
});
const span = (id: string, parentId?: string, extra: Partial<SpanSpec> = {}): SpanSpec => ({
  id,
  ...(parentId ? { parentId } : {}),
  type: 'SPAN',
  name: `name-${id}`,
  level: 'DEFAULT',
  metadata: { om: id },
  startUs: 1_000_250,
  ...extra,
});
const trace = (producer: Producer, traceId: string, spans: SpanSpec[], trace = attrs(0)): Step => ({
  op: 'send',
  traffic: { kind: 'trace', producer, traceId, startUs: 1_000_250, trace, spans },
});
const to = (mode: 'legacy' | 'dual' | 'events_only'): Step => ({ op: 'switch', to: mode });
const backfill: Step = { op: 'backfill', concurrent: false, kills: [null, null, null, null, null] };

const byId = (rows: ExpectedRow[]) => Object.fromEntries(rows.map((r) => [r.spanId, r]));

describe('the model of events_full', () => {
  it('has no events tables on release 3, also after a rollback', () => {
    const steps: Step[] = [to('legacy'), trace('batch', 'a', [span('a1')]), to('dual'), { op: 'rollback' }];
    expect(expectedEvents(steps, BASE)).toEqual({ eventsTablesExist: false, rows: [], rootRequired: [] });
  });

  it('legacy writes nothing to the events tables', () => {
    const steps: Step[] = [
      to('legacy'),
      trace('batch', 'a', [span('a1')]),
      trace('otlp-v4', 'b', [span('b1')]),
    ];
    expect(expectedEvents(steps, BASE)).toEqual({ eventsTablesExist: true, rows: [], rootRequired: [] });
  });

  it('backfills legacy data as a virtual root and children with the trace attributes but not its metadata', () => {
    const steps: Step[] = [
      to('legacy'),
      trace('batch', 'a', [span('a1'), span('a2', 'a1', { version: 'ov', type: 'GENERATION', model: 'm' })]),
      to('dual'),
      backfill,
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    expect(Object.keys(rows).sort()).toEqual(['a1', 'a2', 't-a']);
    expect(rows['t-a']).toMatchObject({ required: true });
    expect(rows['t-a']!.candidates).toEqual([
      expect.objectContaining({
        parent_span_id: '',
        type: 'SPAN',
        name: 'trace-0',
        trace_name: 'trace-0',
        version: 'tv',
        metadata: { tm: 't' },
        start_us: BASE + 1_000_000,
      }),
    ]);
    expect(rows['a1']!.candidates).toEqual([
      expect.objectContaining({
        parent_span_id: 't-a',
        user_id: 'user-0',
        session_id: 'session-0',
        tags: ['a'],
        release: 'r1',
        version: 'tv',
        public: true,
        bookmarked: false,
        environment: 'production',
        metadata: { om: 'a1' },
      }),
    ]);
    expect(rows['a2']!.candidates[0]).toMatchObject({
      parent_span_id: 'a1',
      version: 'ov',
      provided_model_name: 'm',
    });
  });

  it('prices a known model sent with usage and no cost, backfilled or propagated, after an update too', () => {
    const gen = (id: string, model: string) =>
      span(id, undefined, { type: 'GENERATION', model, usage: { input: 2000, output: 1000 } });
    const steps: Step[] = [
      to('legacy'),
      trace('batch', 'a', [gen('a1', 'gpt-4o'), gen('a2', 'acme')]),
      to('dual'),
      trace('batch', 'b', [gen('b1', 'gpt-4o-mini')]),
      {
        op: 'send',
        traffic: {
          kind: 'obs-update',
          traceId: 'b',
          spanId: 'b1',
          type: 'GENERATION',
          name: 'x',
          level: 'DEFAULT',
          statusMessage: 's',
        },
      },
      backfill,
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    const usage = { input: 2000, output: 1000, total: 3000 };
    expect(rows['a1']!.candidates[0]).toMatchObject({
      model_id: 'b9854a5c92dc496b997d99d20',
      usage_details: usage,
      cost_details: { input: 0.005, output: 0.01, total: 0.015 },
    });
    expect(rows['a2']!.candidates[0]).toMatchObject({ model_id: '', usage_details: usage, cost_details: {} });
    for (const c of rows['b1']!.candidates) {
      expect(c.model_id).toBe('clyrjp56f0000t0mzapoocd7u');
      expect(c.cost_details['total']).toBeCloseTo(0.0003 + 0.0006, 12);
    }
    expect(rows['t-a']!.candidates[0]).toMatchObject({ model_id: '', usage_details: {}, cost_details: {} });
  });

  it('without a backfill, historic data is absent; what dual write stages is propagated with the trace metadata', () => {
    const steps: Step[] = [
      to('legacy'),
      trace('batch', 'old', [span('o1')]),
      to('dual'),
      trace('batch', 'new', [span('n1')]),
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    expect(Object.keys(rows).sort()).toEqual(['n1', 't-new']);
    expect(rows['n1']!.candidates[0]!.metadata).toEqual({ tm: 't', om: 'n1' });
  });

  it('writes client-side propagating producers directly in dual: as sent, microseconds, no virtual root', () => {
    const steps: Step[] = [to('dual'), trace('otlp-v4', 'v', [span('v1'), span('v2', 'v1')])];
    const rows = byId(expectedEvents(steps, BASE).rows);
    expect(Object.keys(rows).sort()).toEqual(['v1', 'v2']);
    // Beside the legacy tables the direct row may keep their milliseconds.
    expect(rows['v1']!.candidates.map((c) => [c.parent_span_id, c.start_us, c.trace_name])).toEqual([
      ['', BASE + 1_000_250, 'trace-0'],
      ['', BASE + 1_000_000, 'trace-0'],
    ]);
    expect(rows['v2']!.candidates[0]).toMatchObject({ parent_span_id: 'v1', user_id: 'user-0' });
  });

  it('a direct span that the backfill copies later may be either version, but there is one row and one root', () => {
    const steps: Step[] = [to('dual'), trace('otlp-v4', 'v', [span('v1')]), backfill];
    const e = expectedEvents(steps, BASE);
    const rows = byId(e.rows);
    // An OTLP trace may keep its own root span instead of a virtual one; either way one root.
    expect(rows['t-v']).toMatchObject({ required: false });
    expect(e.rootRequired).toEqual(['v']);
    expect(rows['v1']!.candidates.map((c) => [c.parent_span_id, c.start_us])).toEqual([
      ['t-v', BASE + 1_000_000],
      ['', BASE + 1_000_000],
      ['', BASE + 1_000_250],
      ['', BASE + 1_000_000],
    ]);
  });

  it('stages producers without client-side propagation in dual and writes them directly, as sent, in events_only', () => {
    const steps: Step[] = [
      to('dual'),
      trace('sdk-delayed', 'd', [span('d1'), span('d2', 'd1')]),
      backfill,
      to('events_only'),
      trace('otlp', 'e', [span('e1'), span('e2', 'e1')]),
      trace('batch', 'refused', [span('r1')]),
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    expect(Object.keys(rows).sort()).toEqual(['d1', 'd2', 'e1', 'e2', 't-d']);
    expect(rows['d2']!.candidates.every((c) => c.user_id === 'user-0' && c.parent_span_id === 'd1')).toBe(
      true,
    );
    expect(rows['d1']!.candidates.map((c) => c.parent_span_id).sort()).toEqual(['', '', 't-d', 't-d']);
    expect(rows['e1']!.candidates[0]).toMatchObject({ parent_span_id: '', user_id: 'user-0' });
    expect(rows['e2']!.candidates[0]).toMatchObject({ parent_span_id: 'e1', user_id: '', trace_name: '' });
  });

  it('puts the latest trace attributes on every event of the trace', () => {
    const updated = { ...attrs(0), userId: 'user-new', tags: ['a', 'b'], public: false };
    const steps: Step[] = [
      to('legacy'),
      trace('batch', 'a', [span('a1')]),
      to('dual'),
      backfill,
      { op: 'send', traffic: { kind: 'trace-update', traceId: 'a', startUs: 1_000_250, trace: updated } },
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    for (const r of Object.values(rows)) {
      for (const c of r.candidates)
        expect(c).toMatchObject({ user_id: 'user-new', tags: ['a', 'b'], public: false });
    }
  });

  it('makes rows read by a backfill running alongside traffic optional', () => {
    const steps: Step[] = [
      to('dual'),
      { op: 'backfill', concurrent: true, kills: [null, null, null, null, null] },
      trace('otlp-v4', 'v', [span('v1')]),
      { op: 'backfill-join' },
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    expect(rows['t-v']).toMatchObject({ required: false });
    expect(rows['v1']).toMatchObject({ required: true });
    expect(rows['v1']!.candidates.map((c) => c.parent_span_id).sort()).toEqual(['', '', '', 't-v']);
  });

  it('brings back data of an earlier epoch after a rollback and a new upgrade with a backfill; staged data of the old epoch is gone', () => {
    const steps: Step[] = [
      to('dual'),
      trace('batch', 'a', [span('a1')]),
      { op: 'rollback' },
      to('legacy'),
      to('dual'),
      backfill,
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    expect(Object.keys(rows).sort()).toEqual(['a1', 't-a']);
    expect(rows['a1']!.candidates).toHaveLength(1);
    expect(rows['a1']!.candidates[0]!.metadata).toEqual({ om: 'a1' });
  });

  it('enriches every event of an experiment trace after step 4, and nothing else', () => {
    const steps: Step[] = [
      to('legacy'),
      {
        op: 'send',
        traffic: {
          kind: 'experiment',
          traceId: 'x',
          startUs: 0,
          trace: attrs(1),
          spans: [span('x1')],
          runName: 'run-1',
          itemId: DATASET.itemId,
        },
      },
      trace('batch', 'plain', [span('p1')]),
      { op: 'send', traffic: { kind: 'score', traceId: 'plain', scoreId: 's' } },
      to('dual'),
      backfill,
    ];
    const rows = byId(expectedEvents(steps, BASE).rows);
    expect(Object.keys(rows).sort()).toEqual(['p1', 't-plain', 't-x', 'x1']);
    for (const id of ['t-x', 'x1']) {
      expect(rows[id]!.candidates[0]).toMatchObject({
        experiment_id: '*',
        experiment_name: 'run-1',
        experiment_item_id: DATASET.itemId,
        experiment_dataset_id: DATASET.id,
        experiment_item_root_span_id: 't-x',
      });
    }
    expect(rows['p1']!.candidates[0]).toMatchObject({ experiment_id: '', experiment_name: '' });
  });
});

describe('comparing the store with the model', () => {
  const fields: EventFields = {
    parent_span_id: '',
    type: 'SPAN',
    name: 'n',
    trace_name: 'n',
    user_id: '',
    session_id: '',
    tags: ['b', 'a'],
    release: '',
    version: '',
    environment: 'default',
    public: false,
    bookmarked: false,
    level: 'DEFAULT',
    status_message: '',
    provided_model_name: '',
    model_id: '',
    usage_details: { input: 3 },
    cost_details: { total: 0.0075 },
    metadata: { k: 'v' },
    start_us: 5,
    experiment_id: '',
    experiment_name: '',
    experiment_item_id: '',
    experiment_dataset_id: '',
    experiment_item_root_span_id: '',
  };
  const row = (over: Partial<StoreRow> = {}): StoreRow => ({
    ...fields,
    metadata: { k: 'v' },
    start_us: 5,
    trace_id: 't',
    span_id: 's',
    ...over,
  });
  const expect1 = (required = true) => ({
    eventsTablesExist: true,
    rows: [{ traceId: 't', spanId: 's', required, candidates: [fields] }],
    rootRequired: required ? ['t'] : [],
  });

  it.each([
    ['a matching row', [row({ tags: ['a', 'b'], metadata: { k: '"v"' } })], []],
    ['a missing required row', [], ['missing t/s', 'trace t has 0 roots (none)']],
    ['a field that differs', [row({ user_id: 'u' })], ['differs t/s: user_id: store "u" != model ""']],
    [
      'a duplicate',
      [row(), row({ start_us: 6, parent_span_id: 'x' })],
      [
        'duplicate t/s: 2 rows (start_time 5, 6; parents "", "x")',
        'differs t/s: parent_span_id: store "x" != model ""; start_us: store 6 != model 5',
      ],
    ],
    [
      'two roots',
      [row(), row({ span_id: 'other' })],
      ['unexpected t/other', 'trace t has 2 roots (s, other)'],
    ],
    [
      'no root where one is required',
      [row({ parent_span_id: 'x' })],
      ['differs t/s: parent_span_id: store "x" != model ""', 'trace t has 0 roots (none)'],
    ],
    [
      'a cost within the stored decimal places',
      [row({ usage_details: { input: 3 }, cost_details: { total: 0.0075 + 1e-13 } })],
      [],
    ],
    [
      'a cost that differs, or a usage key too many',
      [row({ usage_details: { input: 3, total: 3 }, cost_details: { total: 0.0076 } })],
      [
        'differs t/s: usage_details: store {"input":3,"total":3} != model {"input":3}; cost_details: store {"total":0.0076} != model {"total":0.0075}',
      ],
    ],
    [
      'trace metadata where it must not be',
      [row({ metadata: { k: 'v', tm: 't' } })],
      ['differs t/s: metadata: store {"k":"v","tm":"t"} != model {"k":"v"}'],
    ],
  ] as [string, StoreRow[], string[]][])('%s', (_name, store, diffs) => {
    expect(compareEvents(expect1(), store)).toEqual(diffs);
  });

  it('accepts an optional row that is absent, and reports events tables on release 3', () => {
    expect(compareEvents(expect1(false), [])).toEqual([]);
    expect(compareEvents({ eventsTablesExist: false, rows: [], rootRequired: [] }, [])).toEqual([
      'events_full exists on release 3 (0 rows)',
    ]);
    expect(compareEvents(expect1(), null)).toEqual(['events_full does not exist']);
  });
});
