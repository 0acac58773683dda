import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../server/platform/datastores/embedded-postgres.ts';
import { isListening } from '../fixtures/ports.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { startRedis } from '../fixtures/redis.ts';

const portOf = (url: string) => Number(new URL(url).port);

async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function serverVersionNum(url: string): Promise<number> {
  const [row] = await query<{ v: string }>(url, "SELECT current_setting('server_version_num') AS v");
  return Number(row?.v);
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await f();
  return [value, performance.now() - t0];
}

describe('PostgreSQL fixture', () => {
  it('starts two at once on distinct ports, each answering as PostgreSQL >= 15', async () => {
    const [[a, b], ms] = await timed(() => Promise.all([startPostgres(), startPostgres()]));
    try {
      expect(ms).toBeLessThan(15_000);
      for (const db of [a, b]) {
        const [row] = await query<{ version: string }>(db.url, 'SELECT version()');
        expect(row?.version).toMatch(/^PostgreSQL \d+/);
        expect(await serverVersionNum(db.url)).toBeGreaterThanOrEqual(150_000);
      }
      // Separate databases: what one creates the other does not see.
      await query(a.url, 'CREATE TABLE only_in_a (x int)');
      const seen = await query(b.url, "SELECT 1 FROM pg_tables WHERE tablename = 'only_in_a'");
      expect(seen).toHaveLength(0);
      if (!process.env['DATABASE_URL']) expect(portOf(a.url)).not.toBe(portOf(b.url));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it.skipIf(process.env['DATABASE_URL'])('stop leaves nothing listening on its port', async () => {
    const db = await startPostgres();
    const port = portOf(db.url);
    expect(await isListening(port)).toBe(true);
    await db.stop();
    expect(await isListening(port)).toBe(false);
    await db.stop(); // idempotent
  });

  it('with DATABASE_URL set, gives each call a database of its own and drops it at stop', async () => {
    const saved = process.env['DATABASE_URL'];
    const server = await startPostgres();
    try {
      process.env['DATABASE_URL'] = server.url;
      const [a, b] = await Promise.all([startPostgres(), startPostgres()]);
      const names = await Promise.all(
        [a, b].map(
          async (db) => (await query<{ d: string }>(db.url, 'SELECT current_database() AS d'))[0]?.d,
        ),
      );
      expect(names[0]).not.toBe(names[1]);
      expect(names.every((n) => n?.startsWith('observatory_test_'))).toBe(true);
      await Promise.all([a.stop(), b.stop()]);
      const left = await query(server.url, 'SELECT 1 FROM pg_database WHERE datname = ANY($1)', [names]);
      expect(left).toHaveLength(0);
    } finally {
      if (saved === undefined) delete process.env['DATABASE_URL'];
      else process.env['DATABASE_URL'] = saved;
      await server.stop();
    }
  });
});

describe('Redis fixture', () => {
  it('starts two at once on distinct ports, each answering PING as Redis >= 7', async () => {
    const [[a, b], ms] = await timed(() => Promise.all([startRedis(), startRedis()]));
    try {
      expect(ms).toBeLessThan(10_000);
      for (const r of [a, b]) {
        const client = new Redis(r.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
        try {
          await client.connect();
          expect(await client.ping()).toBe('PONG');
          const info = await client.info('server');
          const major = Number(/redis_version:(\d+)/.exec(info)?.[1]);
          expect(major).toBeGreaterThanOrEqual(7);
        } finally {
          client.disconnect();
        }
      }
      if (!process.env['REDIS_URL']) expect(portOf(a.url)).not.toBe(portOf(b.url));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it.skipIf(process.env['REDIS_URL'])('stop leaves nothing listening on its port', async () => {
    const r = await startRedis();
    const port = portOf(r.url);
    expect(await isListening(port)).toBe(true);
    await r.stop();
    expect(await isListening(port)).toBe(false);
  });
});

describe('embedded PostgreSQL (PGlite over pglite-socket)', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'observatory-pglite-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('answers pg with concurrent queries through a pool of its size, also after a failed query', async () => {
    const db = await startEmbeddedPostgres();
    const pool = new pg.Pool({ connectionString: db.url, max: db.poolSize });
    try {
      const [row] = (await pool.query<{ version: string }>('SELECT version()')).rows;
      expect(row?.version).toMatch(/^PostgreSQL \d+/);
      const [num] = (await pool.query<{ v: string }>("SELECT current_setting('server_version_num') AS v"))
        .rows;
      expect(Number(num?.v)).toBeGreaterThanOrEqual(150_000);

      const ask = (i: number) => pool.query<{ i: number }>('SELECT $1::int AS i', [i]);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(i)));
      expect(results.map((r) => r.rows[0]?.i)).toEqual(Array.from({ length: 20 }, (_, i) => i));

      // pg.Pool replaces the client after an error; the server must accept the new connection.
      await expect(pool.query('SELECT 1/0')).rejects.toThrow(/division by zero/);
      expect((await ask(42)).rows[0]?.i).toBe(42);
    } finally {
      await pool.end();
      await db.stop();
    }
    expect(await isListening(db.port)).toBe(false);
  });

  it('refuses a connection without the generated password or with another one', async () => {
    const db = await startEmbeddedPostgres();
    try {
      const url = new URL(db.url);
      expect(url.password.length).toBeGreaterThanOrEqual(32);
      for (const password of ['', 'postgres', `${url.password}x`]) {
        const client = new pg.Client({
          host: '127.0.0.1',
          port: db.port,
          user: 'postgres',
          password,
          database: 'postgres',
        });
        client.on('error', () => {});
        await expect(client.connect()).rejects.toThrow(
          /password authentication failed|password must be a string/,
        );
        await client.end().catch(() => {});
      }
      expect(await query(db.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.stop();
    }
  });

  it('keeps its data across stop and start with the same dataDir, and refuses a second opener', async () => {
    const dataDir = join(tempDir(), 'pg');
    const first = await startEmbeddedPostgres({ dataDir });
    try {
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(/already open/);
      await query(first.url, 'CREATE TABLE kept (note text)');
      await query(first.url, "INSERT INTO kept VALUES ('survives restart')");
    } finally {
      await first.stop();
    }
    const second = await startEmbeddedPostgres({ dataDir });
    try {
      expect(await query(second.url, 'SELECT note FROM kept')).toEqual([{ note: 'survives restart' }]);
    } finally {
      await second.stop();
    }
  });
});
