/**
 * `observatory backup-verify` on real PostgreSQL, the analytics server (embedded ClickHouse) and
 * the S3 server: a backup of a populated deployment records every table's exact rows (compared
 * with counts queried here), and its verification restores it into scratch databases, compares,
 * and passes with those figures, dropping what a killed run left. An analytics table's object
 * overwritten, and separately a relational dump of other data, make it fail naming the table;
 * the scratch databases are gone after every run and no credential is printed.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKUP_CLI, backupManifestSchema, backupVerifySummarySchema } from '../../server/contract/backup.ts';
import {
  BACKUP_RUN_TIMEOUT_MS,
  type BackupSuite,
  startBackupSuite,
  stopBackupSuite,
} from '../fixtures/backup-suite.ts';
import { basicAuth } from '../fixtures/service.ts';

const BUCKET = 'verify';
const PREFIX = 'obs/';
const SETUP_TIMEOUT_MS = 300_000;

let backups: BackupSuite;
let suite: BackupSuite['suite'];
let dir: string;
let printed: string[];
let run: BackupSuite['run'];

beforeAll(async () => {
  // The web in dual ingests the traces, then stops: the backups run on still stores.
  backups = await startBackupSuite('verify', BUCKET, PREFIX, async (suite) => {
    const now = Date.now();
    const batch = Array.from({ length: 30 }, (_, i) => [
      {
        type: 'trace-create',
        body: { id: `t${i}`, name: 'verify', timestamp: new Date(now + i).toISOString() },
      },
      { type: 'score-create', body: { id: `s${i}`, traceId: `t${i}`, name: 'q', value: i } },
    ])
      .flat()
      .map((e, n) => ({ id: `e${n}`, timestamp: new Date(now).toISOString(), ...e }));
    const res = await fetch(`${suite.web.url}/api/public/ingestion`, {
      method: 'POST',
      headers: { authorization: basicAuth(suite.project), 'content-type': 'application/json' },
      body: JSON.stringify({ batch }),
    });
    expect(res.status).toBe(207);
  });
  ({ suite, dir, printed, run } = backups);
}, SETUP_TIMEOUT_MS);

afterAll(() => stopBackupSuite(backups));

/** Rows of every relational table, counted here. */
async function relationalCounts(): Promise<Record<string, number>> {
  const { rows } = await suite.pool.query<{ s: string; t: string }>(
    `SELECT schemaname AS s, tablename AS t FROM pg_tables
     WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
  );
  const out: Record<string, number> = {};
  for (const { s, t } of rows)
    out[`${s}.${t}`] = Number((await suite.pool.query(`SELECT count(*) AS n FROM "${s}"."${t}"`)).rows[0].n);
  return out;
}

/** Rows of every analytics table (views hold none), counted here. */
async function analyticsCounts(): Promise<Record<string, number>> {
  const rs = await suite.ch.client.query({
    query: `SELECT name FROM system.tables WHERE database = 'default' AND engine NOT LIKE '%View' ORDER BY name`,
    format: 'JSONEachRow',
  });
  const out: Record<string, number> = {};
  for (const { name } of await rs.json<{ name: string }>()) {
    const c = await suite.ch.client.query({
      query: `SELECT count() AS n FROM \`${name}\``,
      format: 'JSONEachRow',
    });
    out[name] = Number((await c.json<{ n: string }>())[0]!.n);
  }
  return out;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

const getObject = async (key: string) =>
  Buffer.from(
    await (
      await suite.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))
    ).Body!.transformToByteArray(),
  );
const putObject = (key: string, body: Buffer) =>
  suite.s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

async function scratchLeft(): Promise<string[]> {
  const { rows } = await suite.pool.query<{ d: string }>(
    `SELECT datname AS d FROM pg_database WHERE datname LIKE '%\\_verify'`,
  );
  const rs = await suite.ch.client.query({
    query: `SELECT name FROM system.databases WHERE name LIKE '%\\_verify'`,
    format: 'JSONEachRow',
  });
  return [...rows.map((r) => r.d), ...(await rs.json<{ name: string }>()).map((r) => r.name)];
}

async function verify(id: string) {
  const termination = join(dir, `${id}-${Date.now()}.verify`);
  const r = await run([BACKUP_CLI.verify, '--id', id, '--termination-log', termination, '--json']);
  expect(r.code, r.stderr).toBe(0);
  const message = readFileSync(termination, 'utf8');
  expect(Buffer.byteLength(message)).toBeLessThan(4096);
  const summary = backupVerifySummarySchema.parse(JSON.parse(message));
  expect(JSON.parse(r.stdout)).toEqual(summary);
  return summary;
}

describe('observatory backup-verify', () => {
  let relational: Record<string, number>;
  let analytics: Record<string, number>;
  let recordedTables: number;

  it('records every table with its exact rows in the manifest', async () => {
    relational = await relationalCounts();
    analytics = await analyticsCounts();
    expect(analytics['traces']).toBe(30);
    const r = await run(['backup', '--id', 'v1', '--termination-log', join(dir, 'v1.backup')]);
    expect(r.code, r.stderr).toBe(0);
    const manifest = backupManifestSchema.parse(
      JSON.parse((await getObject(`${PREFIX}v1/manifest.json`)).toString()),
    );
    const tables = (part: string) =>
      Object.fromEntries(manifest.parts.find((p) => p.part === part)!.tables!.map((t) => [t.table, t.rows]));
    expect(tables('relational')).toEqual(relational);
    // Views are recorded by their definition, with no rows.
    const recorded = tables('analytics');
    for (const [table, rows] of Object.entries(analytics)) expect(recorded[table], table).toBe(rows);
    expect(sum(recorded)).toBe(sum(analytics));
    recordedTables = Object.keys(recorded).length + Object.keys(relational).length;
    expect(manifest.parts.find((p) => p.part === 'analytics')!.tables!.every((t) => t.sha256)).toBe(true);
  });

  it('passes with the exact figures, dropping a killed run’s scratch databases first and its own after', async () => {
    // What a verification killed midway leaves.
    await suite.ch.client.command({ query: 'CREATE DATABASE default_verify' });
    await suite.ch.client.command({
      query: 'CREATE TABLE default_verify.leftover (a UInt8) ENGINE = MergeTree ORDER BY a',
    });
    const db = new URL(suite.pg.url).pathname.slice(1);
    await suite.pool.query(`CREATE DATABASE "${db}_verify"`);
    expect((await scratchLeft()).length).toBe(2);

    const summary = await verify('v1');
    expect(summary).toEqual({
      id: 'v1',
      result: 'Verified',
      tables: recordedTables,
      rows: { analytics: sum(analytics), relational: sum(relational) },
      differences: 0,
    });
    expect(await scratchLeft()).toEqual([]);
    // The live databases are untouched.
    expect(await analyticsCounts()).toEqual(analytics);
    expect(await relationalCounts()).toEqual(relational);
  });

  it('names the analytics table whose object was overwritten, or truncated', async () => {
    const index = (await getObject(`${PREFIX}v1/analytics/.backup`)).toString();
    // An object of its own (not one deduplicated into another table's), of the traces table's data.
    const own = [
      ...index.matchAll(
        /<file><name>(data\/default\/traces\/[^<]+)<\/name><size>(\d+)<\/size><checksum>[^<]*<\/checksum><\/file>/g,
      ),
    ]
      .map((m) => ({ name: m[1]!, size: Number(m[2]) }))
      .sort((a, b) => b.size - a.size)[0]!;
    const key = `${PREFIX}v1/analytics/${own.name}`;
    const original = await getObject(key);
    await putObject(key, Buffer.alloc(original.length, 0x5a));
    try {
      const summary = await verify('v1');
      expect(summary.result).toBe('Differs');
      expect(summary.first).toMatchObject({ part: 'analytics', table: 'traces' });
      expect(summary.first!.detail).toContain('sha256');
      expect(await scratchLeft()).toEqual([]);
      // Truncated instead: the entry's size no longer matches the store's index.
      await putObject(key, original.subarray(0, Math.floor(original.length / 2)));
      const truncated = await verify('v1');
      expect(truncated.first).toEqual({
        part: 'analytics',
        table: 'traces',
        detail: `${own.name} has ${Math.floor(original.length / 2)} bytes, the backup's index lists ${own.size}`,
      });
      expect(await scratchLeft()).toEqual([]);
    } finally {
      await putObject(key, original);
    }
  });

  it('names the relational table a changed dump differs in', async () => {
    const key = `${PREFIX}v1/relational.dump`;
    const original = await getObject(key);
    await suite.pool.query('DELETE FROM api_keys');
    const { stdout } = await promisify(execFile)('pg_dump', ['--format=custom', `--dbname=${suite.pg.url}`], {
      encoding: 'buffer',
      maxBuffer: 256 * 1024 * 1024,
      timeout: BACKUP_RUN_TIMEOUT_MS,
    });
    await putObject(key, stdout);
    try {
      const summary = await verify('v1');
      expect(summary.result).toBe('Differs');
      expect(summary.first).toEqual({
        part: 'relational',
        table: 'public.api_keys',
        detail: `0 rows restored, recorded ${relational['public.api_keys']}`,
      });
      expect(summary.differences).toBe(2);
      expect(await scratchLeft()).toEqual([]);
    } finally {
      await putObject(key, original);
    }
  });

  it('restores a backup whose manifest records no tables, saying rows cannot be compared', async () => {
    const key = `${PREFIX}v1/manifest.json`;
    const original = await getObject(key);
    const manifest = JSON.parse(original.toString());
    for (const part of manifest.parts) delete part.tables;
    await putObject(key, Buffer.from(JSON.stringify(manifest)));
    try {
      expect(await verify('v1')).toEqual({
        id: 'v1',
        result: 'RowsNotRecorded',
        tables: 0,
        rows: { analytics: sum(analytics), relational: sum(relational) },
        differences: 0,
      });
      expect(await scratchLeft()).toEqual([]);
    } finally {
      await putObject(key, original);
    }
  });

  it('prints no credential', () => {
    const all = printed.join('\n');
    expect(all).not.toContain(suite.s3.secretAccessKey);
  });
});
