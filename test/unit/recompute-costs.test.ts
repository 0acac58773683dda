/**
 * Recomputing stored costs, pure logic by tables: what a stored row's computed columns become with
 * the current definitions (nothing when already right), which rows a batch reads, and the in-place
 * update statement in each form. Expected costs are usage times the definitions' prices.
 */
import { describe, expect, it } from 'vitest';
import { ProjectPricing } from '../../server/features/models/apply.ts';
import type { ModelDefinition } from '../../server/features/models/definitions.ts';
import { compileModels } from '../../server/features/models/pricing.ts';
import {
  batchQuery,
  type CostChange,
  cursorAfter,
  recomputeRow,
  updateStatement,
} from '../../server/features/models/recompute-sql.ts';

const acme = (id: string, input: number, output: number): ModelDefinition => ({
  id,
  projectId: 'p',
  modelName: 'acme',
  matchPattern: '(?i)^acme$',
  startDate: null,
  unit: 'TOKENS',
  tokenizerId: null,
  tokenizerConfig: null,
  pricingTiers: [
    {
      id: `${id}-std`,
      name: 'Standard',
      isDefault: true,
      priority: 0,
      conditions: [],
      prices: { input, output },
    },
  ],
  createdAt: '2026-01-01T00:00:00.000Z',
});
const pricing = (...defs: ModelDefinition[]) => new ProjectPricing(compileModels(defs));

const eventRow = (over: Record<string, unknown> = {}) => ({
  project_id: 'p',
  trace_id: 't',
  id: 's1',
  start_time: '2026-11-01 10:00:00.000000',
  provided_model_name: 'ACME',
  provided_usage_details: { input: 100, output: 10 },
  provided_cost_details: {},
  usage_details: { input: 100, output: 10, total: 110 },
  cost_details: { input: 0.0001, output: 0.00002, total: 0.00012 },
  model_id: 'v1',
  usage_pricing_tier_id: 'v1-std',
  usage_pricing_tier_name: 'Standard',
  input: '',
  output: '',
  model_parameters: '',
  metadata_names: [],
  metadata_values: [],
  ...over,
});

describe('a stored row recomputed', () => {
  /** What the v2 prices make of the stored row's 100 input and 10 output tokens. */
  const V2_RECOMPUTED = {
    modelId: 'v2',
    usage: { input: 100, output: 10, total: 110 },
    cost: { input: 0.0003, output: 0.00005, total: 0.00035 },
    tierId: 'v2-std',
    tierName: 'Standard',
  };

  it.each([
    ['the same definition: nothing to write', pricing(acme('v1', 1e-6, 2e-6)), null],
    [
      'new prices: the new definition, its tier and its cost',
      pricing(acme('v2', 3e-6, 5e-6)),
      { ...V2_RECOMPUTED, totalCost: '' },
    ],
    [
      'no definition matches any more: no model and no cost',
      pricing(),
      {
        modelId: '',
        usage: { input: 100, output: 10, total: 110 },
        cost: {},
        tierId: '',
        tierName: '',
        totalCost: '',
      },
    ],
  ])('events: %s', (_, p, expected) => {
    const change = recomputeRow(p, 'events', eventRow());
    expect(
      change && { ...change, projectId: undefined, traceId: undefined, id: undefined, startTime: undefined },
    ).toEqual(
      expected && {
        ...expected,
        projectId: undefined,
        traceId: undefined,
        id: undefined,
        startTime: undefined,
      },
    );
  });

  it('legacy: the total cost column follows the cost, and the row keys come along', () => {
    const row = {
      ...eventRow(),
      internal_model_id: 'v1',
      total_cost: 0.00012,
      metadata: {},
    };
    delete (row as Record<string, unknown>)['model_id'];
    expect(recomputeRow(pricing(acme('v1', 1e-6, 2e-6)), 'observations', row)).toBeNull();
    expect(recomputeRow(pricing(acme('v2', 3e-6, 5e-6)), 'observations', row)).toEqual({
      projectId: 'p',
      traceId: 't',
      id: 's1',
      startTime: '2026-11-01 10:00:00.000000',
      ...V2_RECOMPUTED,
      totalCost: '0.000350000000',
    });
  });
});

describe('batches', () => {
  const range = { from: '2026-11-01 00:00:00.000000', to: '2026-11-02 00:00:00.000000' };
  it('read only rows with a model name and no sent cost, oldest first, after the cursor', () => {
    const first = batchQuery('events', range, null, 500);
    expect(first.query).toContain('FROM events_full FINAL');
    expect(first.query).toContain('empty(provided_cost_details)');
    expect(first.query).toContain('ORDER BY start_time, project_id, trace_id, span_id');
    expect(first.query).not.toContain('after_time');
    expect(first.params).toEqual({ ...range, limit: 500 });
    const cursor = cursorAfter('observations', [eventRow({ id: 'a' }), eventRow({ id: 'b' })])!;
    expect(cursor).toEqual({
      source: 'observations',
      startTime: '2026-11-01 10:00:00.000000',
      projectId: 'p',
      traceId: 't',
      id: 'b',
    });
    const next = batchQuery('observations', { ...range, projectId: 'p' }, cursor, 500);
    expect(next.query).toContain('FROM observations FINAL');
    expect(next.query).toContain('is_deleted = 0');
    expect(next.query).toContain('(start_time, project_id, trace_id, id) > (');
    expect(next.params).toMatchObject({
      project_id: 'p',
      after_id: 'b',
      after_trace: 't',
      after_project: 'p',
    });
    expect(cursorAfter('events', [])).toBeNull();
  });

  const change: CostChange = {
    projectId: 'p',
    traceId: 't',
    id: 's1',
    startTime: '2026-11-01 10:00:00.000000',
    modelId: 'v2',
    usage: { input: 100 },
    cost: { input: 1e-7, total: 1e-7 },
    tierId: '',
    tierName: '',
    totalCost: '0.000000100000',
  };
  it.each([
    ['events_full', 'lightweight', /^UPDATE events_full SET model_id = /],
    [
      'events_core',
      'mutation',
      /^ALTER TABLE events_core UPDATE model_id = .* SETTINGS mutations_sync = 2$/s,
    ],
    [
      'observations',
      'lightweight',
      /^ALTER TABLE observations UPDATE internal_model_id = .*total_cost = .*usage_pricing_tier_id/s,
    ],
    [
      'observations_batch_staging',
      'mutation',
      /^ALTER TABLE observations_batch_staging UPDATE (?!.*usage_pricing_tier).*total_cost = /s,
    ],
  ] as const)('update %s in the %s form', (table, form, shape) => {
    const s = updateStatement(table, form, { cluster: false, clusterName: '' }, [change]);
    expect(s.query).toMatch(shape);
    expect(s.query).toContain('empty(provided_cost_details)');
    // Costs as exact decimal text, never a float's rounding.
    expect(s.params['cost_values']).toEqual([['0.000000100000', '0.000000100000']]);
    expect(s.params).toMatchObject({ project_id: 'p', ids: ['s1'], trace_ids: ['t'], model_ids: ['v2'] });
  });
});
