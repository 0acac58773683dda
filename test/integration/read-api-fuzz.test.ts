/**
 * Property-based: no request to the public read API answers 5xx, whatever names and values it
 * carries. fast-check generates metrics v1/v2 queries, observation and trace filters, orderBy
 * values and scores list parameters from ordinary and adversarial names (`constructor`,
 * `__proto__`, `toString`, ...) and arbitrary JSON values, and sends them with plain HTTP to the
 * web app in process (dual write mode with the preview opt-in, so that both the deprecated and the
 * version 4 reads are served) over real PostgreSQL and the embedded ClickHouse engine holding a
 * trace, an observation and a score. A counterexample is shrunk to the smallest failing request.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../../server/features/projects/keys.ts';
import { type InProcessWeb, type Stores, serveWeb, startStores } from '../fixtures/web-in-process.ts';

const DUAL = {
  SERVICE_MIGRATION_V4_WRITE_MODE: 'dual',
  SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write',
};
const RUNS = 60;
const NOW = new Date();

let stores: Stores;
let web: InProcessWeb;
let auth: string;

beforeAll(async () => {
  stores = await startStores();
  const project = await createProject(stores.pool, 'read-fuzz');
  auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
  web = await serveWeb(stores, DUAL);
  const at = NOW.toISOString();
  const res = await fetch(`${web.url}/api/public/ingestion`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      batch: [
        { id: 'e1', type: 'trace-create', timestamp: at, body: { id: 'fz-trace', name: 't', tags: ['a'] } },
        {
          id: 'e2',
          type: 'generation-create',
          timestamp: at,
          body: { id: 'fz-gen', traceId: 'fz-trace', startTime: at, model: 'm', metadata: { k: 'v' } },
        },
        {
          id: 'e3',
          type: 'score-create',
          timestamp: at,
          body: { id: 'fz-score', traceId: 'fz-trace', name: 'q', value: 1 },
        },
      ],
    }),
  });
  expect(res.status).toBe(207);
}, 120_000);

afterAll(async () => {
  await web?.app.close();
  await stores?.stop();
});

/** Names every plain object answers to: a lookup by one of them must not find anything. */
const INHERITED = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];
/** Any name: inherited object members, and random text. */
const name = fc.oneof(
  fc.constantFrom(...INHERITED),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);
/** Often a name the route knows (so that the request gets past its first check), else any. */
const pick = (...known: string[]) =>
  fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 2 }, { arbitrary: name, weight: 2 });
const timestamp = fc.oneof(
  fc
    .date({ min: new Date('1971-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  name,
);
const condition = fc.record(
  {
    type: fc.oneof(
      fc.constantFrom(
        'string',
        'number',
        'datetime',
        'stringOptions',
        'arrayOptions',
        'stringObject',
        'numberObject',
        'boolean',
        'null',
        'categoryOptions',
      ),
      name,
    ),
    column: pick('name', 'traceId', 'userId', 'startTime', 'metadata', 'value', 'environment', 'level'),
    operator: fc.oneof(
      fc.constantFrom(
        '=',
        '>',
        '<',
        '>=',
        '<=',
        '!=',
        'any of',
        'none of',
        'contains',
        'does not contain',
        'starts with',
        'ends with',
        'all of',
        'is null',
        'is not null',
      ),
      name,
    ),
    value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), timestamp),
    key: name,
  },
  { requiredKeys: ['column'] },
);
const filters = fc.oneof(
  fc.array(condition, { maxLength: 3 }).map((c) => JSON.stringify(c)),
  name,
);
const direction = fc.oneof(fc.constantFrom('asc', 'desc'), name);
const metricsQuery = fc.oneof(
  fc
    .record(
      {
        view: pick('traces', 'observations', 'scores-numeric', 'scores-categorical'),
        dimensions: fc.array(fc.record({ field: pick('name', 'environment', 'userId') }), { maxLength: 2 }),
        metrics: fc.array(
          fc.record({
            measure: pick('count', 'latency', 'value', 'totalTokens'),
            aggregation: pick('count', 'sum', 'avg', 'p95', 'max', 'histogram'),
          }),
          { minLength: 1, maxLength: 2 },
        ),
        filters: fc.array(condition, { maxLength: 2 }),
        timeDimension: fc.option(
          fc.record({ granularity: fc.oneof(fc.constantFrom('auto', 'hour', 'day'), name) }),
        ),
        fromTimestamp: fc.oneof({ arbitrary: fc.constant('2000-01-01T00:00:00Z'), weight: 3 }, timestamp),
        toTimestamp: fc.oneof({ arbitrary: fc.constant('2100-01-01T00:00:00Z'), weight: 3 }, timestamp),
        orderBy: fc.option(
          fc.array(fc.record({ field: pick('count_count', 'name', 'time_dimension'), direction }), {
            maxLength: 2,
          }),
        ),
        config: fc.option(fc.record({ bins: fc.oneof(fc.integer(), fc.double()), row_limit: fc.integer() })),
      },
      { requiredKeys: ['view', 'metrics', 'fromTimestamp', 'toTimestamp'] },
    )
    .map((q) => JSON.stringify(q)),
  name,
);

async function send(path: string, params: Record<string, string | undefined>) {
  const qs = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const res = await fetch(`${web.url}${path}?${qs}`, { headers: { authorization: auth } });
  return { url: `${path}?${qs}`, status: res.status, body: await res.text() };
}

async function status(path: string, params: Record<string, string | undefined>): Promise<number> {
  const r = await send(path, params);
  if (r.status >= 500) throw new Error(`${r.url} answered ${r.status}: ${r.body.slice(0, 300)}`);
  return r.status;
}

type Request = [string, Record<string, string | undefined>];

/** Random requests from `arb`, after the `known` adversarial ones, which every run tries. */
const noServerError = (arb: fc.Arbitrary<Request>, known: Request[]) =>
  fc.assert(
    fc.asyncProperty(arb, async ([path, params]) => {
      expect(await status(path, params)).toBeLessThan(500);
    }),
    { numRuns: RUNS, examples: known.map((r): [Request] => [r]) },
  );

const RANGE = { fromTimestamp: '2000-01-01T00:00:00Z', toTimestamp: '2100-01-01T00:00:00Z' };
const COUNT = [{ measure: 'count', aggregation: 'count' }];
const stringFilter = (column: string) => [{ type: 'string', column, operator: '=', value: 'x' }];
/** Metrics queries naming an inherited member as view, dimension, measure, order or filter column. */
const inheritedMetrics = INHERITED.flatMap((n) =>
  ['/api/public/metrics', '/api/public/v2/metrics'].flatMap((path) =>
    [
      { view: n, metrics: COUNT },
      { view: 'observations', dimensions: [{ field: n }], metrics: COUNT },
      { view: 'observations', metrics: [{ measure: n, aggregation: 'sum' }] },
      { view: 'observations', metrics: COUNT, orderBy: [{ field: n, direction: 'asc' }] },
      { view: 'observations', metrics: COUNT, filters: stringFilter(n) },
    ].map((q): Request => [path, { query: JSON.stringify({ ...q, ...RANGE }) }]),
  ),
);
/** The same names as a filter column or an order field of the lists. */
const inheritedLists = (paths: string[], extra: (n: string) => Record<string, string>) =>
  INHERITED.flatMap((n) =>
    paths.map((path): Request => [path, { filter: JSON.stringify(stringFilter(n)), ...extra(n) }]),
  );

const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

it('refuses an inherited name as view, dimension, measure, order or filter column with a 400 naming the field', async () => {
  const wrong: string[] = [];
  const cases = [
    ...inheritedMetrics,
    ...inheritedLists(['/api/public/v2/observations'], () => ({})),
    ...INHERITED.map((n): Request => ['/api/public/traces', { orderBy: `${n}.asc` }]),
  ];
  for (const [path, params] of cases) {
    const r = await send(path, params);
    if (r.status !== 400 || !/"message":"[^"]*(query|filter|orderBy)\b/.test(r.body)) {
      wrong.push(`${r.url}: ${r.status} ${r.body.slice(0, 200)}`);
    }
  }
  expect(wrong).toEqual([]);
});

describe('the public read API answers no 5xx', () => {
  it('metrics v1 and v2 queries', () =>
    noServerError(
      fc.tuple(
        fc.constantFrom('/api/public/metrics', '/api/public/v2/metrics'),
        metricsQuery.map((query) => ({ query })),
      ),
      inheritedMetrics,
    ));

  it('observations v2: filter, fields, expandMetadata, order', () =>
    noServerError(
      fc.tuple(
        fc.constant('/api/public/v2/observations'),
        fc.record({
          filter: optional(filters),
          fields: optional(name),
          expandMetadata: optional(name),
          orderBy: optional(name),
          limit: optional(name),
          cursor: optional(name),
          fromStartTime: optional(timestamp),
        }),
      ),
      inheritedLists(['/api/public/v2/observations'], (n) => ({ orderBy: n })),
    ));

  it('traces and observations v1: orderBy, filters, paging', () =>
    noServerError(
      fc.tuple(
        fc.constantFrom('/api/public/traces', '/api/public/observations', '/api/public/sessions'),
        fc.record({
          orderBy: optional(
            fc.tuple(pick('timestamp', 'name', 'id'), direction).map(([f, d]) => `${f}.${d}`),
          ),
          filter: optional(filters),
          name: optional(name),
          userId: optional(name),
          type: optional(name),
          level: optional(name),
          page: optional(name),
          limit: optional(name),
          fromTimestamp: optional(timestamp),
          tags: optional(name),
        }),
      ),
      inheritedLists(['/api/public/traces', '/api/public/observations'], (n) => ({ orderBy: `${n}.asc` })),
    ));

  it('scores lists: v1, v2 and v3 parameters', () =>
    noServerError(
      fc.tuple(
        fc.constantFrom('/api/public/scores', '/api/public/v2/scores', '/api/public/v3/scores'),
        fc.record({
          name: optional(name),
          source: optional(name),
          dataType: optional(name),
          value: optional(name),
          valueMin: optional(name),
          operator: optional(name),
          fields: optional(name),
          filter: optional(filters),
          traceId: optional(name),
          fromTimestamp: optional(timestamp),
          limit: optional(name),
          cursor: optional(name),
        }),
      ),
      inheritedLists(['/api/public/scores', '/api/public/v2/scores', '/api/public/v3/scores'], (n) => ({
        fields: n,
      })),
    ));
});
