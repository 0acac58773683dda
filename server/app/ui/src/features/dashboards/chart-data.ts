/**
 * Metrics rows reshaped for drawing: time series (one aligned series per dimension value and
 * metric) and categories (one row per dimension value). Output keys are the metrics API's:
 * dimension fields, `time_dimension`, `<aggregation>_<measure>`; a series' label names its metric
 * as a reader does (metric-names.ts). Pure.
 */
import type { WidgetDefinition } from '../../../../../features/dashboards/model.ts';
import { metricNames } from './metric-names.ts';

type Row = Record<string, unknown>;

export const metricKeys = (w: Pick<WidgetDefinition, 'metrics'>): string[] =>
  w.metrics.map((m) => `${m.agg}_${m.measure}`);

const num = (v: unknown): number | null => {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};

/** The label of a row's dimension values; `(none)` for an empty value. */
export function labelOf(row: Row, w: Pick<WidgetDefinition, 'dimensions'>): string {
  if (w.dimensions.length === 0) return 'all';
  return w.dimensions.map((d) => String(row[d.field] ?? '') || '(none)').join(' / ');
}

export interface TimeSeries {
  /** Bucket starts, seconds since the epoch, ascending. */
  x: number[];
  /** `key`: the metric's key in the rows (its unit follows from it); `label`: what the reader sees. */
  series: { key: string; label: string; values: (number | null)[] }[];
}

export function timeSeriesOf(
  rows: Row[],
  w: Pick<WidgetDefinition, 'dimensions' | 'metrics' | 'view' | 'filters'>,
): TimeSeries {
  const keys = metricKeys(w);
  const names = metricNames(w);
  const x = [...new Set(rows.map((r) => Date.parse(String(r['time_dimension'])) / 1000))]
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const at = new Map(x.map((t, i) => [t, i]));
  const series = new Map<string, TimeSeries['series'][number]>();
  for (const r of rows) {
    const i = at.get(Date.parse(String(r['time_dimension'])) / 1000);
    if (i === undefined) continue;
    keys.forEach((key, k) => {
      const group = w.dimensions.length > 0 ? labelOf(r, w) : undefined;
      const id = `${group ?? ''}\u0000${key}`;
      let s = series.get(id);
      if (!s) {
        const label = group === undefined ? names[k]! : `${group} · ${names[k]}`;
        s = { key, label, values: x.map(() => null) };
        series.set(id, s);
      }
      s.values[i] = num(r[key]);
    });
  }
  return { x, series: [...series.values()] };
}

export interface Category {
  label: string;
  values: (number | null)[];
}

export function categoriesOf(rows: Row[], w: Pick<WidgetDefinition, 'dimensions' | 'metrics'>): Category[] {
  const keys = metricKeys(w);
  return rows.map((r) => ({ label: labelOf(r, w), values: keys.map((k) => num(r[k])) }));
}

/** A histogram metric's `[lower, upper, height]` buckets as categories. */
export function histogramOf(rows: Row[], key: string): Category[] {
  const buckets = rows[0]?.[key];
  if (!Array.isArray(buckets)) return [];
  return buckets.map((b) => {
    const [lo, hi, h] = b as [number, number, number];
    return { label: `${formatValue(key, lo)} – ${formatValue(key, hi)}`, values: [num(h)] };
  });
}

/** A value as the metric reads: dollars for costs, milliseconds for latencies, else a number. */
export function formatValue(key: string, v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (/cost/i.test(key)) {
    if (v === 0) return '$0';
    return Math.abs(v) >= 0.01 ? `$${v.toFixed(2)}` : `$${v.toPrecision(3)}`;
  }
  const text = Number.isInteger(v)
    ? v.toLocaleString('en-US')
    : v.toLocaleString('en-US', { maximumSignificantDigits: 4 });
  return /latency|timeToFirstToken/i.test(key) ? `${text} ms` : text;
}
