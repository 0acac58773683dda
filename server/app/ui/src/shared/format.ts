/** How the table shows values: latency, cost, tokens, times, score values, time ranges. Pure. */
import { durationText } from '../../../../contract/duration.ts';

/** Seconds as `850ms`, `2.35s`, `3m 05s`; empty when unknown. */
export function formatLatency(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '';
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  if (seconds < 60) return `${seconds.toFixed(2)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m ${String(Math.round(seconds - m * 60)).padStart(2, '0')}s`;
}

/** A duration the API gives in seconds (`3600s`) as an admin writes it (`1h`, `1h30m`, `45s`). */
export function formatSeconds(text: string): string {
  const m = /^(\d+)s$/.exec(text);
  return m ? durationText(Number(m[1])) : text;
}

/** US dollars with enough digits to see a fraction of a cent: `$0.000123`, `$1.23`. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return '';
  if (usd === 0) return '$0';
  if (Math.abs(usd) >= 0.01) return `$${usd.toFixed(2)}`;
  return `$${usd.toPrecision(3).replace(/0+$/, '')}`;
}

/** Usage as `input → output (Σ total)`; the total is the `total` entry or the sum of the entries. */
export function formatTokens(usage: Record<string, number> | null | undefined): string {
  if (!usage) return '';
  const entries = Object.entries(usage);
  if (entries.length === 0) return '';
  const sum = (part: string) =>
    entries.filter(([k]) => k.toLowerCase().includes(part)).reduce((a, [, v]) => a + v, 0);
  const total = usage['total'] ?? entries.reduce((a, [, v]) => a + v, 0);
  return `${sum('input')} → ${sum('output')} (Σ ${total})`;
}

/** An ISO timestamp as `YYYY-MM-DD hh:mm:ss.mmm` in UTC. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const m = iso.match(/^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d{1,3})?/);
  return m ? `${m[1]} ${m[2]}${m[3] ?? ''}` : iso;
}

export function formatScore(value: number | boolean | string): string {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(2);
  return String(value);
}

export const TIME_RANGES = {
  '15m': 15 * 60_000,
  '1h': 3600_000,
  '24h': 24 * 3600_000,
  '7d': 7 * 24 * 3600_000,
  '30d': 30 * 24 * 3600_000,
  all: undefined,
} as const;
export type TimeRange = keyof typeof TIME_RANGES;

/** The start-time bounds of a preset range ending now. */
export function rangeBounds(range: TimeRange, now: number): { fromStartTime?: string } {
  const span = TIME_RANGES[range];
  return span === undefined ? {} : { fromStartTime: new Date(now - span).toISOString() };
}
