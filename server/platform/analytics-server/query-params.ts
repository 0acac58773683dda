/**
 * Query parameters arrive over HTTP in ClickHouse's wire form (`param_x=...`): the text the server
 * hands to the type's "escaped" deserializer. chdb's bind path takes JS values instead and escapes
 * every string once more (backslashes doubled, quotes untouched), so the wire text cannot be passed
 * through as it is. This module turns wire text into the value whose re-escaping by chdb reads back
 * as the same value the server would have read:
 *
 * - scalar types (String, DateTime64, UUID, Nullable(String), ...): the escaped layer is undone and
 *   chdb re-applies it; `\N` becomes null, which chdb sends as `\N` again;
 * - composite types (Array, Tuple, Map, Nested): the server parses the text directly as quoted
 *   literals, with no escaped layer. Inside each quoted literal the escapes are decoded to raw
 *   characters (quotes doubled instead), so that chdb's single escaping pass yields exactly one
 *   escape level again.
 */

/** `{name:Type}` placeholders of a statement, by name. Later occurrences win (same as first here). */
export function placeholderTypes(sql: string): Map<string, string> {
  const types = new Map<string, string>();
  const re = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:/g;
  for (let m = re.exec(sql); m !== null; m = re.exec(sql)) {
    const end = typeEnd(sql, re.lastIndex);
    if (end < 0) continue;
    const name = m[1] as string;
    if (!types.has(name)) types.set(name, sql.slice(re.lastIndex, end).trim());
  }
  return types;
}

/** Index of the `}` closing a placeholder type that starts at `from`, skipping parentheses and quotes. */
function typeEnd(sql: string, from: number): number {
  let depth = 0;
  for (let i = from; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      i = skipQuoted(sql, i);
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '}' && depth === 0) return i;
    else if (c === '{') return -1;
  }
  return -1;
}

function skipQuoted(text: string, start: number): number {
  const q = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === q) return i;
  }
  return text.length;
}

const WRAPPERS = /^(?:Nullable|LowCardinality)\s*\(([\s\S]*)\)$/i;
const COMPOSITE = /^(?:Array|Tuple|Map|Nested)\s*\(/i;

export function isCompositeType(type: string): boolean {
  let t = type.trim();
  for (let m = WRAPPERS.exec(t); m !== null; m = WRAPPERS.exec(t)) t = (m[1] as string).trim();
  return COMPOSITE.test(t);
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '0': '\0',
};

/**
 * Decodes one backslash escape starting at `text[i] === '\\'`; returns the character(s) and the
 * index after the sequence. Same rules as ClickHouse's escape parser: `\xHH`, the C escapes, and any
 * other character standing for itself.
 */
function decodeEscape(text: string, i: number): [string, number] {
  const c = text[i + 1];
  if (c === undefined) return ['\\', i + 1];
  if (c === 'x' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 2, i + 4))) {
    return [String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 4), 16)), i + 4];
  }
  return [SIMPLE_ESCAPES[c] ?? c, i + 2];
}

/** Undoes the escaped (TSV) layer of a scalar parameter. */
export function unescapeScalar(text: string): string {
  if (!text.includes('\\')) return text;
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (text[i] === '\\') {
      const [ch, next] = decodeEscape(text, i);
      out += ch;
      i = next;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

/** Rewrites the quoted literals of a composite value so that they contain no backslash escapes. */
export function normalizeComposite(text: string): string {
  if (!/[\\\t\n\r]/.test(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (text[i] !== "'") {
      // Whitespace between elements is insignificant, and chdb would turn a raw one into an escape.
      const c = text[i] as string;
      out += c === '\t' || c === '\n' || c === '\r' ? ' ' : c;
      i++;
      continue;
    }
    out += "'";
    i++;
    while (i < text.length) {
      const c = text[i] as string;
      if (c === '\\') {
        const [ch, next] = decodeEscape(text, i);
        out += ch === "'" ? "''" : ch;
        i = next;
      } else if (c === "'") {
        // A doubled quote stays a doubled quote; a single one closes the literal.
        if (text[i + 1] === "'") {
          out += "''";
          i += 2;
        } else {
          out += "'";
          i++;
          break;
        }
      } else {
        out += c;
        i++;
      }
    }
  }
  return out;
}

/** Wire-form parameters (`param_` prefix removed) to the values chdb's bind path expects. */
export function toChdbParams(sql: string, wire: Record<string, string>): Record<string, string | null> {
  const types = placeholderTypes(sql);
  const out: Record<string, string | null> = {};
  for (const [name, text] of Object.entries(wire)) {
    const type = types.get(name);
    if (type !== undefined && isCompositeType(type)) out[name] = normalizeComposite(text);
    else out[name] = text === '\\N' ? null : unescapeScalar(text);
  }
  return out;
}
