/** Short, stable content hashes for Job names and config-hash annotations (pure computation). */
import { createHash } from 'node:crypto';

/** JSON with sorted object keys, so equal values always hash alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** Hex SHA-256 of the canonical JSON, cut to `length` characters (lowercase, DNS-label safe). */
export function shortHash(value: unknown, length = 8): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, length);
}
