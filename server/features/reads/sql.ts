/**
 * Building blocks for parameterized analytics queries. Every value that comes from a request is
 * bound as a ClickHouse query parameter (`{p0:String}`), never spliced into the SQL text; the only
 * text that varies is chosen from fixed tables of column expressions. Pure: no I/O.
 */

export type ParamType = 'String' | 'Float64' | 'Int64' | 'UInt32' | 'Array(String)' | 'Array(Float64)';

/** Collects bound values and hands out their placeholders. */
export class Params {
  readonly values: Record<string, unknown> = {};
  #next = 0;

  /** Binds `value` and returns its placeholder. */
  add(value: unknown, type: ParamType): string {
    const name = `p${this.#next++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }

  str(value: string): string {
    return this.add(value, 'String');
  }

  num(value: number): string {
    return this.add(value, 'Float64');
  }

  strs(values: string[]): string {
    return this.add(values, 'Array(String)');
  }

  /** A timestamp as DateTime64(6) in UTC; bound as text so both transports read it the same way. */
  time(iso: string): string {
    return `toDateTime64(${this.str(toChText(iso))}, 6, 'UTC')`;
  }
}

/**
 * The conditions of one WHERE, their values bound to `p`. The optional ones are added only when
 * the request gives them, so a builder states each filter once, in one line.
 */
export class Where {
  readonly p: Params;
  readonly #conditions: string[];

  constructor(p: Params, ...conditions: string[]) {
    this.p = p;
    this.#conditions = conditions;
  }

  /** A condition written out (its values already bound to `p`). */
  add(condition: string): this {
    this.#conditions.push(condition);
    return this;
  }

  /** `col = v`, when `v` is given. */
  eq(col: string, v: string | undefined): this {
    return v === undefined ? this : this.add(`${col} = ${this.p.str(v)}`);
  }

  /** `col IN vs`, when `vs` has values. */
  anyOf(col: string, vs: string[] | undefined): this {
    return vs && vs.length > 0 ? this.add(`${col} IN ${this.p.strs(vs)}`) : this;
  }

  /** `hasAll(col, vs)` (an array column holding every value), when `vs` has values. */
  hasAll(col: string, vs: string[] | undefined): this {
    return vs && vs.length > 0 ? this.add(`hasAll(${col}, ${this.p.strs(vs)})`) : this;
  }

  /** `from <= col < to`, each side when given. */
  range(col: string, from?: string, to?: string): this {
    if (from) this.add(`${col} >= ${this.p.time(from)}`);
    if (to) this.add(`${col} < ${this.p.time(to)}`);
    return this;
  }

  get size(): number {
    return this.#conditions.length;
  }

  /** The conditions joined by AND (on lines of their own by default). */
  sql(separator = '\n  AND '): string {
    return this.#conditions.join(separator);
  }
}

/** A statement with its parameters and the settings it needs. */
export interface Query {
  sql: string;
  params: Record<string, unknown>;
  settings?: Record<string, number | string>;
}

/** ISO-8601 (any offset) -> `YYYY-MM-DD hh:mm:ss.ffffff` in UTC. Throws RangeError when invalid. */
export function toChText(iso: string): string {
  const m = iso.match(/^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/);
  if (m && (m[4] === undefined || m[4] === 'Z' || /^[+-]00:?00$/.test(m[4]))) {
    return `${m[1]} ${m[2]}.${(m[3] ?? '').padEnd(6, '0').slice(0, 6)}`;
  }
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) throw new RangeError(`invalid timestamp: ${iso}`);
  const s = d.toISOString();
  return `${s.slice(0, 10)} ${s.slice(11, 23)}000`;
}

/** base64url(JSON) cursors: opaque to clients, validated on the way back in. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor(text: string): unknown {
  try {
    return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
