/**
 * ClickHouse's HTTP interface over the embedded engine, for `@clickhouse/client` (and curl) in
 * other processes. What it implements is what that client sends and parses:
 *
 * - `GET /ping`, `GET /` (no query): `Ok.\n`;
 * - `POST /?query_id=..&database=..&default_format=..&param_x=..&<setting>=..` with the SQL in the
 *   body; for inserts the SQL in `query` and the rows in the body; `GET /?query=` (readonly=2);
 *   query parameters also as a `multipart/form-data` body (the client's long-parameter mode);
 * - request bodies in gzip/deflate/br/zstd (`Content-Encoding`), responses compressed when
 *   `enable_http_compression=1` and `Accept-Encoding` names a codec we have;
 * - headers X-ClickHouse-Query-Id, -Format, -Timezone, -Summary, -Exception-Code and -Exception-Tag;
 *   errors with the status a ClickHouse server uses for the code and the body
 *   `Code: N. DB::Exception: <message>. (NAME) (version V)`; an error after the first bytes of a
 *   streamed result is written as the tagged exception block (ClickHouse >= 25.11 framing);
 * - one user (`default` unless configured) and an optional password: Basic auth,
 *   X-ClickHouse-User/-Key or `user`/`password` parameters.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import zlib from 'node:zlib';
import {
  AnalyticsEngine,
  EngineError,
  type EngineRequest,
  type EngineResult,
  ErrorCode,
  formatClause,
  toEngineError,
} from './engine.ts';

/** URL parameters that are part of the HTTP protocol, not settings for the engine. */
const PROTOCOL_PARAMS = new Set([
  'query',
  'query_id',
  'database',
  'default_format',
  'session_id',
  'session_timeout',
  'session_check',
  'user',
  'password',
  'quota_key',
  'role',
  'stacktrace',
  'buffer_size',
  'compress',
  'decompress',
  'client_protocol_version',
  'wait_end_of_query',
  'http_wait_end_of_query',
  'enable_http_compression',
  'http_zlib_compression_level',
  'http_response_buffer_size',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'http_native_compression_disable_checksumming_on_decompress',
  'add_http_cors_header',
]);

/** exceptionCodeToHTTPStatus of the ClickHouse server (src/Server/HTTP/exceptionCodeToHTTPStatus.cpp). */
const STATUS_BY_CODE = new Map<number, number>([
  [194, 401], // REQUIRED_PASSWORD
  ...[192, 193, 516, 512, 497].map((c): [number, number] => [c, 403]),
  ...[
    36, 427, 6, 25, 26, 38, 41, 72, 441, 675, 676, 27, 376, 15, 44, 37, 123, 8, 167, 168, 223, 62, 117, 53,
    321,
  ].map((c): [number, number] => [c, 400]),
  ...[60, 46, 47, 50, 56, 81, 115, 152, 63, 73, 336, 78, 511].map((c): [number, number] => [c, 404]),
  [229, 413], // QUERY_IS_TOO_LARGE
  [48, 501], // NOT_IMPLEMENTED
  [209, 503], // SOCKET_TIMEOUT
  [76, 503], // CANNOT_OPEN_FILE
  [381, 411], // HTTP_LENGTH_REQUIRED
  [159, 408], // TIMEOUT_EXCEEDED
  [439, 503], // CANNOT_SCHEDULE_TASK
  [779, 415], // UNSUPPORTED_MEDIA_TYPE
]);

export function httpStatusFor(code: number): number {
  return STATUS_BY_CODE.get(code) ?? 500;
}

/** Bodies that are SQL text (not insert payloads) are read whole; this bounds them. */
const MAX_QUERY_BODY_BYTES = 256 * 1024 * 1024;

export interface AnalyticsHttpOptions {
  engine: AnalyticsEngine;
  /** The one accepted user name (ClickHouse's default user unless set). */
  user?: string;
  /** Required password; empty or undefined accepts the user without one. */
  password?: string;
}

interface Credentials {
  user: string;
  password: string;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** Where ClickHouse looks for credentials, in its order; conflicting sources are an error there too. */
function credentialsOf(req: IncomingMessage, url: URL): Credentials | EngineError {
  const headerUser = req.headers['x-clickhouse-user'];
  const headerKey = req.headers['x-clickhouse-key'];
  const authorization = req.headers.authorization;
  const paramUser = url.searchParams.get('user');
  const paramPassword = url.searchParams.get('password');
  const sources = [
    headerUser !== undefined || headerKey !== undefined,
    authorization !== undefined,
    paramUser !== null || paramPassword !== null,
  ].filter(Boolean).length;
  if (sources > 1) {
    return new EngineError(
      ErrorCode.AUTHENTICATION_FAILED,
      'AUTHENTICATION_FAILED',
      'Invalid authentication: it is not allowed to use more than one authentication method at the same time',
    );
  }
  if (headerUser !== undefined || headerKey !== undefined) {
    return { user: String(headerUser ?? 'default'), password: String(headerKey ?? '') };
  }
  if (authorization !== undefined) {
    const m = /^Basic\s+(\S+)$/i.exec(authorization);
    if (!m) {
      return new EngineError(
        ErrorCode.AUTHENTICATION_FAILED,
        'AUTHENTICATION_FAILED',
        'Invalid authentication: only Basic authorization is supported by this server',
      );
    }
    const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0
      ? { user: decoded, password: '' }
      : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { user: paramUser ?? 'default', password: paramPassword ?? '' };
}

function checkCredentials(given: Credentials, user: string, password: string): EngineError | undefined {
  const userOk = timingSafeEqual(digest(given.user), digest(user));
  const passwordOk = timingSafeEqual(digest(given.password), digest(password));
  if (userOk && passwordOk) return undefined;
  // Same wording as the server; the password itself is never part of any answer.
  return new EngineError(
    ErrorCode.AUTHENTICATION_FAILED,
    'AUTHENTICATION_FAILED',
    `${given.user}: Authentication failed: password is incorrect, or there is no user with such name`,
  );
}

function decoderFor(encoding: string): Transform | undefined | EngineError {
  switch (encoding) {
    case '':
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'zstd':
      return zlib.createZstdDecompress();
    default:
      return new EngineError(
        ErrorCode.UNKNOWN_COMPRESSION_METHOD,
        'UNKNOWN_COMPRESSION_METHOD',
        `Unknown compression method '${encoding}'`,
      );
  }
}

/** The response codec: the first one in Accept-Encoding that we can produce. */
function encoderFor(
  acceptEncoding: string | undefined,
  level: number | undefined,
): { name: string; create: () => Transform } | undefined {
  for (const part of (acceptEncoding ?? '').split(',')) {
    const name = part.split(';')[0]?.trim().toLowerCase();
    const zlibLevel = level !== undefined && level >= 1 && level <= 9 ? { level } : { level: 3 };
    if (name === 'gzip' || name === 'x-gzip')
      return { name: 'gzip', create: () => zlib.createGzip(zlibLevel) };
    if (name === 'deflate') return { name, create: () => zlib.createDeflate(zlibLevel) };
    if (name === 'br') {
      return {
        name,
        create: () => zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
      };
    }
    if (name === 'zstd') return { name, create: () => zlib.createZstdCompress() };
  }
  return undefined;
}

function contentType(format: string): string {
  const f = format.toLowerCase();
  if (f.startsWith('json')) return 'application/json; charset=UTF-8';
  if (f.startsWith('tabseparated') || f.startsWith('tsv')) return 'text/tab-separated-values; charset=UTF-8';
  if (f.startsWith('csv')) return 'text/csv; charset=UTF-8; header=absent';
  if (/^(parquet|arrow|orc|native|rowbinary|avro|msgpack|protobuf|capnproto|bson|npy)/.test(f)) {
    return 'application/octet-stream';
  }
  return 'text/plain; charset=UTF-8';
}

/** Leading whitespace and comments removed, to recognize an INSERT whose data is the body. */
function isInsert(sql: string): boolean {
  const stripped = sql.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/, '');
  return /^INSERT\b/i.test(stripped);
}

async function readAll(stream: AsyncIterable<Buffer>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limit) {
      throw new EngineError(
        ErrorCode.QUERY_IS_TOO_LARGE,
        'QUERY_IS_TOO_LARGE',
        `Query is too large (${size})`,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** `multipart/form-data` fields (the client sends `query` and `param_*` this way for long parameters). */
function parseMultipart(body: Buffer, contentTypeHeader: string): Map<string, string> {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentTypeHeader)?.[1];
  if (!boundary) {
    throw new EngineError(ErrorCode.BAD_ARGUMENTS, 'BAD_ARGUMENTS', 'multipart/form-data without a boundary');
  }
  const fields = new Map<string, string>();
  const delimiter = Buffer.from(`--${boundary}`);
  let pos = body.indexOf(delimiter);
  while (pos >= 0) {
    const start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const headersEnd = body.indexOf('\r\n\r\n', start);
    if (headersEnd < 0) break;
    const next = body.indexOf(delimiter, headersEnd);
    if (next < 0) break;
    const headers = body.subarray(start, headersEnd).toString('utf8');
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    // The part's value ends before the CRLF that precedes the next delimiter.
    const valueEnd = body[next - 2] === 0x0d && body[next - 1] === 0x0a ? next - 2 : next;
    if (name !== undefined) fields.set(name, body.subarray(headersEnd + 4, valueEnd).toString('utf8'));
    pos = next;
  }
  return fields;
}

function exceptionText(err: EngineError, version: string): string {
  return `Code: ${err.code}. DB::Exception: ${err.message}. (${err.type}) (version ${version})\n`;
}

/** 16 lowercase letters and digits, like the server's exception tag. */
function exceptionTag(): string {
  return randomUUID().replace(/-/g, '').slice(0, 16);
}

/** The in-band error framing of ClickHouse >= 25.11, as @clickhouse/client's stream reader expects it. */
function exceptionBlock(text: string, tag: string): Buffer {
  const message = Buffer.from(text.endsWith('\n') ? text : `${text}\n`);
  return Buffer.concat([
    Buffer.from(`\r\n__exception__\r\n${tag}\r\n`),
    message,
    Buffer.from(`${message.length} ${tag}\r\n__exception__\r\n`),
  ]);
}

interface Prepared {
  engineRequest: EngineRequest;
  queryId: string;
  compress: ReturnType<typeof encoderFor>;
  cors: boolean;
}

export class AnalyticsHttpInterface {
  readonly engine: AnalyticsEngine;
  #user: string;
  #password: string;
  #inFlight = new Set<Promise<void>>();
  #host = hostname();

  constructor(options: AnalyticsHttpOptions) {
    this.engine = options.engine;
    this.#user = options.user || 'default';
    this.#password = options.password ?? '';
  }

  /** Requests being answered right now (graceful shutdown waits for them). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  handle = (req: IncomingMessage, res: ServerResponse): void => {
    const done = this.#handle(req, res)
      .catch((err: unknown) => {
        // Unexpected: the answer may be half sent; the connection is the only thing left to close.
        process.stderr.write(`analytics-server: ${(err as Error).stack ?? String(err)}\n`);
        res.destroy();
      })
      // Done means flushed to the socket, so shutdown cannot cut an answer short.
      .then(() => finished(res))
      .catch(() => undefined);
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  };

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    if (
      (url.pathname === '/ping' || url.pathname === '/replicas_status') &&
      (method === 'GET' || method === 'HEAD')
    ) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' }).end('Ok.\n');
      return;
    }
    if (url.pathname !== '/' && url.pathname !== '/query') {
      req.resume();
      res
        .writeHead(404, { 'Content-Type': 'text/plain; charset=UTF-8' })
        .end(`There is no handle ${url.pathname}\n\nUse / or /ping for health checks.\n`);
      return;
    }
    if (method !== 'GET' && method !== 'POST' && method !== 'HEAD') {
      req.resume();
      res.writeHead(405, { Allow: 'GET, POST, HEAD' }).end();
      return;
    }
    if (method !== 'POST' && !url.searchParams.has('query')) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' }).end('Ok.\n');
      return;
    }
    const queryId = url.searchParams.get('query_id') || randomUUID();
    let prepared: Prepared;
    try {
      prepared = await this.#prepare(req, url, method, queryId);
    } catch (err) {
      this.#fail(req, res, toEngineError(err), queryId);
      return;
    }
    let result: EngineResult;
    try {
      result = await this.engine.execute(prepared.engineRequest);
    } catch (err) {
      this.#fail(req, res, toEngineError(err), queryId);
      return;
    }
    await this.#respond(req, res, prepared, result, method === 'HEAD');
  }

  async #prepare(req: IncomingMessage, url: URL, method: string, queryId: string): Promise<Prepared> {
    const credentials = credentialsOf(req, url);
    if (credentials instanceof EngineError) throw credentials;
    const denied = checkCredentials(credentials, this.#user, this.#password);
    if (denied) throw denied;
    if (url.searchParams.has('session_id')) {
      throw new EngineError(
        ErrorCode.NOT_IMPLEMENTED,
        'NOT_IMPLEMENTED',
        'HTTP sessions (session_id) are not supported by the embedded analytics server',
      );
    }
    if (url.searchParams.get('compress') === '1' || url.searchParams.get('decompress') === '1') {
      throw new EngineError(
        ErrorCode.NOT_IMPLEMENTED,
        'NOT_IMPLEMENTED',
        "ClickHouse's native block compression (compress/decompress) is not supported; use Content-Encoding",
      );
    }

    const params: Record<string, string> = {};
    const settings: Record<string, string> = {};
    for (const [key, value] of url.searchParams) {
      if (key.startsWith('param_')) params[key.slice(6)] = value;
      else if (!PROTOCOL_PARAMS.has(key)) settings[key] = value;
    }
    // Like the server: a GET cannot write (readonly=2 still lets it change settings).
    if (method !== 'POST' && settings.readonly === undefined) settings.readonly = '2';

    const decoder = decoderFor(String(req.headers['content-encoding'] ?? '').toLowerCase());
    if (decoder instanceof EngineError) throw decoder;
    const body: AsyncIterable<Buffer> = decoder ? req.pipe(decoder) : req;
    if (decoder) req.on('error', (err) => decoder.destroy(err));

    let sql = url.searchParams.get('query') ?? '';
    let data: AsyncIterable<Buffer> | undefined;
    const type = String(req.headers['content-type'] ?? '');
    if (/^multipart\/form-data/i.test(type)) {
      const fields = parseMultipart(await this.#read(body), type);
      for (const [name, value] of fields) {
        if (name === 'query') sql = sql ? `${sql}\n${value}` : value;
        else if (name.startsWith('param_')) params[name.slice(6)] = value;
      }
    } else if (sql && isInsert(sql)) {
      // The statement is in the URL and the body is its data (possibly none at all).
      const it = body[Symbol.asyncIterator]();
      const first = await it.next();
      if (!first.done) {
        data = (async function* () {
          yield first.value as Buffer;
          for (let r = await it.next(); !r.done; r = await it.next()) yield r.value as Buffer;
        })();
      } else if (formatClause(sql)) {
        // An insert of no rows succeeds, as on the server (chdb would fail with "No data to insert").
        data = (async function* () {})();
      }
    } else {
      const text = (await this.#read(body)).toString('utf8');
      if (text.trim() !== '') sql = sql ? `${sql}\n${text}` : text;
    }
    if (sql.trim() === '') throw new EngineError(ErrorCode.SYNTAX_ERROR, 'SYNTAX_ERROR', 'Empty query');

    const enabled = (name: string) => ['1', 'true'].includes(url.searchParams.get(name)?.toLowerCase() ?? '');
    const level = url.searchParams.get('http_zlib_compression_level');
    return {
      queryId,
      compress: enabled('enable_http_compression')
        ? encoderFor(req.headers['accept-encoding'], level === null ? undefined : Number(level))
        : undefined,
      cors: enabled('add_http_cors_header'),
      engineRequest: {
        sql,
        data,
        params,
        settings,
        database: url.searchParams.get('database') ?? undefined,
        defaultFormat: url.searchParams.get('default_format') ?? undefined,
        bufferResult: enabled('wait_end_of_query') || enabled('http_wait_end_of_query'),
      },
    };
  }

  #read(body: AsyncIterable<Buffer>): Promise<Buffer> {
    return readAll(body, MAX_QUERY_BODY_BYTES);
  }

  #baseHeaders(queryId: string, format: string): Record<string, string> {
    return {
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Format': format,
      'X-ClickHouse-Timezone': this.engine.info.timezone,
      'X-ClickHouse-Server-Display-Name': this.#host,
    };
  }

  #fail(req: IncomingMessage, res: ServerResponse, err: EngineError, queryId: string): void {
    // Whatever is left of the request body is discarded so the connection can be reused.
    req.unpipe();
    req.resume();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res
      .writeHead(httpStatusFor(err.code), {
        ...this.#baseHeaders(queryId, 'TabSeparated'),
        'Content-Type': 'text/plain; charset=UTF-8',
        'X-ClickHouse-Exception-Code': String(err.code),
      })
      .end(exceptionText(err, this.engine.info.version));
  }

  async #respond(
    req: IncomingMessage,
    res: ServerResponse,
    prepared: Prepared,
    result: EngineResult,
    headOnly: boolean,
  ): Promise<void> {
    const tag = exceptionTag();
    const headers: Record<string, string> = {
      ...this.#baseHeaders(prepared.queryId, result.format),
      'Content-Type': contentType(result.format),
      'X-ClickHouse-Summary': JSON.stringify(result.summary),
      'X-ClickHouse-Exception-Tag': tag,
    };
    if (prepared.cors) headers['Access-Control-Allow-Origin'] = '*';
    const encoder = prepared.compress;
    if (encoder) headers['Content-Encoding'] = encoder.name;
    res.writeHead(200, headers);
    if (headOnly) {
      result.close();
      res.end();
      return;
    }
    const compressor = encoder?.create();
    compressor?.pipe(res);
    const sink: NodeJS.WritableStream = compressor ?? res;
    let gone = false;
    const onClose = () => {
      if (!res.writableFinished) {
        gone = true;
        result.close();
      }
    };
    res.on('close', onClose);
    try {
      for await (const chunk of result.body) {
        if (gone) break;
        if (!sink.write(chunk)) await waitDrain(sink, res);
      }
    } catch (err) {
      if (!gone) sink.write(exceptionBlock(exceptionText(toEngineError(err), this.engine.info.version), tag));
    } finally {
      result.close();
      req.resume();
      sink.end();
    }
  }
}

function waitDrain(sink: NodeJS.WritableStream, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      sink.removeListener('drain', done);
      res.removeListener('close', done);
      resolve();
    };
    sink.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Query parameters travel in the URL: ClickHouse accepts URLs up to 1 MiB (`http_max_uri_size`),
 * where Node's HTTP server would refuse a URL plus headers past 16 KiB.
 */
const HTTP_MAX_URI_SIZE = 1024 * 1024;

export interface AnalyticsServerOptions {
  /** Data directory (created by the engine when missing). */
  dataDir: string;
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  /** How long close() lets running requests finish before it cuts their connections (ms). */
  shutdownGraceMs?: number;
}

export interface AnalyticsServer {
  readonly url: string;
  readonly port: number;
  readonly engine: AnalyticsEngine;
  readonly server: Server;
  /** Stops accepting, lets running requests finish, then releases the data directory. */
  close(): Promise<void>;
}

export async function startAnalyticsServer(options: AnalyticsServerOptions): Promise<AnalyticsServer> {
  await mkdir(options.dataDir, { recursive: true });
  const engine = await AnalyticsEngine.open(options.dataDir);
  const api = new AnalyticsHttpInterface({ engine, user: options.user, password: options.password });
  const server = createServer({ keepAliveTimeout: 10_000, maxHeaderSize: HTTP_MAX_URI_SIZE }, api.handle);
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8123, host, () => {
        server.removeListener('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await engine.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    engine,
    server,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // A reader that stopped reading would hold a streamed answer open forever: bounded wait.
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, options.shutdownGraceMs ?? 30_000);
        });
        await Promise.race([api.drain(), grace]);
        clearTimeout(timer);
        // Keep-alive sockets still open after their last answer would hold close() forever.
        server.closeAllConnections();
        await api.drain();
        await stopped;
        await engine.close();
      })();
      return closing;
    },
  };
}
