/** Timestamps in the analytics store's text form: `YYYY-MM-DD hh:mm:ss.ffffff`, UTC. */

/**
 * The last epoch ms formatted, at each precision: a commit stamps each of its rows with the same
 * time (created, updated, version), which formatting anew cost a tenth of the drain's work.
 */
const lastFormatted = { 3: { ms: Number.NaN, text: '' }, 6: { ms: Number.NaN, text: '' } };

/** Formats an ISO string (microseconds kept when present), a Date or epoch ms. */
export function chTime(value: string | Date | number, digits: 3 | 6 = 3): string {
  if (typeof value === 'number') {
    const last = lastFormatted[digits];
    if (value !== last.ms) {
      last.text = formatDate(new Date(value), value, digits);
      last.ms = value;
    }
    return last.text;
  }
  if (typeof value === 'string') {
    const m = value.match(/^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/);
    if (m && (m[4] === undefined || m[4] === 'Z' || /^[+-]00:?00$/.test(m[4]))) {
      return `${m[1]} ${m[2]}.${(m[3] ?? '').padEnd(6, '0').slice(0, digits)}`;
    }
  }
  return formatDate(value instanceof Date ? value : new Date(value), value, digits);
}

function formatDate(d: Date, value: string | Date | number, digits: 3 | 6): string {
  if (Number.isNaN(d.getTime())) throw new RangeError(`invalid timestamp: ${String(value)}`);
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${iso.slice(20, 23).padEnd(digits, '0')}`;
}

/** Parses the store's text form back to epoch milliseconds. */
export function fromChTime(value: string): number {
  return Date.parse(`${value.replace(' ', 'T')}Z`);
}

/** The store's text form as ISO text with every digit it has (a Date would keep milliseconds only). */
export function chTimeToIso(value: string): string {
  return `${value.replace(' ', 'T')}Z`;
}
