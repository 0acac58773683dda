/**
 * Compares the rows of `events_full` FINAL with the model's expectation, row by row and field by
 * field, and checks that every trace has exactly one root. Returns one line per difference. Pure.
 */
import type { EventFields, Expectation } from './model.ts';

export interface StoreRow extends Omit<EventFields, 'metadata' | 'start_us'> {
  trace_id: string;
  span_id: string;
  metadata: Record<string, string>;
  start_us: number;
}

const FIELDS: (keyof EventFields)[] = [
  'parent_span_id',
  'type',
  'name',
  'trace_name',
  'user_id',
  'session_id',
  'tags',
  'release',
  'version',
  'environment',
  'public',
  'bookmarked',
  'level',
  'status_message',
  'provided_model_name',
  'model_id',
  'usage_details',
  'cost_details',
  'metadata',
  'start_us',
  'experiment_id',
  'experiment_name',
  'experiment_item_id',
  'experiment_dataset_id',
  'experiment_item_root_span_id',
];

/** The fields of `row` that differ from `want`, as `field: store != model`. */
export function fieldDifferences(row: StoreRow, want: EventFields): string[] {
  const out: string[] = [];
  for (const f of FIELDS) {
    const expected = want[f];
    const actual = row[f];
    if (expected === undefined) continue;
    if (!sameValue(f, actual, expected)) out.push(`${f}: store ${show(actual)} != model ${show(expected)}`);
  }
  return out;
}

function sameValue(field: keyof EventFields, actual: unknown, expected: unknown): boolean {
  if (field === 'experiment_id' && expected === '*') return typeof actual === 'string' && actual !== '';
  if (field === 'tags')
    return show([...(actual as string[])].sort()) === show([...(expected as string[])].sort());
  if (field === 'usage_details' || field === 'cost_details') {
    const a = actual as Record<string, number>;
    const e = expected as Record<string, number>;
    const keys = (o: object) => Object.keys(o).sort().join(',');
    // Costs are stored as Decimal(18, 12): equal to 12 places.
    return keys(a) === keys(e) && Object.entries(e).every(([k, v]) => Math.abs(a[k]! - v) < 1e-11);
  }
  if (field === 'metadata') {
    const a = actual as Record<string, string>;
    const e = expected as Record<string, string>;
    const keys = (o: object) => Object.keys(o).sort().join(',');
    // A string value may be kept as is or JSON-encoded; the spec does not say which.
    return (
      keys(a) === keys(e) && Object.entries(e).every(([k, v]) => a[k] === v || a[k] === JSON.stringify(v))
    );
  }
  return show(actual) === show(expected);
}

const show = (v: unknown) => JSON.stringify(v);

export function compareEvents(expectation: Expectation, store: StoreRow[] | null): string[] {
  const diffs: string[] = [];
  if (!expectation.eventsTablesExist) {
    if (store !== null) diffs.push(`events_full exists on release 3 (${store.length} rows)`);
    return diffs;
  }
  if (store === null) return ['events_full does not exist'];

  const key = (traceId: string, spanId: string) => `${traceId}/${spanId}`;
  const byKey = new Map<string, StoreRow[]>();
  for (const r of store) {
    const k = key(r.trace_id, r.span_id);
    byKey.set(k, [...(byKey.get(k) ?? []), r]);
  }
  for (const [k, rows] of byKey) {
    if (rows.length > 1) {
      diffs.push(
        `duplicate ${k}: ${rows.length} rows (start_time ${rows.map((r) => r.start_us).join(', ')}; parents ${rows.map((r) => show(r.parent_span_id)).join(', ')})`,
      );
    }
  }
  const expected = new Set<string>();
  for (const e of expectation.rows) {
    const k = key(e.traceId, e.spanId);
    expected.add(k);
    const rows = byKey.get(k);
    if (!rows) {
      if (e.required) diffs.push(`missing ${k}`);
      continue;
    }
    for (const row of rows) {
      const candidateDiffs = e.candidates.map((c) => fieldDifferences(row, c));
      if (candidateDiffs.some((d) => d.length === 0)) continue;
      const closest = candidateDiffs.reduce((a, b) => (b.length < a.length ? b : a));
      diffs.push(`differs ${k}: ${closest.join('; ')}`);
    }
  }
  for (const k of byKey.keys()) if (!expected.has(k)) diffs.push(`unexpected ${k}`);

  // One root per trace: never two; and one wherever the model requires a root row.
  const rootRequired = new Set(expectation.rootRequired);
  const roots = new Map<string, string[]>();
  for (const r of store) {
    if (!roots.has(r.trace_id)) roots.set(r.trace_id, []);
    if (r.parent_span_id === '') roots.get(r.trace_id)!.push(r.span_id);
  }
  for (const traceId of rootRequired) if (!roots.has(traceId)) roots.set(traceId, []);
  for (const [traceId, ids] of roots) {
    if (ids.length > 1 || (ids.length === 0 && rootRequired.has(traceId))) {
      diffs.push(`trace ${traceId} has ${ids.length} roots (${ids.join(', ') || 'none'})`);
    }
  }
  return diffs;
}
