/**
 * The analytics store client. `CLICKHOUSE_URL` decides the transport, the rest of the code only sees
 * a `ClickHouseClient`:
 * - `http(s)://host:port` - a ClickHouse server, or `observatory analytics-server` (several processes);
 * - `chdb:///abs/dir` - the embedded engine in this process (chdb through the client's `connection`
 *   option). libchdb binds one data directory per process: one process only per directory.
 *
 * Close discipline: `await client.close()` once, when the process
 * is done with the store; in chdb mode it also waits until the engine has finished everything that
 * was started, so a later open (e.g. another directory in the same process) is safe.
 */
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import {
  type ClickHouseClient,
  type ClickHouseClientConfigOptions,
  ClickHouseError,
  ClickHouseLogLevel,
  createClient,
  parseError,
} from '@clickhouse/client';
import type { StatementBounds } from './statement-bounds.ts';

type Connection = NonNullable<ClickHouseClientConfigOptions['connection']>;
type ChdbConnection = Connection & { chdb: { queryAsync(sql: string): Promise<unknown> } };

export interface AnalyticsClientSettings {
  url: string;
  user?: string;
  password?: string;
  database?: string;
}

export type AnalyticsTarget = { kind: 'chdb'; path: string } | { kind: 'http'; url: string };

/** `chdb:///abs/dir` -> the directory; `http(s)://...` as is; anything else is an error. */
export function parseAnalyticsUrl(url: string): AnalyticsTarget {
  if (url.startsWith('chdb://')) {
    const rest = url.slice('chdb://'.length);
    const path = decodeURIComponent(rest);
    if (!rest.startsWith('/') || !isAbsolute(path)) {
      throw new Error(`CLICKHOUSE_URL ${url}: expected chdb:///absolute/data/dir`);
    }
    return { kind: 'chdb', path };
  }
  if (/^https?:\/\//.test(url)) return { kind: 'http', url };
  throw new Error(`CLICKHOUSE_URL ${url}: expected http(s)://... or chdb:///absolute/data/dir`);
}

/**
 * A client whose every statement carries `bounds` (statement-bounds.ts: the process's role); a
 * statement may still pass its own settings. Without bounds (tests, tools) the client's defaults apply.
 * `quiet`: the client logs nothing itself (its error log quotes the store's message, which may name
 * credentials a statement carries); the caller reports failures, redacted.
 */
export function createAnalyticsClient(
  settings: AnalyticsClientSettings,
  bounds?: StatementBounds,
  quiet = false,
): ClickHouseClient {
  const target = parseAnalyticsUrl(settings.url);
  const database = settings.database || 'default';
  const bounded = bounds
    ? {
        request_timeout: bounds.requestTimeout,
        clickhouse_settings: bounds.settings,
        ...(bounds.maxResponseHeadersSize !== undefined
          ? { max_response_headers_size: bounds.maxResponseHeadersSize }
          : {}),
      }
    : {};
  const log = quiet ? { log: { level: ClickHouseLogLevel.OFF } } : {};
  if (target.kind === 'http') {
    return createClient({
      url: target.url,
      username: settings.user || 'default',
      password: settings.password ?? '',
      database,
      ...bounded,
      ...log,
    });
  }
  return createClient({
    connection: new EmbeddedConnection(target.path, database),
    database,
    ...bounded,
    ...log,
  });
}

// chdb is loaded only in chdb mode: it maps a 500 MB native library into the process.
const require = createRequire(import.meta.url);
type ChdbModule = {
  createChdbConnection(opts: { path: string }): ChdbConnection;
};
type ChdbRoot = { drainPending(): Promise<void> };

/**
 * chdb's Connection applies `clickhouse_settings` with `SET` on its one session, where they stay for
 * every later statement, ignores the client's `database`, binds a `Date` parameter without its
 * milliseconds, and throws the ClickHouseError class of its own copy of client-common. This wrapper
 * gives each operation its own chdb connection to the same directory (about 0.1 ms), selects the
 * database there, passes Dates like the HTTP client does (Unix seconds with milliseconds) and
 * rethrows errors as @clickhouse/client's ClickHouseError, so code behaves the same in both modes.
 */
class EmbeddedConnection implements Connection {
  #path: string;
  #database: string;
  #chdb: ChdbModule;
  #anchor: ChdbConnection;
  #closed = false;

  constructor(path: string, database: string) {
    this.#path = path;
    this.#database = database;
    this.#chdb = require('chdb/connection') as ChdbModule;
    // Holds the directory (and its loaded databases) for the client's lifetime.
    this.#anchor = this.#chdb.createChdbConnection({ path });
  }

  async #each<T>(run: (c: ChdbConnection) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('The analytics client is closed');
    const c = this.#chdb.createChdbConnection({ path: this.#path });
    try {
      if (this.#database !== 'default') {
        await c.chdb.queryAsync(`USE \`${this.#database.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``);
      }
      return await run(c);
    } catch (err) {
      throw asClientError(err);
    } finally {
      await c.close();
    }
  }

  ping(params: Parameters<Connection['ping']>[0]) {
    return this.#anchor.ping(params);
  }
  query(params: Parameters<Connection['query']>[0]) {
    return this.#each((c) => c.query(withDates(params)));
  }
  insert(params: Parameters<Connection['insert']>[0]) {
    return this.#each((c) => c.insert(withDates(params)));
  }
  command(params: Parameters<Connection['command']>[0]) {
    return this.#each((c) => c.command(withDates(params)));
  }
  exec(params: Parameters<Connection['exec']>[0]) {
    return this.#each((c) => c.exec(withDates(params)));
  }
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#anchor.close();
    await (require('chdb') as ChdbRoot).drainPending();
  }
}

function datesAsSeconds(value: unknown): unknown {
  if (value instanceof Date) return value.getTime() / 1000;
  if (Array.isArray(value)) return value.map(datesAsSeconds);
  if (value instanceof Map)
    return new Map([...value].map(([k, v]) => [datesAsSeconds(k), datesAsSeconds(v)]));
  if (value !== null && typeof value === 'object' && value.constructor?.name === 'TupleParam') {
    const tuple = value as { values: unknown[] };
    return Object.assign(Object.create(Object.getPrototypeOf(value)), {
      values: tuple.values.map(datesAsSeconds),
    });
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, datesAsSeconds(v)]));
  }
  return value;
}

function withDates<P extends { query_params?: Record<string, unknown> }>(params: P): P {
  if (!params.query_params) return params;
  return { ...params, query_params: datesAsSeconds(params.query_params) as Record<string, unknown> };
}

function asClientError(err: unknown): unknown {
  if (err instanceof ClickHouseError || !(err instanceof Error)) return err;
  const { code, type } = err as { code?: unknown; type?: unknown };
  if (typeof code === 'string' && typeof type === 'string') {
    const mapped = new ClickHouseError({ message: err.message, code, type });
    mapped.cause = err;
    return mapped;
  }
  const parsed = parseError(err.message);
  if (parsed instanceof ClickHouseError) parsed.cause = err;
  return parsed instanceof ClickHouseError ? parsed : err;
}
