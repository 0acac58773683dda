/**
 * The filter search bar's text language, parsed to the structured filters of the Observations API
 * v2 (`[{type, column, operator, value, key?}]`), which the server compiles with the API's own
 * compiler. Conditions are joined by AND (the API ANDs its filters):
 *
 *   isRootObservation = true AND latency > 2.5 AND name contains "chat"
 *   tags any of ["prod", "eu"] AND metadata.customer = "acme" AND startTime >= 2026-01-01T00:00:00Z
 *
 * Columns and their kinds come from the server (the API's column table). Pure.
 */

export type ColumnKind = 'string' | 'number' | 'datetime' | 'boolean' | 'array' | 'metadata' | 'text';

export interface FilterCondition {
  type: string;
  column: string;
  operator: string;
  value?: unknown;
  key?: string;
}

export type ParseResult = { ok: true; filters: FilterCondition[] } | { ok: false; error: string; at: number };

type Value = string | number | boolean | string[];
type Token =
  | { kind: 'word'; text: string; at: number }
  | { kind: 'string'; text: string; at: number }
  | { kind: 'op'; text: string; at: number }
  | { kind: 'punct'; text: string; at: number };

/** A problem in the text, at a character offset. */
class FilterSyntaxError extends Error {
  readonly at: number;
  constructor(message: string, at: number) {
    super(message);
    this.at = at;
  }
}

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw new FilterSyntaxError('unterminated string', i);
      let value: string;
      try {
        value = JSON.parse(text.slice(i, j + 1)) as string;
      } catch {
        throw new FilterSyntaxError('invalid string escape', i);
      }
      out.push({ kind: 'string', text: value, at: i });
      i = j + 1;
    } else if ('[],'.includes(ch)) {
      out.push({ kind: 'punct', text: ch, at: i });
      i++;
    } else if ('=!<>'.includes(ch)) {
      const two = text.slice(i, i + 2);
      const op = ['>=', '<=', '!=', '<>'].includes(two) ? two : ch;
      if (op === '!') throw new FilterSyntaxError('"!" must be followed by "="', i);
      out.push({ kind: 'op', text: op, at: i });
      i += op.length;
    } else {
      let j = i;
      while (j < text.length && !/[\s"[\],=!<>]/.test(text[j]!)) j++;
      out.push({ kind: 'word', text: text.slice(i, j), at: i });
      i = j;
    }
  }
  return out;
}

/** Operators written as words, longest first so "is not null" wins over "is null". */
const WORD_OPERATORS = [
  'does not contain',
  'is not null',
  'starts with',
  'ends with',
  'any of',
  'none of',
  'all of',
  'is null',
  'contains',
  'matches',
];

const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

class Parser {
  #i = 0;
  readonly tokens: Token[];
  readonly end: number;
  constructor(tokens: Token[], end: number) {
    this.tokens = tokens;
    this.end = end;
  }

  peek(): Token | undefined {
    return this.tokens[this.#i];
  }
  next(what: string): Token {
    const t = this.tokens[this.#i++];
    if (!t) throw new FilterSyntaxError(`expected ${what}`, this.end);
    return t;
  }
  done(): boolean {
    return this.#i >= this.tokens.length;
  }

  operator(): { text: string; at: number } {
    const t = this.next('an operator');
    if (t.kind === 'op') return { text: t.text, at: t.at };
    for (const op of WORD_OPERATORS) {
      const words = op.split(' ');
      const slice = this.tokens.slice(this.#i - 1, this.#i - 1 + words.length);
      if (
        slice.length === words.length &&
        slice.every((s, k) => s.kind === 'word' && s.text.toLowerCase() === words[k])
      ) {
        this.#i += words.length - 1;
        return { text: op, at: t.at };
      }
    }
    throw new FilterSyntaxError(`unknown operator ${t.text}`, t.at);
  }

  value(): { value: Value; at: number; quoted: boolean } {
    const t = this.next('a value');
    if (t.kind === 'string') return { value: t.text, at: t.at, quoted: true };
    if (t.kind === 'word') {
      if (t.text === 'true' || t.text === 'false')
        return { value: t.text === 'true', at: t.at, quoted: false };
      if (NUMBER.test(t.text)) return { value: Number(t.text), at: t.at, quoted: false };
      return { value: t.text, at: t.at, quoted: false };
    }
    if (t.kind === 'punct' && t.text === '[') {
      const items: string[] = [];
      for (;;) {
        const item = this.next('a list item or "]"');
        if (item.kind === 'punct' && item.text === ']' && items.length === 0) break;
        if (item.kind !== 'string' && item.kind !== 'word')
          throw new FilterSyntaxError('expected a list item', item.at);
        items.push(item.text);
        const sep = this.next('"," or "]"');
        if (sep.kind === 'punct' && sep.text === ']') break;
        if (!(sep.kind === 'punct' && sep.text === ','))
          throw new FilterSyntaxError('expected "," or "]"', sep.at);
      }
      return { value: items, at: t.at, quoted: false };
    }
    throw new FilterSyntaxError(`expected a value, found ${t.text}`, t.at);
  }
}

const COMPARE = ['>', '<', '>=', '<='];
const STRING_OPS = ['=', 'contains', 'does not contain', 'starts with', 'ends with'];

function expectString(v: Value, at: number, column: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new FilterSyntaxError(`${column}: expected one value, not a list`, at);
}

function expectList(v: Value, at: number, column: string): string[] {
  if (Array.isArray(v)) return v;
  throw new FilterSyntaxError(`${column}: expected a list like ["a", "b"]`, at);
}

/** One `column op value` to its structured filter, by the column's kind. */
function condition(
  column: string,
  key: string | undefined,
  kind: ColumnKind,
  operator: { text: string; at: number },
  v: Value | undefined,
  at: number,
): FilterCondition {
  const op = operator.text;
  const unsupported = (allowed: string[]) =>
    new FilterSyntaxError(
      `${column}: operator ${op} is not supported on a ${kind} column (use ${allowed.join(', ')})`,
      operator.at,
    );
  if (op === 'is null' || op === 'is not null') {
    if (kind === 'array' || kind === 'metadata') throw unsupported(['any of', 'none of']);
    return { type: 'null', column, operator: op };
  }
  const value = v as Value;
  switch (kind) {
    case 'string':
    case 'text': {
      if (op === '!=' || op === '<>')
        return {
          type: 'stringOptions',
          column,
          operator: 'none of',
          value: [expectString(value, at, column)],
        };
      if (op === 'any of' || op === 'none of')
        return { type: 'stringOptions', column, operator: op, value: expectList(value, at, column) };
      const ops = kind === 'text' ? [...STRING_OPS, 'matches'] : STRING_OPS;
      if (!ops.includes(op)) throw unsupported([...ops, 'any of', 'none of', 'is null']);
      return { type: 'string', column, operator: op, value: expectString(value, at, column) };
    }
    case 'number': {
      if (!['=', ...COMPARE].includes(op)) throw unsupported(['=', ...COMPARE]);
      if (typeof value !== 'number') throw new FilterSyntaxError(`${column}: expected a number`, at);
      return { type: 'number', column, operator: op, value };
    }
    case 'datetime': {
      if (!COMPARE.includes(op)) throw unsupported(COMPARE);
      const text = expectString(value, at, column);
      if (Number.isNaN(Date.parse(text)))
        throw new FilterSyntaxError(`${column}: expected a date and time like 2026-01-31T12:00:00Z`, at);
      return { type: 'datetime', column, operator: op, value: text };
    }
    case 'boolean': {
      if (typeof value !== 'boolean') throw new FilterSyntaxError(`${column}: expected true or false`, at);
      if (op === '=') return { type: 'boolean', column, operator: '=', value };
      if (op === '!=' || op === '<>') return { type: 'boolean', column, operator: '<>', value };
      throw unsupported(['=', '!=']);
    }
    case 'array': {
      if (!['any of', 'none of', 'all of'].includes(op)) throw unsupported(['any of', 'none of', 'all of']);
      return { type: 'arrayOptions', column, operator: op, value: expectList(value, at, column) };
    }
    case 'metadata': {
      if (key === undefined || key === '')
        throw new FilterSyntaxError(`${column}: name the key, as ${column}.key`, at);
      if (op === 'any of' || op === 'none of')
        return { type: 'stringOptions', column, key, operator: op, value: expectList(value, at, column) };
      if (COMPARE.includes(op) || (op === '=' && typeof value === 'number')) {
        if (typeof value !== 'number') throw new FilterSyntaxError(`${column}.${key}: expected a number`, at);
        return { type: 'numberObject', column, key, operator: op, value };
      }
      if (![...STRING_OPS, 'matches'].includes(op)) throw unsupported([...STRING_OPS, 'matches', ...COMPARE]);
      return { type: 'stringObject', column, key, operator: op, value: expectString(value, at, column) };
    }
  }
}

export function parseFilterText(text: string, columns: Record<string, ColumnKind>): ParseResult {
  try {
    const p = new Parser(tokenize(text), text.length);
    const filters: FilterCondition[] = [];
    while (!p.done()) {
      if (filters.length > 0) {
        const and = p.next('AND');
        if (and.kind === 'word' && and.text.toLowerCase() === 'or') {
          throw new FilterSyntaxError('OR is not supported: conditions are joined by AND', and.at);
        }
        if (!(and.kind === 'word' && and.text.toLowerCase() === 'and'))
          throw new FilterSyntaxError(`expected AND, found ${and.text}`, and.at);
      }
      const col = p.next('a column');
      if (col.kind !== 'word') throw new FilterSyntaxError(`expected a column, found ${col.text}`, col.at);
      const dot = col.text.indexOf('.');
      const name = dot < 0 ? col.text : col.text.slice(0, dot);
      const key = dot < 0 ? undefined : col.text.slice(dot + 1);
      const kind = columns[name];
      if (!kind) throw new FilterSyntaxError(`unknown column ${name}`, col.at);
      if (key !== undefined && kind !== 'metadata')
        throw new FilterSyntaxError(`${name} has no keys`, col.at);
      const op = p.operator();
      const needsValue = op.text !== 'is null' && op.text !== 'is not null';
      const v = needsValue ? p.value() : undefined;
      filters.push(condition(name, key, kind, op, v?.value, v?.at ?? op.at));
    }
    return { ok: true, filters };
  } catch (err) {
    if (err instanceof FilterSyntaxError) return { ok: false, error: err.message, at: err.at };
    throw err;
  }
}

const quote = (s: string) => JSON.stringify(s);

/** Structured filters back to the bar's text (the inverse of `parseFilterText` on its output). */
export function formatFilters(filters: FilterCondition[]): string {
  return filters
    .map((f) => {
      const column = f.key === undefined ? f.column : `${f.column}.${f.key}`;
      if (f.type === 'null') return `${column} ${f.operator}`;
      const v = f.value;
      const value = Array.isArray(v)
        ? `[${v.map((x) => quote(String(x))).join(', ')}]`
        : typeof v === 'string'
          ? quote(v)
          : String(v);
      const op = f.type === 'boolean' && f.operator === '<>' ? '!=' : f.operator;
      return `${column} ${op} ${value}`;
    })
    .join(' AND ');
}
