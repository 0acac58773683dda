/** Runs side by side, and the version 3 trace view's tree from legacy rows: pure, by tables. */
import { describe, expect, it } from 'vitest';
import { legacyTraceView } from '../../server/features/reads/legacy-trace-view.ts';
import { compareRuns, type RunResult } from '../../server/features/reads/run-comparison.ts';

const score = (name: string, value: number | string) => ({
  id: `${name}-${value}`,
  name,
  value,
  dataType: 'NUMERIC',
  source: 'API',
  comment: null,
  executionTraceId: null,
});
const result = (
  runId: string,
  itemId: string,
  scores: RunResult['scores'],
  traceId = `${runId}-${itemId}`,
) => ({
  runId,
  itemId,
  traceId,
  output: `"${runId}:${itemId}"`,
  scores,
});

describe('compareRuns', () => {
  it.each([
    {
      name: 'two runs, one item not run by the second',
      runs: ['a', 'b'],
      results: [
        result('a', 'i1', [score('exact', 1)]),
        result('a', 'i2', [score('exact', 0)]),
        result('b', 'i1', [score('exact', 1)]),
      ],
      rows: [
        ['i1', ['a-i1', 'b-i1']],
        ['i2', ['a-i2', null]],
      ],
      means: [{ exact: 0.5 }, { exact: 1 }],
    },
    {
      name: 'the order of the runs asked for, not of the results',
      runs: ['b', 'a'],
      results: [result('a', 'i1', []), result('b', 'i1', [score('len', 3), score('label', 'ok')])],
      rows: [
        ['i1', ['b-i1', 'a-i1']],
        ['i2', [null, null]],
      ],
      means: [{ len: 3 }, {}],
    },
    {
      name: 'an item run twice shows the first result',
      runs: ['a'],
      results: [
        result('a', 'i1', [score('exact', 1)], 'first'),
        result('a', 'i1', [score('exact', 0)], 'second'),
      ],
      rows: [
        ['i1', ['first']],
        ['i2', [null]],
      ],
      means: [{ exact: 1 }],
    },
  ])('$name', ({ runs, results, rows, means }) => {
    const out = compareRuns([{ id: 'i1' }, { id: 'i2' }], runs, results);
    expect(out.rows.map((r) => [r.item.id, r.results.map((x) => x?.traceId ?? null)])).toEqual(rows);
    expect(out.means).toEqual(means);
  });
});

describe('legacyTraceView', () => {
  const trace = {
    id: 't1',
    name: 'chat',
    timestamp: '2026-01-01 00:00:01.000',
    user_id: 'u1',
    session_id: 's1',
    tags: ['x'],
    environment: 'default',
    input: '{"q":"hi"}',
    output: '"hello"',
    metadata: { k: '{"a":1}', plain: 'v' },
  };
  const obs = (id: string, parent: string | null, start: string, end: string, cost: number) => ({
    id,
    type: parent ? 'GENERATION' : 'SPAN',
    name: id,
    parent_observation_id: parent,
    start_time: start,
    end_time: end,
    total_cost: cost,
    usage_details: { input: 1 },
    level: 'DEFAULT',
    metadata: {},
  });
  it('roots the tree at the trace, with its scores there and observation scores on them', () => {
    const view = legacyTraceView(
      trace,
      [
        obs('o1', null, '2026-01-01 00:00:00.500', '2026-01-01 00:00:03.000', 0.5),
        obs('o2', 'o1', '2026-01-01 00:00:01.000', '2026-01-01 00:00:02.000', 0.25),
      ],
      [
        { id: 's1', trace_id: 't1', observation_id: null, name: 'quality', data_type: 'NUMERIC', value: 1 },
        { id: 's2', trace_id: 't1', observation_id: 'o2', name: 'exact', data_type: 'NUMERIC', value: 0 },
      ],
    );
    expect(
      view.map((o) => [
        o.id,
        o.type,
        o.parentObservationId,
        o.isRootObservation,
        o.scores.map((s) => s.name),
      ]),
    ).toEqual([
      ['t1', 'TRACE', null, true, ['quality']],
      ['o1', 'SPAN', 't1', false, []],
      ['o2', 'GENERATION', 'o1', false, ['exact']],
    ]);
    // The root spans its observations: from the earliest start to the latest end.
    expect([view[0]!.startTime, view[0]!.endTime, view[0]!.latency, view[0]!.totalCost]).toEqual([
      '2026-01-01T00:00:00.500Z',
      '2026-01-01T00:00:03.000Z',
      2.5,
      0.75,
    ]);
    expect([view[0]!.input, view[0]!.output, view[0]!.metadata]).toEqual([
      '{"q":"hi"}',
      '"hello"',
      { k: { a: 1 }, plain: 'v' },
    ]);
  });

  it.each([
    ['computed from a definition', { input: 0.1, total: 0.1 }, {}, 'computed'],
    ['sent by the SDK', { input: 0.1, total: 0.1 }, { input: 0.1 }, 'sent'],
    ['none', {}, {}, null],
  ])('says where a generation’s cost comes from: %s', (_, cost, provided, source) => {
    const [, o] = legacyTraceView(
      trace,
      [
        {
          ...obs('o1', 'p', '2026-01-01 00:00:01.000', '2026-01-01 00:00:02.000', 0.1),
          internal_model_id: 'm1',
          cost_details: cost,
          provided_cost_details: provided,
          usage_pricing_tier_name: 'Standard',
        },
      ],
      [],
    );
    expect(o).toMatchObject({
      modelId: 'm1',
      costDetails: cost,
      usagePricingTierName: 'Standard',
      costSource: source,
    });
  });
});
