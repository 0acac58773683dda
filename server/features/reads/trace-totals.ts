/**
 * A trace's total usage and cost, summed over its observations, which the reference shows on the
 * trace's root observation and in the trace view. Pure builder and mapper.
 */
import { TOTAL_COST } from './events-columns.ts';
import { num, numberMap } from './row-values.ts';
import { Params, type Query } from './sql.ts';

type Row = Record<string, unknown>;

export interface TraceTotals {
  /** Usage per key (input, output, total, ...), summed over the trace's observations. */
  usageDetails: Record<string, number>;
  /** Null when no observation of the trace has a cost. */
  totalCost: number | null;
}

export function buildTraceTotals(projectId: string, traceIds: string[]): Query {
  const p = new Params();
  const sql = [
    'SELECT trace_id, sumMap(usage_details) AS usage_details,',
    `  sum(${TOTAL_COST}) AS total_cost, countIf(length(cost_details) > 0) AS priced`,
    'FROM events_core FINAL',
    `WHERE project_id = ${p.str(projectId)} AND trace_id IN ${p.strs(traceIds)}`,
    'GROUP BY trace_id',
  ].join('\n');
  return { sql, params: p.values };
}

/** Totals by trace id. */
export function indexTraceTotals(rows: Row[]): Map<string, TraceTotals> {
  return new Map(
    rows.map((r) => [
      String(r['trace_id']),
      {
        usageDetails: numberMap(r['usage_details']),
        totalCost: (num(r['priced']) ?? 0) > 0 ? num(r['total_cost']) : null,
      },
    ]),
  );
}

/**
 * Whether an observation's cost is the one the SDK sent or one computed from a model definition's
 * prices; null when it has none.
 */
export function costSource(
  costDetails: Record<string, number>,
  providedCostDetails: Record<string, number>,
): 'sent' | 'computed' | null {
  if (Object.keys(costDetails).length === 0) return null;
  return Object.keys(providedCostDetails).length > 0 ? 'sent' : 'computed';
}
