/**
 * The one owner of an embedded ClickHouse data directory (chdb). It executes statements the way a
 * ClickHouse server executes one HTTP request: settings, database and parameters apply to that
 * request only; row-format results stream block by block; inserts stream their payload.
 *
 * Isolation: every request runs on its own chdb connection to the same directory (opening one costs
 * about 0.1 ms). Settings are applied with `SET` on that connection, so nothing leaks into later
 * requests, and a `SET` sent as a statement is as short-lived as over HTTP without a session.
 *
 * Concurrency: native calls go through a FIFO gate one at a time, so at most one statement's result
 * is being materialized at any moment. A streamed result takes the gate once per chunk, so a slow or
 * idle reader never blocks other requests, and holds at most one chunk in memory.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { type ChdbQueryStream, drainPending, type RawInsertFormat, Session, type StreamChunk } from 'chdb';
import { toChdbParams } from './query-params.ts';

/** ClickHouse error codes raised by this layer itself (values as in ClickHouse's ErrorCodes.cpp). */
export const ErrorCode = {
  SYNTAX_ERROR: 62,
  BAD_ARGUMENTS: 36,
  NOT_IMPLEMENTED: 48,
  UNKNOWN_SETTING: 115,
  QUERY_IS_TOO_LARGE: 229,
  CANNOT_DECOMPRESS: 271,
  UNKNOWN_COMPRESSION_METHOD: 89,
  BAD_QUERY_PARAMETER: 457,
  AUTHENTICATION_FAILED: 516,
  STD_EXCEPTION: 1001,
} as const;

/** A failed statement in ClickHouse's terms: numeric code, symbolic name, message. */
export class EngineError extends Error {
  override name = 'EngineError';
  readonly code: number;
  readonly type: string;
  constructor(code: number, type: string, message: string) {
    super(message);
    this.code = code;
    this.type = type;
  }
}

const CODE_PREFIX = /^Code: (\d+)\. DB::Exception: /;
const TYPE_SUFFIX = /\(([A-Z][A-Z0-9_]{2,})\)\s*(?:\(version [^)]*\))?\.?\s*$/;

/** Normalizes whatever chdb threw into an EngineError carrying the engine's own text. */
export function toEngineError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  const fields = (typeof err === 'object' && err !== null ? err : {}) as {
    clickhouseCode?: unknown;
    code?: unknown;
  };
  if (typeof fields.code === 'string' && /^(Z_|ERR_ZLIB|ERR_ZSTD|ERR_BROTLI)/.test(fields.code)) {
    return new EngineError(
      ErrorCode.CANNOT_DECOMPRESS,
      'CANNOT_DECOMPRESS',
      `Cannot decompress the request body: ${raw}`,
    );
  }
  const prefixed = CODE_PREFIX.exec(raw);
  const chdbCode = fields.clickhouseCode;
  const code = prefixed ? Number(prefixed[1]) : typeof chdbCode === 'number' ? chdbCode : undefined;
  const type = TYPE_SUFFIX.exec(raw)?.[1];
  if (code !== undefined && type !== undefined) {
    const body = raw
      .replace(CODE_PREFIX, '')
      .replace(/\s*\(version [^)]*\)\s*$/, '')
      .replace(new RegExp(`\\.?\\s*\\(${type}\\)\\s*$`), '');
    return new EngineError(code, type, body);
  }
  if ((err as { name?: unknown }).name === 'ChdbBindError') {
    return new EngineError(ErrorCode.BAD_QUERY_PARAMETER, 'BAD_QUERY_PARAMETER', raw);
  }
  return new EngineError(code ?? ErrorCode.STD_EXCEPTION, 'STD_EXCEPTION', raw);
}

/** X-ClickHouse-Summary: counters as decimal strings, like the server sends them. */
export interface Summary {
  read_rows: string;
  read_bytes: string;
  written_rows: string;
  written_bytes: string;
  total_rows_to_read: string;
  result_rows: string;
  result_bytes: string;
  elapsed_ns: string;
  memory_usage: string;
}

function summary(s: Partial<Record<keyof Summary, number>> = {}): Summary {
  const v = (n: number | undefined) => String(Math.max(0, Math.round(n ?? 0)));
  return {
    read_rows: v(s.read_rows),
    read_bytes: v(s.read_bytes),
    written_rows: v(s.written_rows),
    written_bytes: v(s.written_bytes),
    total_rows_to_read: v(s.total_rows_to_read),
    result_rows: v(s.result_rows),
    result_bytes: v(s.result_bytes),
    elapsed_ns: v(s.elapsed_ns),
    memory_usage: '0',
  };
}

export interface EngineRequest {
  /** The statement. For an insert with `data`, the `INSERT ... FORMAT X` part only. */
  sql: string;
  /** Insert payload (already decompressed), consumed once. */
  data?: AsyncIterable<Buffer>;
  /** Query parameters in wire form (`param_` prefix removed). */
  params?: Record<string, string>;
  /** Settings in wire form (string values, as in the URL). */
  settings?: Record<string, string>;
  database?: string;
  /** Output format when the statement has no FORMAT clause. */
  defaultFormat?: string;
  /** Materialize the whole result before answering (wait_end_of_query=1): complete summary. */
  bufferResult?: boolean;
}

export interface EngineResult {
  /** The output format (FORMAT clause, else the default format). */
  format: string;
  summary: Summary;
  /** The result bytes; iterating fetches further chunks. Errors after the first chunk surface here. */
  body: AsyncIterable<Uint8Array>;
  /** Releases the statement early (reader went away). Safe to call more than once. */
  close(): void;
}

/** FIFO mutual exclusion; every native call of the engine runs inside it. */
class Gate {
  #tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

const IDENT = '`?([A-Za-z0-9_]+)`?';
/** The insert shape `@clickhouse/client` emits: `INSERT INTO [db.]t [(a, b)] FORMAT X`. */
const SIMPLE_INSERT = new RegExp(
  `^\\s*INSERT\\s+INTO\\s+(?:TABLE\\s+)?${IDENT}(?:\\s*\\.\\s*${IDENT})?\\s*(?:\\(([^()]*)\\))?\\s*FORMAT\\s+([A-Za-z][A-Za-z0-9]*)\\s*;?\\s*$`,
  'i',
);
const PLAIN_COLUMN = /^\s*`?([A-Za-z0-9_]+)`?\s*$/;
/** Line-delimited formats whose payload can be cut between rows and inserted piece by piece. */
const CHUNKABLE = new Map<string, RawInsertFormat>([
  ['jsoneachrow', 'JSONEachRow'],
  ['jsoncompacteachrow', 'JSONCompactEachRow'],
  ['tabseparated', 'TabSeparated'],
  ['tsv', 'TabSeparated'],
]);
/**
 * chdb streams a result as one independently formatted piece per block. Only formats whose pieces
 * concatenate into the single-shot output can be streamed: headerless row formats, and the
 * WithNames(AndTypes) text formats once the repeated header lines are dropped from later pieces
 * (value: header lines per piece). Everything else (JSON, Parquet, Pretty, ...) is materialized.
 */
const STREAMABLE = new Map<string, number>([
  ...[
    'tabseparated',
    'tsv',
    'tabseparatedraw',
    'tsvraw',
    'raw',
    'csv',
    'jsoneachrow',
    'jsonlines',
    'ndjson',
    'jsonstringseachrow',
    'jsoncompacteachrow',
    'jsoncompactstringseachrow',
    'rowbinary',
    'native',
    'lineasstring',
  ].map((f): [string, number] => [f, 0]),
  ...[
    'tabseparatedwithnames',
    'tsvwithnames',
    'tabseparatedrawwithnames',
    'tsvrawwithnames',
    'csvwithnames',
    'jsoncompacteachrowwithnames',
    'jsoncompactstringseachrowwithnames',
  ].map((f): [string, number] => [f, 1]),
  ...[
    'tabseparatedwithnamesandtypes',
    'tsvwithnamesandtypes',
    'tabseparatedrawwithnamesandtypes',
    'tsvrawwithnamesandtypes',
    'csvwithnamesandtypes',
    'jsoncompacteachrowwithnamesandtypes',
    'jsoncompactstringseachrowwithnamesandtypes',
  ].map((f): [string, number] => [f, 2]),
]);

/** Header lines to drop from later pieces, or undefined when the result has to be materialized. */
function streamHeaderLines(req: EngineRequest, format: string): number | undefined {
  if (req.bufferResult) return undefined;
  // A FORMAT that is not the trailing clause (or a word in a literal): the output format is unknown.
  if (formatClause(req.sql) === undefined && /\bFORMAT\b/i.test(req.sql)) return undefined;
  // JSONEachRow as one array per piece would not concatenate.
  const settings = Object.keys(req.settings ?? {}).join(' ');
  if (/array_of_rows/i.test(req.sql) || /array_of_rows/i.test(settings)) return undefined;
  return STREAMABLE.get(format.toLowerCase());
}

function dropLines(bytes: Uint8Array, lines: number): Uint8Array {
  let at = 0;
  for (let i = 0; i < lines; i++) {
    const nl = bytes.indexOf(0x0a, at);
    if (nl < 0) return bytes.subarray(bytes.length);
    at = nl + 1;
  }
  return bytes.subarray(at);
}

const INSERT_CHUNK_BYTES = 8 * 1024 * 1024;
const MAX_ROW_BYTES = 256 * 1024 * 1024;
const FORMAT_TAIL = /\bFORMAT\s+([A-Za-z][A-Za-z0-9_]*)\s*;?\s*$/i;

interface SimpleInsert {
  table: string;
  columns?: string[];
  format: RawInsertFormat;
}

function parseSimpleInsert(sql: string): SimpleInsert | undefined {
  const m = SIMPLE_INSERT.exec(sql);
  if (!m) return undefined;
  const format = CHUNKABLE.get((m[4] as string).toLowerCase());
  if (!format) return undefined;
  const table = m[2] ? `${m[1]}.${m[2]}` : (m[1] as string);
  if (m[3] === undefined) return { table, format };
  const columns: string[] = [];
  for (const part of m[3].split(',')) {
    const col = PLAIN_COLUMN.exec(part);
    if (!col) return undefined;
    columns.push(col[1] as string);
  }
  return { table, columns, format };
}

/** The format named by a trailing FORMAT clause, if any (comments and strings are not parsed). */
export function formatClause(sql: string): string | undefined {
  return FORMAT_TAIL.exec(sql)?.[1];
}

/** Settings whose value has to be quoted for SET; names are checked against injection. */
function setStatement(settings: Record<string, string>): string | undefined {
  const entries = Object.entries(settings);
  if (entries.length === 0) return undefined;
  // readonly=1 forbids later SETs in the same statement, so it goes last.
  entries.sort(([a], [b]) => Number(a === 'readonly') - Number(b === 'readonly'));
  const parts = entries.map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new EngineError(ErrorCode.UNKNOWN_SETTING, 'UNKNOWN_SETTING', `Unknown setting '${name}'`);
    }
    return `${name} = '${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  });
  return `SET ${parts.join(', ')}`;
}

function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/**
 * Cuts a line-delimited payload into pieces of about `target` bytes that end on a row boundary.
 * For the JSON formats a boundary is a newline between `}` and `{` (or `]` and `[`): inside one
 * value two containers are always separated by a comma, so only rows can meet that way, even when a
 * row is pretty-printed over several lines.
 */
async function* rowAligned(
  data: AsyncIterable<Buffer>,
  format: RawInsertFormat,
  target: number,
): AsyncGenerator<Buffer> {
  const close = format === 'JSONEachRow' ? 0x7d : format === 'JSONCompactEachRow' ? 0x5d : -1;
  const open = close === 0x7d ? 0x7b : 0x5b;
  const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a;
  const boundary = (buf: Buffer): number => {
    for (let nl = buf.lastIndexOf(0x0a); nl >= 0; nl = nl > 0 ? buf.lastIndexOf(0x0a, nl - 1) : -1) {
      if (close < 0) return nl + 1;
      let before = nl - 1;
      while (before >= 0 && isSpace(buf[before])) before--;
      let after = nl + 1;
      while (after < buf.length && isSpace(buf[after])) after++;
      if (buf[before] === close && after < buf.length && buf[after] === open) return nl + 1;
    }
    return -1;
  };
  let pending: Buffer[] = [];
  let size = 0;
  // Grows while no boundary is in sight, so a very long row is not re-concatenated per network chunk.
  let wanted = target;
  for await (const chunk of data) {
    pending.push(chunk);
    size += chunk.length;
    if (size < wanted) continue;
    const joined = Buffer.concat(pending, size);
    const cut = boundary(joined);
    if (cut <= 0) {
      if (size > MAX_ROW_BYTES) {
        throw new EngineError(
          ErrorCode.QUERY_IS_TOO_LARGE,
          'QUERY_IS_TOO_LARGE',
          `A row of the ${format} payload is longer than ${MAX_ROW_BYTES} bytes`,
        );
      }
      pending = [joined];
      wanted = size * 2;
      continue;
    }
    yield joined.subarray(0, cut);
    pending = cut < joined.length ? [joined.subarray(cut)] : [];
    size = joined.length - cut;
    wanted = target;
  }
  if (size > 0) yield Buffer.concat(pending, size);
}

export interface EngineInfo {
  version: string;
  timezone: string;
}

export class AnalyticsEngine {
  readonly path: string;
  readonly info: EngineInfo;
  #anchor: Session;
  #gate = new Gate();
  #closed = false;
  #spoolDir: string | undefined;

  private constructor(path: string, anchor: Session, info: EngineInfo) {
    this.path = path;
    this.#anchor = anchor;
    this.info = info;
  }

  /**
   * Binds `path` for this process. The anchor connection stays open for the engine's lifetime so the
   * databases are loaded once, and per-request connections only attach to the bound directory.
   */
  static async open(path: string): Promise<AnalyticsEngine> {
    const anchor = new Session(path);
    try {
      const r = await anchor.queryAsync('SELECT version(), timezone()', { format: 'TabSeparated' });
      const [version = 'unknown', timezone = 'UTC'] = r.text().trim().split('\t');
      return new AnalyticsEngine(path, anchor, { version, timezone });
    } catch (err) {
      anchor.close();
      throw toEngineError(err);
    }
  }

  async execute(req: EngineRequest): Promise<EngineResult> {
    if (this.#closed) throw new EngineError(ErrorCode.STD_EXCEPTION, 'STD_EXCEPTION', 'The engine is closed');
    const session = new Session(this.path);
    let handedOver = false;
    try {
      const prelude = setStatement(req.settings ?? {});
      if (prelude !== undefined || (req.database && req.database !== 'default')) {
        await this.#gate.run(async () => {
          if (prelude !== undefined) await session.queryAsync(prelude);
          if (req.database && req.database !== 'default') {
            await session.queryAsync(`USE ${quoteIdentifier(req.database)}`);
          }
        });
      }
      const result = req.data ? await this.#insert(session, req, req.data) : await this.#query(session, req);
      handedOver = true;
      return result;
    } catch (err) {
      throw toEngineError(err);
    } finally {
      if (!handedOver) session.close();
    }
  }

  async #query(session: Session, req: EngineRequest): Promise<EngineResult> {
    const defaultFormat = req.defaultFormat || 'TabSeparated';
    const format = formatClause(req.sql) ?? defaultFormat;
    const params =
      req.params && Object.keys(req.params).length > 0 ? toChdbParams(req.sql, req.params) : undefined;
    const headerLines = streamHeaderLines(req, format);
    if (headerLines !== undefined) {
      const streamed = await this.#gate.run(async () => {
        let stream: ChdbQueryStream;
        try {
          stream = params
            ? session.queryStreamBind(req.sql, params, { format: defaultFormat })
            : session.queryStream(req.sql, { format: defaultFormat });
        } catch (err) {
          // DDL, INSERT ... SELECT, SET, SYSTEM ...: chdb only streams SELECT-like statements.
          if (/Streaming query is not supported/.test((err as Error).message)) return undefined;
          throw err;
        }
        const it = stream[Symbol.asyncIterator]();
        try {
          return { stream, it, first: await it.next() };
        } catch (err) {
          stream.cancel();
          throw err;
        }
      });
      if (streamed) return this.#streamResult(session, format, headerLines, streamed);
    }
    const r = await this.#gate.run(() =>
      params
        ? session.queryBindAsync(req.sql, params, { format: defaultFormat })
        : session.queryAsync(req.sql, { format: defaultFormat }),
    );
    session.close();
    const bytes = r.bytes();
    return {
      format,
      summary: summary({
        read_rows: r.rowsRead,
        read_bytes: r.bytesRead,
        result_rows: r.rowsRead,
        result_bytes: r.bytesRead,
        elapsed_ns: r.elapsed * 1e9,
      }),
      body: (async function* () {
        if (bytes.length > 0) yield bytes;
      })(),
      close() {},
    };
  }

  #streamResult(
    session: Session,
    format: string,
    headerLines: number,
    s: { stream: ChdbQueryStream; it: AsyncIterator<StreamChunk>; first: IteratorResult<StreamChunk> },
  ): EngineResult {
    const gate = this.#gate;
    let done = false;
    const close = () => {
      if (done) return;
      done = true;
      s.stream.cancel();
      session.close();
    };
    const first = s.first.done ? undefined : s.first.value;
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        if (!first) return;
        yield first.raw();
        while (!done) {
          const next = await gate.run(() => s.it.next());
          if (next.done) return;
          yield headerLines > 0 ? dropLines(next.value.raw(), headerLines) : next.value.raw();
        }
      } catch (err) {
        throw toEngineError(err);
      } finally {
        close();
      }
    }
    return {
      format,
      summary: summary({
        result_rows: first?.numRows,
        result_bytes: first?.numBytes,
        read_rows: first?.numRows,
        read_bytes: first?.numBytes,
      }),
      body: body(),
      close,
    };
  }

  async #insert(session: Session, req: EngineRequest, data: AsyncIterable<Buffer>): Promise<EngineResult> {
    const hasParams = req.params !== undefined && Object.keys(req.params).length > 0;
    const simple = hasParams ? undefined : parseSimpleInsert(req.sql);
    const started = process.hrtime.bigint();
    let written = { rows: 0, bytes: 0, read: 0 };
    if (simple) written = await this.#insertChunked(session, simple, data);
    else if (formatClause(req.sql)) written = await this.#insertFromFile(session, req, data);
    else written = await this.#insertInline(session, req, data);
    session.close();
    return {
      format: req.defaultFormat || 'TabSeparated',
      summary: summary({
        read_rows: written.read,
        read_bytes: written.bytes,
        written_rows: written.rows,
        written_bytes: written.bytes,
        elapsed_ns: Number(process.hrtime.bigint() - started),
      }),
      body: (async function* () {})(),
      close() {},
    };
  }

  /** The client's own insert shape: row-aligned pieces through chdb's raw insert, memory bounded. */
  async #insertChunked(session: Session, shape: SimpleInsert, data: AsyncIterable<Buffer>) {
    const total = { rows: 0, bytes: 0, read: 0 };
    for await (const piece of rowAligned(data, shape.format, INSERT_CHUNK_BYTES)) {
      if (piece.every((b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09)) continue;
      const r = await this.#gate.run(() =>
        session.insert({ table: shape.table, columns: shape.columns, values: piece, format: shape.format }),
      );
      total.rows += r.rowsWritten;
      total.bytes += r.bytesWritten;
      total.read += r.rowsSent ?? r.rowsWritten;
    }
    return total;
  }

  /**
   * Any other `... FORMAT X` insert (binary formats, CSV, SETTINGS, quoted names): the payload is
   * spooled to a private temporary file and read by the engine with `FROM INFILE`, so neither size
   * nor binary content is a problem.
   */
  async #insertFromFile(session: Session, req: EngineRequest, data: AsyncIterable<Buffer>) {
    this.#spoolDir ??= await mkdtemp(join(tmpdir(), 'observatory-analytics-'));
    const file = join(this.#spoolDir, `${randomBytes(8).toString('hex')}.payload`);
    try {
      let bytes = 0;
      await pipeline(
        data,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            bytes += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(file, { mode: 0o600 }),
      );
      if (bytes === 0) return { rows: 0, bytes: 0, read: 0 };
      const sql = withInfile(req.sql, file);
      const params =
        req.params && Object.keys(req.params).length > 0 ? toChdbParams(sql, req.params) : undefined;
      const r = await this.#gate.run(() =>
        params ? session.queryBindAsync(sql, params) : session.queryAsync(sql),
      );
      return { rows: r.rowsRead, bytes, read: r.rowsRead };
    } finally {
      await rm(file, { force: true });
    }
  }

  /** `INSERT ... VALUES` and other shapes without FORMAT: the payload follows the statement as text. */
  async #insertInline(session: Session, req: EngineRequest, data: AsyncIterable<Buffer>) {
    const chunks: Buffer[] = [];
    for await (const chunk of data) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return { rows: 0, bytes: 0, read: 0 };
    const sql = `${req.sql}\n${text}`;
    const params =
      req.params && Object.keys(req.params).length > 0 ? toChdbParams(sql, req.params) : undefined;
    const r = await this.#gate.run(() =>
      params ? session.queryBindAsync(sql, params) : session.queryAsync(sql),
    );
    return { rows: r.rowsRead, bytes: Buffer.byteLength(text), read: r.rowsRead };
  }

  /** Waits for running statements, then releases the data directory. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#gate.run(() => undefined);
    this.#anchor.close();
    await drainPending();
    if (this.#spoolDir) await rm(this.#spoolDir, { recursive: true, force: true });
  }
}

/** `INSERT INTO t ... [SETTINGS ...] FORMAT X` -> `INSERT INTO t ... FROM INFILE 'f' [SETTINGS ...] FORMAT X`. */
function withInfile(sql: string, file: string): string {
  const m = FORMAT_TAIL.exec(sql);
  if (!m)
    throw new EngineError(ErrorCode.SYNTAX_ERROR, 'SYNTAX_ERROR', 'INSERT with data needs a FORMAT clause');
  const head = sql.slice(0, m.index);
  const settingsAt = head.search(/\bSETTINGS\b(?![\s\S]*\bSETTINGS\b)/i);
  const literal = `'${file.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (settingsAt >= 0) {
    return `${head.slice(0, settingsAt)}FROM INFILE ${literal} ${head.slice(settingsAt)}FORMAT ${m[1]}`;
  }
  return `${head.trimEnd()} FROM INFILE ${literal} FORMAT ${m[1]}`;
}
