/** Table tests of the read-side SQL builders: which SQL each request yields, and what is refused. */
import { describe, expect, it } from 'vitest';
import { OBSERVATION_COLUMNS } from '../../server/features/reads/events-columns.ts';
import { buildExperimentItems, buildExperiments } from '../../server/features/reads/experiments.ts';
import { compileCondition, type FilterCondition, textTokens } from '../../server/features/reads/filters.ts';
import { buildScoreList, buildTraceList } from '../../server/features/reads/legacy.ts';
import { autoGranularity, buildMetrics, type MetricsQuery } from '../../server/features/reads/metrics.ts';
import { METRICS_V1_VIEWS, METRICS_V2_VIEWS } from '../../server/features/reads/metrics-views.ts';
import {
  buildObservationList,
  mapObservation,
  nextCursor,
  parseFieldGroups,
  parseObservationCursor,
  simpleFilters,
} from '../../server/features/reads/observations.ts';
import { toIso } from '../../server/features/reads/row-values.ts';
import { buildScoresV3, mapScoreV3 } from '../../server/features/reads/scores.ts';
import { Params, toChText, Where } from '../../server/features/reads/sql.ts';
import { BadRequest } from '../../server/kernel/errors.ts';

const HOSTILE = "x' OR 1=1 --";

describe('filter conditions', () => {
  const cases: [string, FilterCondition, RegExp, unknown[]][] = [
    [
      'string =',
      { type: 'string', column: 'name', operator: '=', value: 'a' },
      /^name = \{p0:String\}$/,
      ['a'],
    ],
    [
      'contains',
      { type: 'string', column: 'name', operator: 'contains', value: 'a' },
      /^position\(name, \{p0:String\}\) > 0$/,
      ['a'],
    ],
    [
      'starts with',
      { type: 'string', column: 'userId', operator: 'starts with', value: 'u' },
      /^startsWith\(user_id, /,
      ['u'],
    ],
    [
      'datetime',
      { type: 'datetime', column: 'startTime', operator: '>=', value: '2026-01-02T03:04:05.678Z' },
      /^start_time >= toDateTime64\(\{p0:String\}, 6, 'UTC'\)$/,
      ['2026-01-02 03:04:05.678000'],
    ],
    ['number', { type: 'number', column: 'latency', operator: '<', value: 2 }, /< \{p0:Float64\}$/, [2]],
    [
      'any of',
      { type: 'stringOptions', column: 'environment', operator: 'any of', value: ['a', 'b'] },
      /^environment IN \{p0:Array\(String\)\}$/,
      [['a', 'b']],
    ],
    [
      'array all of',
      { type: 'arrayOptions', column: 'tags', operator: 'all of', value: ['t'] },
      /^hasAll\(tags, /,
      [['t']],
    ],
    [
      'boolean',
      { type: 'boolean', column: 'isRootObservation', operator: '=', value: true },
      /^toUInt8\(\(parent_span_id = '' OR is_app_root\)\) = \{p0:UInt32\}$/,
      [1],
    ],
    [
      'metadata',
      { type: 'stringObject', column: 'metadata', key: 'k', operator: '=', value: 'v' },
      /^metadata_values\[indexOf\(metadata_names, \{p0:String\}\)\] = \{p1:String\}$/,
      ['k', 'v'],
    ],
    ['null', { type: 'null', column: 'endTime', operator: 'is null' }, /^isNull\(end_time\)$/, []],
    [
      'hostile value stays a parameter',
      { type: 'string', column: 'name', operator: '=', value: HOSTILE },
      /^name = \{p0:String\}$/,
      [HOSTILE],
    ],
  ];
  it.each(cases)('%s', (_, f, sql, values) => {
    const params = new Params();
    expect(compileCondition(f, OBSERVATION_COLUMNS, { params, textIndex: true })).toMatch(sql);
    expect(Object.values(params.values)).toEqual(values);
  });

  const refused: [string, FilterCondition][] = [
    ['unknown column', { type: 'string', column: 'nope', operator: '=', value: 'a' }],
    ['bad operator', { type: 'string', column: 'name', operator: 'LIKE', value: 'a' }],
    ['matches on a non-text column', { type: 'string', column: 'name', operator: 'matches', value: 'a' }],
    ['number with a string', { type: 'number', column: 'latency', operator: '=', value: '1' }],
    ['metadata without key', { type: 'stringObject', column: 'metadata', operator: '=', value: 'v' }],
    ['bad datetime', { type: 'datetime', column: 'startTime', operator: '>', value: 'yesterday' }],
  ];
  it.each(refused)('refuses %s with BadRequest', (_, f) => {
    expect(() => compileCondition(f, OBSERVATION_COLUMNS, { params: new Params(), textIndex: true })).toThrow(
      BadRequest,
    );
  });

  it('matches: indexed tokens plus the literal, or the scanning form without the index', () => {
    const f: FilterCondition = {
      type: 'string',
      column: 'input',
      operator: 'matches',
      value: 'Zebra-Crossing',
    };
    const indexed = { params: new Params(), textIndex: true } as Parameters<typeof compileCondition>[2];
    expect(compileCondition(f, OBSERVATION_COLUMNS, indexed)).toBe(
      '(hasAllTokens(lower(input), {p1:Array(String)}) AND positionCaseInsensitiveUTF8(input, {p0:String}) > 0)',
    );
    expect(indexed.usedTextIndex).toBe(true);
    expect(indexed.params.values['p1']).toEqual(['zebra', 'crossing']);
    const scan = { params: new Params(), textIndex: false } as Parameters<typeof compileCondition>[2];
    expect(compileCondition(f, OBSERVATION_COLUMNS, scan)).toBe(
      '(hasToken(lower(input), {p1:String}) AND hasToken(lower(input), {p2:String}) AND positionCaseInsensitiveUTF8(input, {p0:String}) > 0)',
    );
    expect(scan.usedTextIndex).toBeUndefined();
  });

  it.each([
    ['Hello, World', ['hello', 'world']],
    ['a_b 42', ['a', 'b', '42']],
    ['%%', []],
    ['Ünïcode straße', ['Ünïcode', 'straße']],
  ])('tokens of %j', (text, tokens) => expect(textTokens(text)).toEqual(tokens));
});

describe('observations v2 list', () => {
  const base = {
    projectId: 'proj',
    groups: parseFieldGroups(undefined),
    filters: [],
    limit: 50,
    textIndex: true,
  };

  it('reads events_core, scoped to the project, newest first, one extra row', () => {
    const q = buildObservationList(base);
    expect(q.table).toBe('events_core');
    expect(q.sql).toContain('FROM events_core FINAL');
    expect(q.sql).toContain('WHERE project_id = {p0:String}');
    expect(q.sql).toContain('ORDER BY start_time DESC, trace_id DESC, span_id DESC');
    expect(q.params).toEqual({ p0: 'proj', p1: 51 });
    expect(q.settings).toBeUndefined();
  });

  it('reads events_full with the text-index setting when a full-text filter reads input', () => {
    const q = buildObservationList({
      ...base,
      filters: [{ type: 'string', column: 'input', operator: 'matches', value: 'x' }],
    });
    expect(q.table).toBe('events_full');
    expect(q.settings).toEqual({ enable_full_text_index: 1 });
  });

  it('refuses a bare substring filter on input', () => {
    expect(() =>
      buildObservationList({
        ...base,
        filters: [{ type: 'string', column: 'output', operator: 'contains', value: 'x' }],
      }),
    ).toThrow(/"=" or "matches"/);
  });

  it('continues after the cursor with a tuple comparison of bound values', () => {
    const q = buildObservationList({
      ...base,
      cursor: { t: '2026-01-01 00:00:00.000001', tr: 't', id: 's' },
    });
    expect(q.sql).toContain(
      "(start_time, trace_id, span_id) < (toDateTime64({p1:String}, 6, 'UTC'), {p2:String}, {p3:String})",
    );
  });

  it('simple parameters become filters; an empty parent means no physical parent', () => {
    expect(
      simpleFilters({
        traceId: 't',
        parentObservationId: '',
        environment: ['a'],
        fromStartTime: '2026-01-01T00:00:00Z',
      }),
    ).toEqual([
      { type: 'string', column: 'traceId', operator: '=', value: 't' },
      { type: 'string', column: 'parentObservationId', operator: '=', value: '' },
      { type: 'stringOptions', column: 'environment', operator: 'any of', value: ['a'] },
      { type: 'datetime', column: 'startTime', operator: '>=', value: '2026-01-01T00:00:00Z' },
    ]);
  });

  it('cursors round-trip; garbage is a 400', () => {
    const rows = [1, 2, 3].map((i) => ({
      start_time: `2026-01-0${i} 00:00:00.000000`,
      trace_id: `t${i}`,
      span_id: `s${i}`,
    }));
    const c = nextCursor(rows, 2)!;
    expect(parseObservationCursor(c)).toEqual({ t: '2026-01-02 00:00:00.000000', tr: 't2', id: 's2' });
    expect(nextCursor(rows, 3)).toBeUndefined();
    expect(() => parseObservationCursor('bm9wZQ')).toThrow(BadRequest);
  });

  it('maps a row: empty parent is null and a root; groups decide the fields', () => {
    const row = {
      span_id: 's',
      trace_id: 't',
      start_time: '2026-01-01 00:00:00.123456',
      end_time: null,
      project_id: 'p',
      parent_span_id: '',
      type: 'SPAN',
      is_app_root: false,
      name: 'n',
      level: 'DEFAULT',
      status_message: '',
      version: '',
      environment: 'default',
      bookmarked: false,
      public: false,
      user_id: 'u',
      session_id: '',
    };
    const o = mapObservation(row, parseFieldGroups('basic'), undefined, []);
    expect(o).toMatchObject({
      id: 's',
      startTime: '2026-01-01T00:00:00.123Z',
      parentObservationId: null,
      isRootObservation: true,
      userId: 'u',
      sessionId: null,
    });
    expect(o).not.toHaveProperty('input');
  });
});

describe('scores v3', () => {
  const ok = { projectId: 'p', limit: 50 };
  it.each([
    ['traceId and sessionId together', { traceId: ['t'], sessionId: ['s'] }, /mutually exclusive/],
    ['observationId without traceId', { observationId: ['o'] }, /requires traceId/],
    ['valueMin without NUMERIC', { valueMin: 1 }, /dataType=NUMERIC/],
    ['value without a single type', { value: ['1'] }, /single dataType/],
    ['non-boolean BOOLEAN value', { dataType: ['BOOLEAN'], value: ['yes'] }, /true or false/],
    ['unknown data type', { dataType: ['FLOAT'] }, /unknown data type/],
  ])('refuses %s', (_, extra, message) => {
    expect(() => buildScoresV3({ ...ok, ...extra })).toThrow(message);
  });

  it('binds filters and case-folds source and data type', () => {
    const q = buildScoresV3({ ...ok, source: ['api'], dataType: ['numeric'], valueMin: 0.5 });
    expect(q.sql).toContain('upper(source) IN {p1:Array(String)}');
    expect(q.params).toMatchObject({ p1: ['API'], p2: ['NUMERIC'], p3: 0.5 });
  });

  it.each([
    ['NUMERIC', { value: 0.5 }, 0.5],
    ['BOOLEAN', { value: 1 }, true],
    ['CATEGORICAL', { string_value: 'good' }, 'good'],
    ['TEXT', { long_string_value: 'long text' }, 'long text'],
  ])('%s values come back in their type', (dataType, cols, value) => {
    expect(mapScoreV3({ data_type: dataType, ...cols }, new Set()).value).toEqual(value);
  });
});

describe('metrics', () => {
  const q = (extra: Partial<MetricsQuery>): MetricsQuery => ({
    view: 'observations',
    dimensions: [],
    metrics: [{ measure: 'count', aggregation: 'count' }],
    filters: [],
    fromTimestamp: '2026-01-01T00:00:00Z',
    toTimestamp: '2026-01-02T00:00:00Z',
    ...extra,
  });
  const v2 = METRICS_V2_VIEWS['observations']!;

  it('groups by dimensions and time buckets with the reference keys', () => {
    const b = buildMetrics(
      v2,
      'p',
      q({
        dimensions: [{ field: 'name' }],
        timeDimension: { granularity: 'hour' },
        metrics: [{ measure: 'latency', aggregation: 'p95' }],
      }),
    );
    expect(b.sql).toContain('name AS d0');
    expect(b.sql).toContain('toStartOfHour(start_time) AS time_dimension');
    expect(b.sql).toContain('quantile(0.95)(');
    expect(b.sql).toContain('FROM events_core FINAL');
    expect(b.keys).toEqual({ d0: 'name', time_dimension: 'time_dimension', m0: 'p95_latency' });
  });

  it.each(['traceId', 'userId', 'sessionId', 'id', 'parentObservationId'])(
    'refuses %s as a group-by',
    (field) => {
      expect(() => buildMetrics(v2, 'p', q({ dimensions: [{ field }] }))).toThrow(/too many distinct values/);
    },
  );

  it.each([
    ['unknown dimension', q({ dimensions: [{ field: 'nope' }] }), /unknown dimension/],
    ['unknown measure', q({ metrics: [{ measure: 'nope', aggregation: 'sum' }] }), /unknown measure/],
    ['order by an unknown field', q({ orderBy: [{ field: 'x', direction: 'asc' }] }), /cannot order by/],
    ['inverted range', q({ fromTimestamp: '2026-02-01T00:00:00Z' }), /after fromTimestamp/],
  ])('refuses %s', (_, query, message) => {
    expect(() => buildMetrics(v2, 'p', query)).toThrow(message);
  });

  it('the legacy views read the version 3 tables and allow high-cardinality dimensions', () => {
    const b = buildMetrics(
      METRICS_V1_VIEWS['traces']!,
      'p',
      q({ view: 'traces', dimensions: [{ field: 'userId' }] }),
    );
    expect(b.sql).toContain('FROM traces FINAL');
  });

  it.each([
    [40 * 60_000, 'minute'],
    [24 * 3_600_000, 'hour'],
    [30 * 86_400_000, 'day'],
    [200 * 86_400_000, 'week'],
    [3 * 365 * 86_400_000, 'month'],
  ])('auto granularity over %i ms is %s', (span, g) => {
    expect(
      autoGranularity(
        '2026-01-01T00:00:00Z',
        new Date(Date.parse('2026-01-01T00:00:00Z') + span).toISOString(),
      ),
    ).toBe(g);
  });
});

describe('experiments and legacy lists', () => {
  it('experiment items read events_full only when input, output or metadata are asked', () => {
    const base = { projectId: 'p', fromStartTime: '2026-01-01T00:00:00Z', limit: 10, filters: [] };
    expect(buildExperimentItems({ ...base, groups: new Set(['core']) }).sql).toContain(
      'FROM events_core FINAL',
    );
    expect(buildExperimentItems({ ...base, groups: new Set(['core', 'io']) }).sql).toContain(
      'FROM events_full FINAL',
    );
    expect(() =>
      buildExperiments({
        ...base,
        filters: [{ type: 'string', column: 'input', operator: '=', value: 'x' }],
      }),
    ).toThrow(/unsupported column/);
  });

  it('legacy trace order is chosen from a fixed table', () => {
    expect(buildTraceList({ projectId: 'p', page: 2, limit: 10, orderBy: 'name.asc' }).list.sql).toContain(
      'ORDER BY name ASC, id DESC',
    );
    expect(() =>
      buildTraceList({ projectId: 'p', page: 1, limit: 10, orderBy: 'name; DROP TABLE traces.asc' }),
    ).toThrow(BadRequest);
  });

  it('legacy score lists filter trace fields through a bound subquery', () => {
    const q = buildScoreList({ projectId: 'p', page: 1, limit: 10, userId: HOSTILE });
    expect(q.list.sql).toContain('trace_id IN (SELECT id FROM traces FINAL WHERE project_id = ');
    expect(q.list.sql).not.toContain(HOSTILE);
    expect(() => buildScoreList({ projectId: 'p', page: 1, limit: 10, value: 1, operator: 'OR' })).toThrow(
      BadRequest,
    );
  });
});

describe('one WHERE builder', () => {
  const given = {
    one: 'a',
    many: ['x', HOSTILE],
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-02T00:00:00+02:00',
  };
  // Each filter given, then none: what each adds, and its bound values in the order they were bound.
  const cases: [string, (w: Where) => Where, string, unknown[]][] = [
    ['eq', (w) => w.eq('name', given.one), 'name = {p1:String}', ['a']],
    ['anyOf', (w) => w.anyOf('env', given.many), 'env IN {p1:Array(String)}', [given.many]],
    ['hasAll', (w) => w.hasAll('tags', given.many), 'hasAll(tags, {p1:Array(String)})', [given.many]],
    [
      'range',
      (w) => w.range('ts', given.from, given.to),
      "ts >= toDateTime64({p1:String}, 6, 'UTC') AND ts < toDateTime64({p2:String}, 6, 'UTC')",
      ['2026-01-01 00:00:00.000000', '2026-01-01 22:00:00.000000'],
    ],
    ['add', (w) => w.add('1 = 1'), '1 = 1', []],
  ];
  it.each(cases)('%s adds its condition with its values bound', (_name, build, condition, values) => {
    const p = new Params();
    const w = build(new Where(p, `project_id = ${p.str('p')}`));
    expect(w.sql(' AND ')).toBe(`project_id = {p0:String} AND ${condition}`);
    expect(Object.values(p.values)).toEqual(['p', ...values]);
  });

  it('adds nothing for a filter the request leaves out or gives empty', () => {
    const p = new Params();
    const w = new Where(p, 'x')
      .eq('a', undefined)
      .anyOf('b', [])
      .anyOf('c', undefined)
      .hasAll('d', [])
      .range('e');
    expect([w.size, w.sql(), p.values]).toEqual([1, 'x', {}]);
  });

  it('puts each condition on its own line by default', () => {
    expect(new Where(new Params(), 'a', 'b').sql()).toBe('a\n  AND b');
  });
});

describe('time text', () => {
  it.each([
    ['2026-01-02T03:04:05Z', '2026-01-02 03:04:05.000000'],
    ['2026-01-02T03:04:05.1234567Z', '2026-01-02 03:04:05.123456'],
    ['2026-01-02T05:04:05.5+02:00', '2026-01-02 03:04:05.500000'],
  ])('toChText(%s)', (iso, text) => expect(toChText(iso)).toBe(text));
  it.each([
    ['2026-01-02 03:04:05.123456', '2026-01-02T03:04:05.123Z'],
    ['2026-01-02', '2026-01-02T00:00:00.000Z'],
    [null, null],
  ])('toIso(%s)', (text, iso) => expect(toIso(text)).toBe(iso));
});
