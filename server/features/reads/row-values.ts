/**
 * The analytics store's row values as the API shows them: its timestamps as ISO-8601, its empty
 * strings as absent values, its number maps, metadata and JSON text decoded. Pure: no I/O.
 */

/** The store's `YYYY-MM-DD hh:mm:ss[.f]` (UTC) -> ISO-8601 with milliseconds; null stays null. */
export function toIso(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  const text = String(value);
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00.000Z`;
  const m = text.match(/^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?/);
  if (!m) return text;
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
}

/** Empty strings of the events tables are absent values in the API. */
export const orNull = (v: unknown): string | null =>
  v === null || v === undefined || v === '' ? null : String(v);

export const num = (v: unknown): number | null => {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};

/** An events-table row's span as every API shape of it starts: its id, its trace and its times. */
export const spanOf = (r: Record<string, unknown>) => ({
  id: r['span_id'],
  traceId: r['trace_id'],
  startTime: toIso(r['start_time']),
  endTime: toIso(r['end_time']),
});

/**
 * A row in an API shape of field groups: `base`, then the fields of each group the request asked
 * for, in the order `groups` lists them (a response's keys keep one order whatever was asked).
 */
export function withFieldGroups<G extends string>(
  base: Record<string, unknown>,
  asked: Set<G>,
  groups: Partial<Record<G, () => Record<string, unknown>>>,
): Record<string, unknown> {
  for (const [group, fields] of Object.entries(groups) as [G, () => Record<string, unknown>][]) {
    if (asked.has(group)) Object.assign(base, fields());
  }
  return base;
}

/** A map of numbers as the store returns it (numbers may arrive as strings). */
export function numberMap(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out[k] = Number(x);
  return out;
}

/** Parallel name/value arrays (the events tables' metadata) -> object, values parsed when JSON. */
export function zipMetadata(names: unknown, values: unknown): Record<string, unknown> {
  const ns = Array.isArray(names) ? (names as string[]) : [];
  const vs = Array.isArray(values) ? (values as string[]) : [];
  return Object.fromEntries(ns.map((n, i) => [n, parseMaybeJson(vs[i] ?? '')]));
}

/** The legacy tables' metadata map -> object, values parsed when JSON. */
export const metadataObject = (m: unknown): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries((m ?? {}) as Record<string, string>).map(([k, v]) => [k, parseMaybeJson(v)]),
  );

/** JSON text stored as a string: objects and arrays come back as values; other text stays text. */
export function parseMaybeJson(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? null;
  const t = v.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return JSON.parse(t);
    } catch {
      return v;
    }
  }
  return v;
}
