/**
 * `observatory analytics-server` as a real child process, driven by the unchanged @clickhouse/client
 * over HTTP (and by plain fetch where the wire itself is the subject): one embedded ClickHouse
 * store shared by several clients and processes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import {
  type ClickHouseClient,
  ClickHouseError,
  ClickHouseLogLevel,
  createClient,
  TupleParam,
} from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnalyticsUrl } from '../../server/platform/datastores/clickhouse.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The CLI entry once main.ts registers the command, else the command module's `run` directly. */
function serverArgs(flags: string[]): string[] {
  const main = readFileSync(join(ROOT, 'server/cli/main.ts'), 'utf8');
  if (/['"]analytics-server['"]\s*:/.test(main)) {
    return [join(ROOT, 'server/bin/observatory.ts'), 'analytics-server', ...flags];
  }
  const module = pathToFileURL(join(ROOT, 'server/cli/analytics-server.ts')).href;
  const entry = `const { run } = await import(${JSON.stringify(module)}); process.exitCode = await run(process.argv.slice(1));`;
  return ['--input-type=module', '-e', entry, '--', ...flags];
}

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of ['CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD']) if (!(name in extra)) delete env[name];
  return env;
}

async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, serverArgs(['--port', '0', '--data', dataDir]), {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`analytics-server not ready after 90 s:\n${output}`));
    }, 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /ready: (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`analytics-server exited with ${code} before it was ready:\n${output}`));
    });
  });
  return {
    url,
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A separate Node process using @clickhouse/client against `url`; prints one JSON line. */
function runClientProcess(script: string, env: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`client process exited with ${code}:\n${err}`));
      else resolve(JSON.parse(out.trim().split('\n').pop() as string));
    });
  });
}

async function rows<T>(client: ClickHouseClient, query: string, extra: object = {}): Promise<T[]> {
  const rs = await client.query({ query, format: 'JSONEachRow', ...extra });
  return rs.json<T>();
}

async function caught(p: Promise<unknown>): Promise<ClickHouseError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ClickHouseError) return err;
    throw err;
  }
  throw new Error('expected a ClickHouseError');
}

// Expected errors are asserted here; the client's own error log would only be noise.
const quiet = { log: { level: ClickHouseLogLevel.OFF } };

describe('analytics-server over the ClickHouse HTTP interface', () => {
  let dir: string;
  let server: ServerProcess;
  let client: ClickHouseClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'analytics-server-test-'));
    server = await startServer(join(dir, 'data'));
    client = createClient({ url: server.url, ...quiet });
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers pings like a ClickHouse server', async () => {
    expect(await client.ping()).toEqual({ success: true });
    expect(await client.ping({ select: true })).toEqual({ success: true });
    for (const path of ['/ping', '/']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('Ok.\n');
    }
  });

  it('creates MergeTree and ReplacingMergeTree tables and reads them back', async () => {
    await client.command({
      query:
        'CREATE TABLE traces (id String, name String, ts DateTime64(3)) ENGINE = MergeTree ORDER BY (id, ts)',
    });
    await client.command({
      query: `CREATE TABLE observations (id String, version UInt64, name String, is_deleted UInt8)
              ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id`,
    });
    await client.insert({
      table: 'observations',
      values: [
        { id: 'a', version: 1, name: 'first', is_deleted: 0 },
        { id: 'b', version: 1, name: 'kept', is_deleted: 0 },
      ],
      format: 'JSONEachRow',
    });
    await client.insert({
      table: 'observations',
      values: [
        { id: 'a', version: 2, name: 'second', is_deleted: 0 },
        { id: 'b', version: 2, name: 'gone', is_deleted: 1 },
      ],
      format: 'JSONEachRow',
    });
    expect(await rows(client, 'SELECT id, name FROM observations FINAL ORDER BY id')).toEqual([
      { id: 'a', name: 'second' },
    ]);
    expect(await rows(client, 'SELECT count() AS n FROM observations')).toEqual([{ n: 4 }]);
  });

  it('inserts JSONEachRow rows, including a 50k-row batch, with an exact summary', async () => {
    const small = Array.from({ length: 500 }, (_, i) => ({
      id: `s${i}`,
      name: `row ${i}`,
      ts: '2026-11-22 01:02:03.456',
    }));
    const first = await client.insert({ table: 'traces', values: small, format: 'JSONEachRow' });
    expect(first.summary?.written_rows).toBe('500');

    const big = Array.from({ length: 50_000 }, (_, i) => ({
      id: `b${i}`,
      // About 12 MB in all: more than one of the server's 8 MB insert pieces.
      name: `payload ${i} ${'x'.repeat(150 + (i % 50))}`,
      ts: new Date(Date.UTC(2026, 10, 22, 0, 0, 0, i % 1000))
        .toISOString()
        .replace('T', ' ')
        .replace('Z', ''),
    }));
    const res = await client.insert({ table: 'traces', values: big, format: 'JSONEachRow' });
    expect(res.summary?.written_rows).toBe('50000');
    expect(Number(res.summary?.written_bytes)).toBeGreaterThan(0);
    expect(await rows(client, "SELECT count() AS n, countIf(startsWith(id, 'b')) AS b FROM traces")).toEqual([
      { n: 50_500, b: 50_000 },
    ]);
    // Streamed back in several chunks (one per block).
    const all = await rows<{ id: string }>(client, 'SELECT id FROM traces ORDER BY id');
    expect(all).toHaveLength(50_500);
  });

  it('cuts large payloads between rows, also when rows are pretty-printed over several lines', async () => {
    await client.command({
      query: 'CREATE TABLE pretty (id String, body String) ENGINE = MergeTree ORDER BY id',
    });
    const text = `${Array.from({ length: 30_000 }, (_, i) =>
      JSON.stringify({ id: `p${i}`, body: `{"nested":[${i}]}\n${'n'.repeat(300)}` }, null, 2),
    ).join('\n')}\n`;
    expect(text.length).toBeGreaterThan(10 * 1024 * 1024);
    const res = await client.exec({
      query: 'INSERT INTO pretty FORMAT JSONEachRow',
      values: Readable.from([Buffer.from(text)], { objectMode: false }),
    });
    expect(res.summary?.written_rows).toBe('30000');
    for await (const chunk of res.stream) void chunk;
    expect(
      await rows(client, 'SELECT count() AS n, countIf(body LIKE \'{"nested":[%\') AS ok FROM pretty'),
    ).toEqual([{ n: 30_000, ok: 30_000 }]);
  });

  it('streams single-document and binary formats across many blocks', async () => {
    const json = await (
      await client.query({
        query: 'SELECT number FROM numbers(100000) SETTINGS max_block_size = 1000',
        format: 'JSON',
      })
    ).json<{ number: number }>();
    expect(json.rows).toBe(100_000);
    expect(json.data[99_999]).toEqual({ number: 99_999 });

    // Parquet out of one request, into another: the chunks form one valid file.
    const out = await client.exec({
      query:
        'SELECT number AS n, toString(number) AS s FROM numbers(100000) SETTINGS max_block_size = 1000 FORMAT Parquet',
    });
    const parts: Buffer[] = [];
    for await (const chunk of out.stream) parts.push(chunk as Buffer);
    await client.command({
      query: 'CREATE TABLE from_parquet (n UInt64, s String) ENGINE = MergeTree ORDER BY n',
    });
    const back = await client.exec({
      query: 'INSERT INTO from_parquet FORMAT Parquet',
      values: Readable.from([Buffer.concat(parts)], { objectMode: false }),
    });
    for await (const chunk of back.stream) void chunk;
    expect(back.summary?.written_rows).toBe('100000');
    expect(await rows(client, 'SELECT count() AS c, sum(n) AS total FROM from_parquet')).toEqual([
      { c: 100_000, total: 4_999_950_000 },
    ]);
  });

  it('serves JSON, JSONEachRow and TabSeparated, TabSeparated by default', async () => {
    const json = await (await client.query({ query: "SELECT 1 AS one, 'x' AS s", format: 'JSON' })).json<{
      one: number;
      s: string;
    }>();
    expect(json.data).toEqual([{ one: 1, s: 'x' }]);
    expect(json.meta).toEqual([
      { name: 'one', type: 'UInt8' },
      { name: 's', type: 'String' },
    ]);
    expect(json.rows).toBe(1);

    const tsv = await (await client.query({ query: "SELECT 1, 'a\\tb'", format: 'TabSeparated' })).text();
    expect(tsv).toBe('1\ta\\tb\n');

    // No FORMAT clause and no default_format: TabSeparated, as a real server answers.
    const res = await fetch(`${server.url}/`, { method: 'POST', body: "SELECT 1, 'x'" });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-clickhouse-format')).toBe('TabSeparated');
    expect(res.headers.get('x-clickhouse-query-id')).toBeTruthy();
    expect(await res.text()).toBe('1\tx\n');
    const summary = JSON.parse(res.headers.get('x-clickhouse-summary') ?? '{}') as Record<string, unknown>;
    for (const key of [
      'read_rows',
      'read_bytes',
      'written_rows',
      'written_bytes',
      'result_rows',
      'elapsed_ns',
    ]) {
      expect(typeof summary[key]).toBe('string');
    }

    const byDefaultFormat = await fetch(`${server.url}/?default_format=JSONEachRow&query_id=q-1`, {
      method: 'POST',
      body: 'SELECT 2 AS two',
    });
    expect(byDefaultFormat.headers.get('x-clickhouse-query-id')).toBe('q-1');
    expect(byDefaultFormat.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
    expect(await byDefaultFormat.text()).toBe('{"two":2}\n');
  });

  it('binds query parameters: quotes, backslashes, arrays, maps, DateTime64, NULL, long values', async () => {
    const tricky = "it's a \\ back\\slash, a\ttab and a\nnewline, \\N and ''";
    const [r] = await rows<Record<string, unknown>>(
      client,
      `SELECT {s:String} AS s, {a:Array(String)} AS a, {m:Map(String, String)} AS m,
              {d:DateTime64(3)} AS d, {n:Nullable(String)} AS n, {u:UInt64} AS u, {t:Tuple(String, UInt8)} AS t`,
      {
        query_params: {
          s: tricky,
          a: ["x'y", 'z\\w', 'tab\there', tricky],
          m: { "k'ey": 'v\\al' },
          d: new Date('2026-11-22T01:02:03.456Z'),
          n: null,
          u: '18446744073709551615',
          t: new TupleParam(["o'k", 7]),
        },
        clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
      },
    );
    expect(r).toEqual({
      s: tricky,
      a: ["x'y", 'z\\w', 'tab\there', tricky],
      m: { "k'ey": 'v\\al' },
      d: '2026-11-22 01:02:03.456',
      n: null,
      u: '18446744073709551615',
      t: ["o'k", 7],
    });

    // Long parameters travel in a multipart body instead of the URL.
    const long = `${'y'.repeat(10_000)}'\\`;
    const viaMultipart = await rows(
      client,
      'SELECT length({v:String}) AS len, right({v:String}, 2) AS tail',
      {
        query_params: { v: long },
        use_multipart_params: true,
      },
    );
    expect(viaMultipart).toEqual([{ len: 10_002, tail: "'\\" }]);

    // In the URL, as ClickHouse takes them up to `http_max_uri_size` (1 MiB): 20 000 ids, ~500 KiB.
    const ids = Array.from(
      { length: 20_000 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    expect(
      await rows(client, 'SELECT length({ids:Array(String)}) AS n, {ids:Array(String)}[20000] AS last', {
        query_params: { ids },
      }),
    ).toEqual([{ n: 20_000, last: ids.at(-1) }]);
    const tooLong = await fetch(`${server.url}/?query=${'x'.repeat(1024 * 1024 + 1)}`);
    expect(tooLong.status).toBeGreaterThanOrEqual(400);

    await client.insert({
      table: 'traces',
      values: [{ id: 'p1', name: "o'brien", ts: '2026-11-22 01:02:03.456' }],
      format: 'JSONEachRow',
    });
    expect(
      await rows(
        client,
        'SELECT id FROM traces WHERE name IN {names:Array(String)} AND ts = {ts:DateTime64(3)}',
        {
          query_params: { names: ["o'brien", 'nobody'], ts: new Date('2026-11-22T01:02:03.456Z') },
        },
      ),
    ).toEqual([{ id: 'p1' }]);
  });

  it('applies clickhouse_settings to one request only', async () => {
    const limited = await rows(client, 'SELECT number FROM numbers(5) SETTINGS max_threads = 1', {
      clickhouse_settings: { limit: 2, max_result_rows: 1234 },
    });
    expect(limited).toHaveLength(2);
    expect(await rows(client, "SELECT getSetting('max_result_rows') AS v")).toEqual([{ v: 0 }]);
    expect(await rows(client, 'SELECT number FROM numbers(5)')).toHaveLength(5);

    // A SET statement lives as long as its request, as over HTTP without a session.
    await client.command({ query: 'SET limit = 1' });
    expect(await rows(client, 'SELECT number FROM numbers(5)')).toHaveLength(5);

    // Settings on inserts reach the engine too.
    const err = await caught(
      client.insert({
        table: 'traces',
        values: [{ id: 'z', name: 'z', ts: '2026-11-22 00:00:00', unknown_column: 1 }],
        format: 'JSONEachRow',
        clickhouse_settings: { input_format_skip_unknown_fields: 0 },
      }),
    );
    expect(err.type).toBe('INCORRECT_DATA');
    await client.insert({
      table: 'traces',
      values: [{ id: 'z', name: 'z', ts: '2026-11-22 00:00:00', unknown_column: 1 }],
      format: 'JSONEachRow',
      clickhouse_settings: { input_format_skip_unknown_fields: 1 },
    });
  });

  it('reports errors with the code, name and HTTP status of a ClickHouse server', async () => {
    const unknownTable = await caught(client.query({ query: 'SELECT * FROM no_such_table' }));
    expect(unknownTable.code).toBe('60');
    expect(unknownTable.type).toBe('UNKNOWN_TABLE');
    const syntax = await caught(client.command({ query: 'SELEC 1' }));
    expect(syntax.code).toBe('62');
    expect(syntax.type).toBe('SYNTAX_ERROR');
    const unknownSetting = await caught(
      client.query({ query: 'SELECT 1', clickhouse_settings: { no_such: 1 } }),
    );
    expect(unknownSetting.type).toBe('UNKNOWN_SETTING');

    const res = await fetch(`${server.url}/`, { method: 'POST', body: 'SELECT * FROM no_such_table' });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-clickhouse-exception-code')).toBe('60');
    expect(await res.text()).toMatch(
      /^Code: 60\. DB::Exception: .+\. \(UNKNOWN_TABLE\) \(version [\d.]+\)\n$/s,
    );
    const bad = await fetch(`${server.url}/`, { method: 'POST', body: 'SELEC 1' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-clickhouse-exception-code')).toBe('62');
    // A GET cannot write, like on a server (readonly=2).
    const get = await fetch(
      `${server.url}/?query=${encodeURIComponent("INSERT INTO traces (id) VALUES ('g')")}`,
    );
    expect(get.headers.get('x-clickhouse-exception-code')).toBe('164');
  });

  it('reports an error that happens after the first rows were sent', async () => {
    const rs = await client.query({
      query: 'SELECT throwIf(number = 150000) AS x FROM numbers(200000) SETTINGS max_block_size = 1000',
      format: 'JSONEachRow',
    });
    const err = await caught(
      (async () => {
        for await (const batch of rs.stream()) void batch;
      })(),
    );
    expect(err.type).toBe('FUNCTION_THROW_IF_VALUE_IS_NON_ZERO');
    expect(await client.ping()).toEqual({ success: true });
  });

  it('accepts gzip request bodies and compresses responses on request', async () => {
    const gz = createClient({ url: server.url, compression: { request: true, response: true }, ...quiet });
    try {
      await gz.command({ query: 'CREATE TABLE zipped (n UInt32) ENGINE = MergeTree ORDER BY n' });
      const values = Array.from({ length: 2000 }, (_, n) => ({ n }));
      const res = await gz.insert({ table: 'zipped', values, format: 'JSONEachRow' });
      expect(res.summary?.written_rows).toBe('2000');
      expect(await rows(gz, 'SELECT count() AS c, sum(n) AS s FROM zipped')).toEqual([
        { c: 2000, s: 1999000 },
      ]);
    } finally {
      await gz.close();
    }
    const raw = await fetch(`${server.url}/?enable_http_compression=1`, {
      method: 'POST',
      body: 'SELECT number FROM numbers(3) FORMAT CSV',
      headers: { 'Accept-Encoding': 'gzip' },
    });
    expect(raw.headers.get('content-encoding')).toBe('gzip');
    const body = Buffer.from(await raw.arrayBuffer());
    // undici may or may not have decoded it already; either way the content is the CSV.
    const text = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body).toString() : body.toString();
    expect(text).toBe('0\n1\n2\n');
  });

  it('inserts other formats and shapes (CSV, RowBinary, SETTINGS, VALUES)', async () => {
    await client.command({
      query: 'CREATE TABLE shapes (id UInt64, s String) ENGINE = MergeTree ORDER BY id',
    });
    const csv = await client.insert({
      table: 'shapes',
      values: Readable.from([Buffer.from('1,"a,b"\n2,"multi\nline"\n')], { objectMode: false }),
      format: 'CSV',
    });
    expect(csv.summary?.written_rows).toBe('2');
    const rowBinary = Buffer.from([3, 0, 0, 0, 0, 0, 0, 0, 2, 0xc3, 0xa9]);
    await client.exec({
      query: 'INSERT INTO shapes FORMAT RowBinary',
      values: Readable.from([rowBinary], { objectMode: false }),
    });
    await client.exec({
      query: 'INSERT INTO shapes SETTINGS max_insert_threads = 1 FORMAT JSONEachRow',
      values: Readable.from([Buffer.from('{"id":4,"s":"with settings"}\n')], { objectMode: false }),
    });
    await client.command({ query: "INSERT INTO shapes VALUES (5, 'values')" });
    expect(await rows(client, 'SELECT id, s FROM shapes ORDER BY id')).toEqual([
      { id: 1, s: 'a,b' },
      { id: 2, s: 'multi\nline' },
      { id: 3, s: 'é' },
      { id: 4, s: 'with settings' },
      { id: 5, s: 'values' },
    ]);
  });

  it('uses the client database', async () => {
    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS other' });
    await client.command({ query: 'CREATE TABLE other.t (n UInt8) ENGINE = MergeTree ORDER BY n' });
    const other = createClient({ url: server.url, database: 'other', ...quiet });
    try {
      await other.insert({ table: 't', values: [{ n: 7 }], format: 'JSONEachRow' });
      expect(await rows(other, 'SELECT currentDatabase() AS db, sum(n) AS n FROM t')).toEqual([
        { db: 'other', n: 7 },
      ]);
    } finally {
      await other.close();
    }
  });

  it('serves concurrent requests, and an unread result does not block others', async () => {
    await client.command({ query: 'CREATE TABLE busy (k UInt32, v String) ENGINE = MergeTree ORDER BY k' });
    const pending = await client.query({ query: 'SELECT * FROM numbers(3000000)', format: 'JSONEachRow' });
    const work = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? client.insert({
            table: 'busy',
            values: Array.from({ length: 100 }, (_, j) => ({ k: i * 100 + j, v: `v${j}` })),
            format: 'JSONEachRow',
          })
        : rows<{ n: number }>(client, 'SELECT {i:UInt32} AS n', { query_params: { i } }).then((r) => {
            expect(r).toEqual([{ n: i }]);
          }),
    );
    await Promise.all(work);
    expect(await rows(client, 'SELECT count() AS n, uniqExact(k) AS u FROM busy')).toEqual([
      { n: 2000, u: 2000 },
    ]);
    pending.close();
  });

  it('shares the store with a client in another process', async () => {
    await client.command({
      query: 'CREATE TABLE shared (who String, n UInt32) ENGINE = MergeTree ORDER BY (who, n)',
    });
    const script = `
      import { createClient } from '@clickhouse/client';
      const c = createClient({ url: process.env.CH_URL });
      await c.insert({ table: 'shared', values: Array.from({ length: 1000 }, (_, n) => ({ who: 'child', n })), format: 'JSONEachRow' });
      const rs = await c.query({ query: "SELECT who, count() AS n FROM shared GROUP BY who ORDER BY who", format: 'JSONEachRow' });
      console.log(JSON.stringify(await rs.json()));
      await c.close();
    `;
    await client.insert({
      table: 'shared',
      values: Array.from({ length: 10 }, (_, n) => ({ who: 'parent', n })),
      format: 'JSONEachRow',
    });
    const seenByChild = await runClientProcess(script, { CH_URL: server.url });
    expect(seenByChild).toEqual([
      { who: 'child', n: 1000 },
      { who: 'parent', n: 10 },
    ]);
    expect(await rows(client, "SELECT count() AS n FROM shared WHERE who = 'child'")).toEqual([{ n: 1000 }]);
  });

  it('finishes a running request on SIGTERM and keeps the data across a restart', async () => {
    const slow = client.query({
      query: 'SELECT sleep(1) AS slept, count() AS n FROM traces',
      format: 'JSONEachRow',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exit = server.stop('SIGTERM');
    const result = await (await slow).json<{ n: number }>();
    expect(result).toEqual([{ slept: 0, n: 50_502 }]);
    expect(await exit).toBe(0);
    await client.close();

    server = await startServer(join(dir, 'data'));
    client = createClient({ url: server.url, ...quiet });
    expect(await rows(client, 'SELECT count() AS n FROM traces')).toEqual([{ n: 50_502 }]);
    expect(await rows(client, 'SELECT id, name FROM observations FINAL ORDER BY id')).toEqual([
      { id: 'a', name: 'second' },
    ]);
  });
});

describe('analytics-server with a password', () => {
  const password = 'pw-never-echoed-7f3a';
  let dir: string;
  let server: ServerProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'analytics-server-auth-'));
    server = await startServer(join(dir, 'data'), { CLICKHOUSE_PASSWORD: password });
  });

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('requires the password and never echoes one', async () => {
    const anonymous = createClient({ url: server.url, ...quiet });
    const wrong = createClient({ url: server.url, password: `${password}-wrong`, ...quiet });
    const right = createClient({ url: server.url, password, ...quiet });
    try {
      for (const c of [anonymous, wrong]) {
        const err = await caught(c.query({ query: 'SELECT 1' }));
        expect(err.code).toBe('516');
        expect(err.type).toBe('AUTHENTICATION_FAILED');
        expect(err.message).not.toContain(password);
      }
      expect(await rows(right, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);

      const res = await fetch(`${server.url}/`, {
        method: 'POST',
        body: 'SELECT 1',
        headers: { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': `${password}x` },
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('x-clickhouse-exception-code')).toBe('516');
      expect(await res.text()).not.toContain(password);
      const ok = await fetch(`${server.url}/`, {
        method: 'POST',
        body: 'SELECT 1',
        headers: { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': password },
      });
      expect(await ok.text()).toBe('1\n');
      // Health checks stay open.
      expect(await (await fetch(`${server.url}/ping`)).text()).toBe('Ok.\n');
    } finally {
      await Promise.all([anonymous.close(), wrong.close(), right.close()]);
    }
  });
});

describe('createAnalyticsClient', () => {
  it('parses analytics URLs', () => {
    expect(parseAnalyticsUrl('chdb:///var/lib/observatory/analytics')).toEqual({
      kind: 'chdb',
      path: '/var/lib/observatory/analytics',
    });
    expect(parseAnalyticsUrl('chdb:///tmp/with%20space')).toEqual({ kind: 'chdb', path: '/tmp/with space' });
    expect(parseAnalyticsUrl('http://127.0.0.1:8123')).toEqual({
      kind: 'http',
      url: 'http://127.0.0.1:8123',
    });
    expect(() => parseAnalyticsUrl('chdb://relative/dir')).toThrow(/absolute/);
    expect(() => parseAnalyticsUrl('tcp://x')).toThrow();
  });

  it('runs the embedded engine in-process for chdb:/// with per-request settings and the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'analytics-embedded-'));
    try {
      const module = pathToFileURL(join(ROOT, 'server/platform/datastores/clickhouse.ts')).href;
      // A process of its own: libchdb binds one data directory per process.
      const script = `
        import { ClickHouseError } from '@clickhouse/client';
        const { createAnalyticsClient } = await import(${JSON.stringify(module)});
        const url = 'chdb://' + process.env.DATA_DIR;
        const root = createAnalyticsClient({ url, user: 'default', password: '', database: 'default' });
        await root.command({ query: 'CREATE DATABASE obs' });
        const c = createAnalyticsClient({ url, database: 'obs' });
        await c.command({ query: 'CREATE TABLE e (id UInt32, ts DateTime64(3)) ENGINE = MergeTree ORDER BY id' });
        await c.insert({ table: 'e', values: [{ id: 1, ts: '2026-11-22 01:02:03.456' }], format: 'JSONEachRow' });
        const q = async (query, extra = {}) => (await c.query({ query, format: 'JSONEachRow', ...extra })).json();
        const out = {
          db: await q('SELECT currentDatabase() AS db, count() AS n FROM e'),
          date: await q('SELECT id FROM e WHERE ts = {t:DateTime64(3)}', { query_params: { t: new Date('2026-11-22T01:02:03.456Z') } }),
          limited: (await q('SELECT number FROM numbers(5)', { clickhouse_settings: { limit: 2 } })).length,
          after: (await q('SELECT number FROM numbers(5)')).length,
        };
        try { await c.query({ query: 'SELECT * FROM nope' }); } catch (e) { out.error = [e instanceof ClickHouseError, e.code, e.type]; }
        await c.close();
        await root.close();
        console.log(JSON.stringify(out));
      `;
      expect(await runClientProcess(script, { DATA_DIR: join(dir, 'data') })).toEqual({
        db: [{ db: 'obs', n: 1 }],
        date: [{ id: 1 }],
        limited: 2,
        after: 5,
        error: [true, '60', 'UNKNOWN_TABLE'],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
