/**
 * The structured filter language of the public read APIs (`filter=[{type, column, operator,
 * value, key?}]`) compiled to SQL conditions over a fixed table of column expressions. Values are
 * always bound parameters; a column or operator outside the table is a 400, never SQL text.
 */
import { z } from 'zod';
import { BadRequest } from '../../kernel/errors.ts';
import { own } from './lookup.ts';
import type { Params } from './sql.ts';

export const filterCondition = z.object({
  type: z.enum([
    'datetime',
    'string',
    'number',
    'stringOptions',
    'categoryOptions',
    'arrayOptions',
    'stringObject',
    'numberObject',
    'boolean',
    'null',
  ]),
  column: z.string().min(1),
  operator: z.string().min(1),
  value: z.unknown().optional(),
  key: z.string().optional(),
});
export type FilterCondition = z.infer<typeof filterCondition>;
export const filterList = z.array(filterCondition);

/** How one API column reads in SQL. */
export type ColumnKind =
  | 'string'
  | 'number'
  | 'datetime'
  | 'boolean'
  | 'array'
  /** Key-value pairs: `value(keyPlaceholder)` is the SQL of the value under that key. */
  | 'metadata'
  /** Long text with a full-text index on `lower(<expr>)` (`input`, `output`). */
  | 'text';

export interface ColumnSpec {
  expr: string;
  kind: ColumnKind;
  value?: (key: string) => string;
}

export type ColumnTable = Record<string, ColumnSpec>;

/** Per-query state the compiler shares with its caller. */
export interface CompileContext {
  params: Params;
  /** The text indexes exist: `matches` may use `hasAllTokens`, which needs `enable_full_text_index=1`. */
  textIndex: boolean;
  /** Set when a condition relies on a text index, so the caller sends the setting. */
  usedTextIndex?: boolean;
  /** Set when a condition reads a `text` column (callers pick the table holding full values). */
  readsText?: boolean;
}

/** Parses a query parameter holding JSON of `schema`; malformed input is a 400 naming `name` and the problem. */
export function parseJsonParam<T>(name: string, text: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new BadRequest(`${name}: not valid JSON`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new BadRequest(
      `${name}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}

/** Parses the JSON `filter` query parameter; absent or blank is no filter. */
export function parseFilterParam(text: string | undefined): FilterCondition[] {
  if (text === undefined || text.trim() === '') return [];
  return parseJsonParam('filter', text, filterList);
}

/**
 * Tokens as the index's `splitByNonAlpha` tokenizer cuts them (ASCII letters and digits; bytes
 * above ASCII count as token characters), lower-cased the way `lower()` does (ASCII only).
 */
export function textTokens(value: string): string[] {
  return value
    .split(/[^A-Za-z0-9\u0080-\u{10FFFF}]+/u)
    .filter((t) => t !== '')
    .map((t) => t.replace(/[A-Z]/g, (c) => c.toLowerCase()));
}

/**
 * `matches` on a long text column: the literal (case-insensitive) must occur, and each of its
 * tokens must be a whole token of the column. With the text index, `hasAllTokens` on the indexed
 * expression prunes granules; without it, `hasToken` per token gives the same answer by scanning.
 */
export function textMatch(expr: string, value: string, ctx: CompileContext): string {
  const tokens = textTokens(value);
  const literal = `positionCaseInsensitiveUTF8(${expr}, ${ctx.params.str(value)}) > 0`;
  if (tokens.length === 0) return literal;
  if (ctx.textIndex) {
    ctx.usedTextIndex = true;
    return `(hasAllTokens(lower(${expr}), ${ctx.params.strs(tokens)}) AND ${literal})`;
  }
  const each = tokens.map((t) => `hasToken(lower(${expr}), ${ctx.params.str(t)})`);
  return `(${[...each, literal].join(' AND ')})`;
}

/**
 * The UI's full-text search: `matches` on input or output (indexed) or on any metadata value
 * (scanned: the metadata text index is case-sensitive). Reads the full values, so the caller picks
 * `events_full`.
 */
export function fullTextMatch(value: string, ctx: CompileContext): string {
  ctx.readsText = true;
  const metadata = textMatch("arrayStringConcat(metadata_values, '\\n')", value, {
    ...ctx,
    textIndex: false,
  });
  return `(${textMatch('input', value, ctx)} OR ${textMatch('output', value, ctx)} OR ${metadata})`;
}

/** `matches` on a metadata value: case-sensitive literal with whole-token boundaries. */
function metadataMatch(valueExpr: string, value: string, ctx: CompileContext): string {
  const tokens = value.split(/[^A-Za-z0-9\u0080-\u{10FFFF}]+/u).filter((t) => t !== '');
  const parts = tokens.map((t) => `hasToken(${valueExpr}, ${ctx.params.str(t)})`);
  parts.push(`position(${valueExpr}, ${ctx.params.str(value)}) > 0`);
  return `(${parts.join(' AND ')})`;
}

const CMP = new Set(['>', '<', '>=', '<=']);
const NUM_CMP = new Set(['=', '>', '<', '>=', '<=']);

function want<T>(ok: boolean, value: T, what: string): T {
  if (!ok) throw new BadRequest(what);
  return value;
}

const stringValue = (value: unknown, column: string): string =>
  want(typeof value === 'string', value as string, `filter ${column}: value must be a string`);

function stringOp(expr: string, op: string, value: unknown, p: Params, column: string): string {
  const v = stringValue(value, column);
  switch (op) {
    case '=':
      return `${expr} = ${p.str(v)}`;
    case 'contains':
      return `position(${expr}, ${p.str(v)}) > 0`;
    case 'does not contain':
      return `position(${expr}, ${p.str(v)}) = 0`;
    case 'starts with':
      return `startsWith(${expr}, ${p.str(v)})`;
    case 'ends with':
      return `endsWith(${expr}, ${p.str(v)})`;
    default:
      throw new BadRequest(`filter ${column}: operator ${op} is not supported for type string`);
  }
}

function stringList(value: unknown, column: string): string[] {
  const ok = Array.isArray(value) && value.every((x) => typeof x === 'string');
  return want(ok, value as string[], `filter ${column}: value must be an array of strings`);
}

/** One condition -> SQL. */
export function compileCondition(f: FilterCondition, columns: ColumnTable, ctx: CompileContext): string {
  const spec = own(columns, f.column);
  if (!spec) throw new BadRequest(`filter: unknown column ${f.column}`);
  const p = ctx.params;
  const { expr } = spec;
  const op = f.operator;
  const bad = () => new BadRequest(`filter ${f.column}: operator ${op} is not supported for type ${f.type}`);
  if (spec.kind === 'text') ctx.readsText = true;

  switch (f.type) {
    case 'datetime': {
      if (!CMP.has(op)) throw bad();
      const v = want(
        typeof f.value === 'string',
        f.value as string,
        `filter ${f.column}: value must be a datetime`,
      );
      try {
        return `${expr} ${op} ${p.time(v)}`;
      } catch {
        throw new BadRequest(`filter ${f.column}: invalid datetime ${v}`);
      }
    }
    case 'string': {
      if (spec.kind === 'metadata')
        throw new BadRequest(`filter ${f.column}: use type stringObject with a key`);
      if (op === 'matches') {
        if (spec.kind !== 'text')
          throw new BadRequest(`filter ${f.column}: matches is only supported on input, output and metadata`);
        return textMatch(expr, stringValue(f.value, f.column), ctx);
      }
      return stringOp(expr, op, f.value, p, f.column);
    }
    case 'stringOptions':
    case 'categoryOptions': {
      const target = spec.kind === 'metadata' ? metadataValue(f, spec, p) : expr;
      const vs = stringList(f.value, f.column);
      if (op === 'any of') return `${target} IN ${p.strs(vs)}`;
      if (op === 'none of') return `${target} NOT IN ${p.strs(vs)}`;
      throw bad();
    }
    case 'arrayOptions': {
      if (spec.kind !== 'array') throw new BadRequest(`filter ${f.column}: not an array column`);
      const vs = stringList(f.value, f.column);
      if (op === 'any of') return `hasAny(${expr}, ${p.strs(vs)})`;
      if (op === 'none of') return `NOT hasAny(${expr}, ${p.strs(vs)})`;
      if (op === 'all of') return `hasAll(${expr}, ${p.strs(vs)})`;
      throw bad();
    }
    case 'number': {
      if (!NUM_CMP.has(op)) throw bad();
      const v = want(
        typeof f.value === 'number' && Number.isFinite(f.value),
        f.value as number,
        `filter ${f.column}: value must be a number`,
      );
      return `${expr} ${op} ${p.num(v)}`;
    }
    case 'stringObject': {
      if (spec.kind !== 'metadata')
        throw new BadRequest(`filter ${f.column}: stringObject needs a key-value column`);
      const target = metadataValue(f, spec, p);
      if (op === 'matches') {
        return metadataMatch(target, stringValue(f.value, f.column), ctx);
      }
      return stringOp(target, op, f.value, p, f.column);
    }
    case 'numberObject': {
      if (spec.kind !== 'metadata')
        throw new BadRequest(`filter ${f.column}: numberObject needs a key-value column`);
      if (!NUM_CMP.has(op)) throw bad();
      const v = want(
        typeof f.value === 'number',
        f.value as number,
        `filter ${f.column}: value must be a number`,
      );
      return `toFloat64OrNull(${metadataValue(f, spec, p)}) ${op} ${p.num(v)}`;
    }
    case 'boolean': {
      const v = want(
        typeof f.value === 'boolean',
        f.value as boolean,
        `filter ${f.column}: value must be true or false`,
      );
      if (op !== '=' && op !== '<>') throw bad();
      return `toUInt8(${expr}) ${op === '=' ? '=' : '!='} ${p.add(v ? 1 : 0, 'UInt32')}`;
    }
    case 'null': {
      const isEmpty =
        spec.kind === 'string' || spec.kind === 'text'
          ? `(isNull(${expr}) OR ${expr} = '')`
          : `isNull(${expr})`;
      if (op === 'is null') return isEmpty;
      if (op === 'is not null') return `NOT ${isEmpty}`;
      throw bad();
    }
  }
}

function metadataValue(f: FilterCondition, spec: ColumnSpec, p: Params): string {
  if (!f.key) throw new BadRequest(`filter ${f.column}: key is required`);
  return spec.value!(p.str(f.key));
}

/** All conditions, AND-ed by the caller. */
export function compileFilters(
  filters: FilterCondition[],
  columns: ColumnTable,
  ctx: CompileContext,
): string[] {
  return filters.map((f) => compileCondition(f, columns, ctx));
}
