/**
 * Where a full-text search matched a row, as a short excerpt with the match marked: the UI shows
 * it under the row. The match is the search text, case-insensitively, in input, output or a
 * metadata value (the order the search tries them). Pure.
 */
export interface Snippet {
  field: string;
  before: string;
  match: string;
  after: string;
}

const RADIUS = 60;

export function snippetOf(needle: string, fields: [string, string][]): Snippet | undefined {
  const n = needle.trim().toLowerCase();
  if (n === '') return undefined;
  for (const [field, text] of fields) {
    // toLowerCase can change lengths outside ASCII; search a copy lowered per code unit position.
    const lower = text.toLowerCase();
    const at = lower.length === text.length ? lower.indexOf(n) : -1;
    if (at < 0) continue;
    const start = Math.max(0, at - RADIUS);
    const end = Math.min(text.length, at + n.length + RADIUS);
    return {
      field,
      before: (start > 0 ? '…' : '') + text.slice(start, at),
      match: text.slice(at, at + n.length),
      after: text.slice(at + n.length, end) + (end < text.length ? '…' : ''),
    };
  }
  return undefined;
}
