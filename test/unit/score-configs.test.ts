/** Table tests of score configs: what a config may declare, and what a score naming one must be. */
import { describe, expect, it } from 'vitest';
import { apiScoreRow, parseApiScore } from '../../server/features/scores/api-scores.ts';
import {
  applyConfigUpdate,
  checkAgainstConfig,
  createConfigRequest,
  type ScoreConfig,
  updateConfigRequest,
} from '../../server/features/scores/configs.ts';

const config = (over: Partial<ScoreConfig>): ScoreConfig => ({
  id: 'c1',
  projectId: 'p',
  name: 'n',
  dataType: 'NUMERIC',
  isArchived: false,
  minValue: null,
  maxValue: null,
  categories: null,
  description: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('config creation', () => {
  it.each([
    ['numeric with a range', { name: 'q', dataType: 'NUMERIC', minValue: 0, maxValue: 1 }, null],
    ['numeric, no bounds', { name: 'q', dataType: 'NUMERIC' }, null],
    ['range upside down', { name: 'q', dataType: 'NUMERIC', minValue: 2, maxValue: 1 }, 'minValue'],
    [
      'numeric with categories',
      { name: 'q', dataType: 'NUMERIC', categories: [{ value: 1, label: 'a' }] },
      'categories',
    ],
    ['categorical', { name: 'q', dataType: 'CATEGORICAL', categories: [{ value: 1, label: 'a' }] }, null],
    ['categorical without categories', { name: 'q', dataType: 'CATEGORICAL' }, 'categories'],
    [
      'categorical, repeated label',
      {
        name: 'q',
        dataType: 'CATEGORICAL',
        categories: [
          { value: 1, label: 'a' },
          { value: 2, label: 'a' },
        ],
      },
      'categories',
    ],
    [
      'categorical with a minimum',
      { name: 'q', dataType: 'CATEGORICAL', categories: [{ value: 1, label: 'a' }], minValue: 0 },
      'minValue',
    ],
    ['boolean', { name: 'q', dataType: 'BOOLEAN' }, null],
    [
      'boolean with categories',
      { name: 'q', dataType: 'BOOLEAN', categories: [{ value: 1, label: 'yes' }] },
      'categories',
    ],
    [
      'explicit nulls',
      { name: 'q', dataType: 'NUMERIC', minValue: null, maxValue: null, description: null },
      null,
    ],
    ['name too long', { name: 'x'.repeat(36), dataType: 'NUMERIC' }, 'name'],
    ['name with a slash', { name: 'a/b', dataType: 'NUMERIC' }, 'name'],
    ['unknown type', { name: 'q', dataType: 'TEXT' }, 'dataType'],
  ])('%s', (_, body, failingField) => {
    const r = createConfigRequest.safeParse(body);
    if (failingField === null) expect(r.success).toBe(true);
    else expect(r.error?.issues.map((i) => i.path[0])).toContain(failingField);
  });
});

describe('config update (PATCH)', () => {
  const cats = [
    { value: 1, label: 'good' },
    { value: 0, label: 'bad' },
  ];
  it.each([
    ['archive', config({}), { isArchived: true }, { isArchived: true }],
    [
      'raise the maximum',
      config({ minValue: 0, maxValue: 1 }),
      { maxValue: 5 },
      { minValue: 0, maxValue: 5 },
    ],
    [
      'clear the minimum',
      config({ minValue: 0, maxValue: 1 }),
      { minValue: null },
      { minValue: null, maxValue: 1 },
    ],
    ['rename', config({}), { name: 'quality 2' }, { name: 'quality 2' }],
    ['describe', config({}), { description: 'why' }, { description: 'why' }],
    [
      'boolean keeps its categories',
      config({
        dataType: 'BOOLEAN',
        categories: [
          { value: 1, label: 'True' },
          { value: 0, label: 'False' },
        ],
      }),
      { description: 'x' },
      {
        description: 'x',
        categories: [
          { value: 1, label: 'True' },
          { value: 0, label: 'False' },
        ],
      },
    ],
    [
      'categorical gets new categories',
      config({ dataType: 'CATEGORICAL', categories: [{ value: 1, label: 'a' }] }),
      { categories: cats },
      { categories: cats },
    ],
  ] as const)('%s', (_, current, update, expected) => {
    const result = applyConfigUpdate(current, updateConfigRequest.parse(update));
    expect(result).toEqual({ config: { ...current, ...expected } });
  });

  it.each([
    ['minimum above the maximum', config({ minValue: 0, maxValue: 1 }), { minValue: 10 }, 'minValue'],
    [
      'a range on a categorical',
      config({ dataType: 'CATEGORICAL', categories: [{ value: 1, label: 'a' }] }),
      { maxValue: 1 },
      'maxValue',
    ],
    ['categories on a numeric', config({}), { categories: [{ value: 1, label: 'a' }] }, 'categories'],
    [
      'duplicate labels',
      config({ dataType: 'CATEGORICAL', categories: [{ value: 1, label: 'a' }] }),
      {
        categories: [
          { value: 1, label: 'a' },
          { value: 2, label: 'a' },
        ],
      },
      'categories',
    ],
    [
      'categories on a boolean',
      config({ dataType: 'BOOLEAN', categories: [] }),
      { categories: [{ value: 3, label: 'x' }] },
      'categories',
    ],
  ] as const)('%s is refused naming %s', (_, current, update, field) => {
    const result = applyConfigUpdate(current, updateConfigRequest.parse(update));
    expect('issues' in result && result.issues.issues.map((i) => i.path[0])).toContain(field);
  });

  it.each([[{}], [{ name: '' }], [{ name: 'bad/name' }], [{ isArchived: 'yes' }]])(
    '%j is refused',
    (body) => {
      expect(updateConfigRequest.safeParse(body).success).toBe(false);
    },
  );
});

describe('a score against its config', () => {
  const numeric = config({ minValue: 0, maxValue: 10 });
  const categorical = config({
    dataType: 'CATEGORICAL',
    categories: [
      { value: 2, label: 'good' },
      { value: 0, label: 'bad' },
    ],
  });
  const boolean = config({ dataType: 'BOOLEAN' });
  it.each([
    ['in range', { value: 10 }, numeric, { dataType: 'NUMERIC', value: 10, stringValue: null }],
    ['below the minimum', { value: -1 }, numeric, 'value: -1 is below the minimum 0 of score config c1'],
    ['above the maximum', { value: 11 }, numeric, 'value: 11 is above the maximum 10 of score config c1'],
    ['text for a number', { value: 'x' }, numeric, 'value: NUMERIC scores need a number value'],
    [
      'other data type',
      { value: 1, dataType: 'BOOLEAN' },
      numeric,
      'dataType: BOOLEAN does not match the data type NUMERIC of score config c1',
    ],
    ['archived', { value: 1 }, config({ isArchived: true }), 'configId: score config c1 is archived'],
    [
      'a category label',
      { value: 'good' },
      categorical,
      { dataType: 'CATEGORICAL', value: 2, stringValue: 'good' },
    ],
    [
      'a category value',
      { value: 0 },
      categorical,
      { dataType: 'CATEGORICAL', value: 0, stringValue: 'bad' },
    ],
    [
      'not a category',
      { value: 'meh' },
      categorical,
      'value: "meh" is not a category of score config c1 (good, bad)',
    ],
    [
      'boolean 1',
      { value: 1, dataType: 'BOOLEAN' },
      boolean,
      { dataType: 'BOOLEAN', value: 1, stringValue: 'True' },
    ],
    ['boolean label', { value: 'False' }, boolean, { dataType: 'BOOLEAN', value: 0, stringValue: 'False' }],
    ['boolean 2', { value: 2 }, boolean, 'value: 2 is not a category of score config c1 (1, 0)'],
  ] as const)('%s', (_, score, cfg, expected) => {
    const r = checkAgainstConfig(score, cfg);
    if (typeof expected === 'string') expect(r.ok ? 'accepted' : `${r.field}: ${r.message}`).toBe(expected);
    else expect(r).toEqual({ ok: true, resolved: expected });
  });
});

describe('POST /api/public/scores items', () => {
  it.each([
    ['minimal', { traceId: 't', name: 'n', value: 1 }, null],
    [
      'with offset timestamp',
      { traceId: 't', name: 'n', value: 1, timestamp: '2026-01-01T10:00:00+02:00' },
      null,
    ],
    [
      'naive timestamp',
      { traceId: 't', name: 'n', value: 1, timestamp: '2026-01-01T10:00:00' },
      'timestamp: must be an ISO 8601 date-time with a UTC offset',
    ],
    ['no subject', { name: 'n', value: 1 }, 'traceId: one of traceId, sessionId, datasetRunId is required'],
    [
      'EVAL source',
      { traceId: 't', name: 'n', value: 1, source: 'EVAL' },
      'source: EVAL is reserved for evaluators of the service',
    ],
    [
      'ANNOTATION without config',
      { traceId: 't', name: 'n', value: 1, source: 'ANNOTATION' },
      'configId: ANNOTATION scores need a score config (unless dataType is CORRECTION)',
    ],
    [
      'ANNOTATION correction',
      { traceId: 't', name: 'n', value: 'fixed', source: 'ANNOTATION', dataType: 'CORRECTION' },
      null,
    ],
  ])('%s', (_, item, error) => {
    const r = parseApiScore(item);
    expect(r.ok ? null : r.message).toBe(error);
  });

  it('a config decides the stored type, value and label', () => {
    const parsed = parseApiScore({ traceId: 't', name: 'tone', value: 'good', configId: 'c1' });
    if (!parsed.ok) throw new Error(parsed.message);
    const cfg = config({ dataType: 'CATEGORICAL', categories: [{ value: 2, label: 'good' }] });
    const built = apiScoreRow(
      parsed.body,
      '2026-01-01T00:00:00Z',
      cfg,
      { projectId: 'p', now: 0 },
      {
        apiKey: 'pk',
        sdkName: 'python',
        sdkVersion: '5.0.4',
      },
    );
    expect(built.ok && built.row).toMatchObject({
      data_type: 'CATEGORICAL',
      value: 2,
      string_value: 'good',
      config_id: 'c1',
      project_id: 'p',
      ingestion_sdk_version: '5.0.4',
    });
  });
});
