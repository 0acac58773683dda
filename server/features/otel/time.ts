/**
 * Timestamps: OTLP carries nanoseconds; storage is DateTime64(6), so values are converted to ISO-8601 strings
 * with exactly six fractional digits (`2024-05-01T12:00:00.123456Z`). BigInt keeps the microseconds that a
 * JS Date (milliseconds) would drop.
 */
import { timestampInRange } from '../../kernel/iso-datetime.ts';

/** ISO string with microsecond precision for a count of microseconds since the epoch. */
export function microsToIso(micros: bigint): string {
  // Floored, so that times before 1970 (negative) keep a sub-millisecond part in 0..999.
  const subMillis = Number(((micros % 1000n) + 1000n) % 1000n);
  const millis = (micros - BigInt(subMillis)) / 1000n;
  const base = new Date(Number(millis)).toISOString(); // ends in ".mmmZ"
  return `${base.slice(0, -1)}${String(subMillis).padStart(3, '0')}Z`;
}

/** Microseconds since the epoch for an OTLP nanosecond string; null when absent, zero, negative or malformed. */
export function nanosToMicros(nanos: string | undefined): bigint | null {
  if (nanos === undefined || !/^\d+$/.test(nanos)) return null;
  const value = BigInt(nanos);
  if (value === 0n) return null; // proto default: the field was not set
  const micros = value / 1000n;
  return micros <= MAX_MICROS ? micros : null;
}

/** Latest instant a JS Date can represent, in microseconds. */
const MAX_MICROS = 8_640_000_000_000_000_000n;

const ISO_DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(?::(\d{2}))?(?:[.,](\d+))?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Microseconds since the epoch for an ISO-8601 date-time; null if it is not one. A missing offset means UTC
 * (naive Python datetimes), not the server's local zone, so the result does not depend on where we run.
 */
export function isoToMicros(value: string): bigint | null {
  const m = ISO_DATE_TIME.exec(value.trim());
  if (!m) return null;
  const [, date, hm, sec = '00', fraction = '', rawOffset = 'Z'] = m;
  let offset = rawOffset.toUpperCase();
  if (offset !== 'Z' && offset.length === 3) offset = `${offset}:00`;
  else if (offset !== 'Z' && !offset.includes(':')) offset = `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const digits = fraction.padEnd(6, '0').slice(0, 6);
  const millis = Date.parse(`${date}T${hm}:${sec}.${digits.slice(0, 3)}${offset}`);
  if (Number.isNaN(millis)) return null;
  return BigInt(millis) * 1000n + BigInt(digits.slice(3));
}

/** ISO string with microseconds for an ISO-8601 date-time within the stored range, or null. */
export function normalizeIso(value: string): string | null {
  const micros = isoToMicros(value);
  return micros === null || !timestampInRange(Number(micros / 1000n)) ? null : microsToIso(micros);
}
