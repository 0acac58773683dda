/**
 * Date-times as the public API accepts them: ISO 8601 as the SDKs send it (`toISOString()`,
 * `datetime.isoformat()`, a date alone), and not what `Date.parse` merely tolerates (`0.5`,
 * `May 5 2024`), which reached the stores as garbage or as a 500. Within the range the analytics
 * store keeps (below). A time without an offset means UTC.
 */
import { z } from 'zod';

/**
 * Timestamps the analytics store keeps as sent: DateTime64's range is 1900-01-01 to 2299-12-31; a
 * time outside would be stored as another date.
 */
export const MIN_TIMESTAMP_MS = Date.UTC(1900, 0, 1);
export const MAX_TIMESTAMP_MS = Date.UTC(2300, 0, 1) - 1;

/** Epoch milliseconds within the stored range. */
export function timestampInRange(ms: number): boolean {
  return Number.isFinite(ms) && ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS;
}

export const TIMESTAMP_RANGE = '1900-01-01T00:00:00Z to 2299-12-31T23:59:59.999Z';

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** Epoch milliseconds of an ISO 8601 date-time in the stored range, else null. */
export function parseIsoDateTime(text: string): number | null {
  const m = ISO_8601.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const offset = /^[+-]\d{2}$/.test(zone) ? `${zone}:00` : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(
    `${y}-${mo}-${d}T${h}:${mi}:${s}.${frac.padEnd(3, '0').slice(0, 3)}${offset.toUpperCase()}`,
  );
  return Number.isNaN(ms) || !timestampInRange(ms) ? null : ms;
}

export const ISO_DATETIME_MESSAGE = `expected an ISO 8601 date-time within ${TIMESTAMP_RANGE}`;

/** A string that `parseIsoDateTime` accepts; the error names the field through its path. */
export const isoDateTime = () =>
  z.string().refine((s) => parseIsoDateTime(s) !== null, { message: ISO_DATETIME_MESSAGE });
