/**
 * The one duration grammar of the API, the CRD, the worker's `?since=` and the CLI's `--since`:
 * one or more `<digits><unit>` groups, units s, m, h, d ("90s", "15m", "24h", "7d", "1h30m").
 * Pure: no I/O.
 */

/** The grammar as a regular expression (the CRD's OpenAPI `pattern`). */
export const DURATION_PATTERN = '^([0-9]{1,6}(s|m|h|d))+$';

/** What a usage or validation message shows as examples. */
export const DURATION_EXAMPLES = '90s, 15m, 24h, 7d or 1h30m';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const WHOLE = new RegExp(DURATION_PATTERN);

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/([0-9]+)(s|m|h|d)/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms;
}

/**
 * Whole seconds in the grammar's units, largest first ("1h30m", "0s" for none), at most `most` of
 * them (the rest left out, not rounded).
 */
export function durationText(seconds: number, most = 4): string {
  let rest = seconds;
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.slice(0, most).join('') || '0s';
}

/** A compact human form for messages ("2d3h", "45m", "12s"): the two largest units. */
export const formatDuration = (ms: number): string => durationText(Math.max(0, Math.ceil(ms / 1000)), 2);
