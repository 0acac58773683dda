/**
 * `observatory backup` and `observatory restore` as the operator's Jobs run them, on real
 * PostgreSQL, the analytics server (embedded ClickHouse) and an S3 server (versitygw): data ingested
 * through the web is backed up, the objects are read back and checked against the manifest, both
 * databases are changed, and a restore brings back every row of every table (rows compared, not
 * counted). An incomplete or altered backup is refused before anything changes; a backup killed
 * mid-upload leaves no manifest and the same id then completes; no credential is ever printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../../cluster/observatory-cli.ts';
import { observatoryCli } from '../../cluster/paths.ts';
import { BACKUP_S3_ENV, backupManifestSchema, backupSummarySchema } from '../../server/contract/backup.ts';
import {
  BACKUP_RUN_TIMEOUT_MS,
  type BackupSuite,
  startBackupSuite,
  stopBackupSuite,
} from '../fixtures/backup-suite.ts';
import { basicAuth, createProject, type Env, type Project, startWeb } from '../fixtures/service.ts';

const BUCKET = 'backups';
const PREFIX = 'obs/';
const SETUP_TIMEOUT_MS = 300_000;

let backups: BackupSuite;
let suite: BackupSuite['suite'];
let env: Env;
let dir: string;
/** Everything every run printed, searched for credentials at the end. */
let printed: string[];
let run: BackupSuite['run'];

beforeAll(async () => {
  // The web in dual ingests the first traces, then stops: the backups run on still stores.
  backups = await startBackupSuite('backup', BUCKET, PREFIX, (s) =>
    ingest(s.web.url, s.project, 'first', 40),
  );
  ({ suite, env, dir, printed, run } = backups);
}, SETUP_TIMEOUT_MS);

afterAll(() => stopBackupSuite(backups));

/** Traces, each with a span, a generation and a score, through the public ingestion API. */
async function ingest(url: string, project: Project, prefix: string, traces: number): Promise<void> {
  const now = Date.now();
  const at = (ms: number) => new Date(now + ms).toISOString();
  const batch = Array.from({ length: traces }, (_, i) => {
    const trace = `${prefix}-t${i}`;
    return [
      {
        type: 'trace-create',
        body: { id: trace, name: 'backup', timestamp: at(i), input: { q: i }, tags: ['b'] },
      },
      { type: 'span-create', body: { id: `${trace}-s`, traceId: trace, name: 'step', startTime: at(i) } },
      {
        type: 'generation-create',
        body: {
          id: `${trace}-g`,
          traceId: trace,
          name: 'llm',
          startTime: at(i),
          model: 'gpt-4o',
          usageDetails: { input: 10 + i, output: 5 },
        },
      },
      {
        type: 'score-create',
        body: { id: `${trace}-sc`, traceId: trace, name: 'quality', value: i / traces },
      },
    ];
  })
    .flat()
    .map((e, n) => ({ id: `${prefix}-e${n}`, timestamp: at(0), ...e }));
  const res = await fetch(`${url}/api/public/ingestion`, {
    method: 'POST',
    headers: { authorization: basicAuth(project), 'content-type': 'application/json' },
    body: JSON.stringify({ batch }),
  });
  const body = (await res.json()) as { successes: unknown[]; errors: unknown[] };
  expect(res.status).toBe(207);
  expect(body.errors).toEqual([]);
}

/** Every row of every relational table, as sorted JSON lines per table. */
async function relationalRows(): Promise<Record<string, string[]>> {
  const { rows: tables } = await suite.pool.query<{ t: string }>(
    `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
  );
  const out: Record<string, string[]> = {};
  for (const { t } of tables) {
    const { rows } = await suite.pool.query<{ r: string }>(
      `SELECT row_to_json(snapshot_row)::text AS r FROM "${t}" snapshot_row`,
    );
    out[t] = rows.map((r) => r.r).sort();
  }
  return out;
}

/**
 * Every row of every analytics table (views hold none of their own), as sorted JSON lines; FINAL on
 * the engines that collapse rows, so a background merge between two reads changes nothing.
 */
async function analyticsRows(): Promise<Record<string, string[]>> {
  const rs = await suite.ch.client.query({
    query: `SELECT name, engine FROM system.tables WHERE database = 'default' AND engine NOT LIKE '%View' ORDER BY name`,
    format: 'JSONEachRow',
  });
  const out: Record<string, string[]> = {};
  for (const { name, engine } of await rs.json<{ name: string; engine: string }>()) {
    const final = engine.endsWith('MergeTree') && engine !== 'MergeTree' ? ' FINAL' : '';
    const rows = await suite.ch.client.query({
      query: `SELECT * FROM \`${name}\`${final}`,
      format: 'JSONEachRow',
    });
    out[name] = (await rows.json()).map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

const snapshot = async () => ({ relational: await relationalRows(), analytics: await analyticsRows() });

async function objects(prefix: string) {
  const out: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const page = await suite.s3.client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size! });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

const getObject = async (key: string) =>
  Buffer.from(
    await (
      await suite.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))
    ).Body!.transformToByteArray(),
  );

const manifestOf = async (id: string) =>
  backupManifestSchema.parse(JSON.parse((await getObject(`${PREFIX}${id}/manifest.json`)).toString()));

const hasManifest = async (id: string) => (await objects(`${PREFIX}${id}/manifest.json`)).length > 0;

describe('observatory backup and restore', () => {
  let before: Awaited<ReturnType<typeof snapshot>>;

  it('backs up both databases, verified: the objects match the manifest and the summary', async () => {
    before = await snapshot();
    expect(Object.keys(before.analytics).length).toBeGreaterThan(3);
    expect(before.analytics['traces']?.length ?? before.analytics['events_full']?.length).toBeGreaterThan(0);
    expect(before.relational['projects']!.length).toBeGreaterThan(0);
    const termination = join(dir, 'b1.termination');
    const r = await run(['backup', '--id', 'b1', '--termination-log', termination, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const summary = backupSummarySchema.parse(JSON.parse(readFileSync(termination, 'utf8')));
    expect(Buffer.byteLength(readFileSync(termination))).toBeLessThan(4096);
    expect(JSON.parse(r.stdout)).toEqual(summary);
    const manifest = await manifestOf('b1');
    expect(manifest).toMatchObject({ id: 'b1', release: '4', writeMode: 'dual' });
    expect(summary).toMatchObject({ id: 'b1', release: '4', writeMode: 'dual' });
    expect(manifest.schema.relational).toBeGreaterThan(0);
    expect(manifest.schema.analytics).toBeGreaterThan(0);
    expect(manifest.parts.map((p) => p.part)).toEqual(['analytics', 'relational']);
    // The bucket holds what the manifest says, by an independent reading.
    for (const part of manifest.parts) {
      const key = part.part === 'analytics' ? 'b1/analytics/' : 'b1/relational.dump';
      const listed = (await objects(`${PREFIX}${key}`)).sort((a, b) => (a.key < b.key ? -1 : 1));
      const hash = createHash('sha256');
      for (const o of listed) {
        hash.update(`${o.key.slice(PREFIX.length)}\n${o.size}\n`);
        hash.update(await getObject(o.key));
      }
      expect({
        objects: listed.length,
        bytes: listed.reduce((n, o) => n + o.size, 0),
        sha256: hash.digest('hex'),
      }).toEqual({
        objects: part.objects,
        bytes: part.bytes,
        sha256: part.sha256,
      });
      expect(summary.parts.find((p) => p.part === part.part)).toEqual({
        part: part.part,
        objects: part.objects,
        bytes: part.bytes,
      });
    }
    expect((await objects(`${PREFIX}b1/analytics/.backup`)).length).toBe(1);
  });

  it('refuses an id whose backup is complete', async () => {
    const r = await run(['backup', '--id', 'b1', '--termination-log', join(dir, 'again')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('backup b1 already exists');
  });

  it('restores every row of both databases after both were changed', async () => {
    const web = await startWeb(suite.env);
    try {
      await ingest(web.url, suite.project, 'later', 10);
    } finally {
      await web.stop();
    }
    await createProject({ DATABASE_URL: suite.pg.url }, 'after-backup');
    await suite.pool.query('DELETE FROM api_keys');
    await suite.ch.client.command({ query: 'TRUNCATE TABLE scores' });
    await suite.ch.client.command({
      query: 'CREATE TABLE made_later (a UInt8) ENGINE = MergeTree ORDER BY a',
    });
    const changed = await snapshot();
    expect(changed).not.toEqual(before);

    const termination = join(dir, 'restore');
    const r = await run(['restore', '--id', 'b1', '--termination-log', termination, '--json']);
    expect(r.code, r.stderr).toBe(0);
    // The summary the operator records in status.restore: no ingestion log, so no replay.
    expect(JSON.parse(readFileSync(termination, 'utf8'))).toEqual({ id: 'b1' });
    const manifest = await manifestOf('b1');
    expect(JSON.parse(r.stdout)).toEqual({
      id: 'b1',
      release: manifest.release,
      writeMode: manifest.writeMode,
      schema: manifest.schema,
      restored: ['analytics', 'relational'],
    });
    const after = await snapshot();
    expect(after.analytics).toEqual(before.analytics);
    expect(after.relational).toEqual(before.relational);
  });

  it('keeps a deletion made after the backup: the restore deletes the traces again', async () => {
    const deleted = ['first-t0', 'first-t1'];
    const read = async (url: string, id: string) =>
      (
        await fetch(`${url}/api/public/traces/${id}`, {
          headers: { authorization: basicAuth(suite.project) },
        })
      ).status;
    let web = await startWeb(suite.env);
    try {
      const res = await fetch(`${web.url}/api/public/traces`, {
        method: 'DELETE',
        headers: { authorization: basicAuth(suite.project), 'content-type': 'application/json' },
        body: JSON.stringify({ traceIds: deleted }),
      });
      expect(res.status).toBe(200);
    } finally {
      await web.stop();
    }

    const r = await run(['restore', '--id', 'b1', '--termination-log', join(dir, 'restore-again'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('restore b1: 2 deleted traces or projects deleted again');
    // Every analytics row of the backup but the deleted traces', row by row.
    const traceOf = (table: string, line: string) => {
      const row = JSON.parse(line) as Record<string, unknown>;
      return table === 'traces' ? row['id'] : row['trace_id'];
    };
    const expected = Object.fromEntries(
      Object.entries(before.analytics).map(([table, lines]) => [
        table,
        lines.filter((l) => !deleted.includes(String(traceOf(table, l)))),
      ]),
    );
    expect((await snapshot()).analytics).toEqual(expected);
    const { rows } = await suite.pool.query(
      'SELECT project_id, trace_id FROM trace_tombstones ORDER BY trace_id',
    );
    expect(rows).toEqual(deleted.map((trace_id) => ({ project_id: suite.project.projectId, trace_id })));
    web = await startWeb(suite.env);
    try {
      expect([
        await read(web.url, 'first-t0'),
        await read(web.url, 'first-t1'),
        await read(web.url, 'first-t2'),
      ]).toEqual([404, 404, 200]);
    } finally {
      await web.stop();
    }
  });

  it('refuses an incomplete or altered backup before changing anything', async () => {
    for (const id of ['b2', 'b3']) {
      const r = await run(['backup', '--id', id, '--termination-log', join(dir, id)]);
      expect(r.code, r.stderr).toBe(0);
    }
    await suite.s3.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}b2/manifest.json` }));
    const data = (await objects(`${PREFIX}b3/analytics/data/`)).find((o) => o.key.endsWith('.bin'))!;
    const bytes = await getObject(data.key);
    bytes[0] = bytes[0]! ^ 0xff;
    await suite.s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: data.key, Body: bytes }));
    await suite.ch.client.command({ query: 'TRUNCATE TABLE scores' });
    await suite.pool.query('DELETE FROM api_keys');
    const changed = await snapshot();

    const incomplete = await run(['restore', '--id', 'b2', '--termination-log', join(dir, 'r2')]);
    expect(incomplete.code).toBe(1);
    expect(incomplete.stderr).toContain('backup b2 is not complete');
    const altered = await run([
      'restore',
      '--id',
      'b3',
      '--include',
      'analytics',
      '--termination-log',
      join(dir, 'r3'),
    ]);
    expect(altered.code).toBe(1);
    expect(altered.stderr).toContain('the analytics part does not match its manifest');
    const missing = await run(['restore', '--id', 'never-taken', '--termination-log', join(dir, 'r4')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('backup never-taken is not complete');
    expect(await snapshot()).toEqual(changed);
  });

  it('a backup killed mid-upload leaves no manifest; the same id then completes', async () => {
    // Enough relational data for a multipart upload of several parts.
    await suite.pool.query(
      `CREATE TABLE bulk AS SELECT g AS id, decode(string_agg(md5(g::text || '-' || h::text), ''), 'hex') AS b
       FROM generate_series(1, 20000) g, generate_series(1, 64) h GROUP BY g`,
    );
    const child = spawn(
      process.execPath,
      [observatoryCli, 'backup', '--id', 'killed', '--termination-log', join(dir, 'k')],
      {
        env: cliEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const output = await killAtFirstUploadedPart(child);
    printed.push(output);
    expect(output).toContain('relational dump');
    expect(await hasManifest('killed')).toBe(false);
    expect((await objects(`${PREFIX}killed/`)).length).toBeGreaterThan(0);

    const again = await run(['backup', '--id', 'killed', '--termination-log', join(dir, 'k2')]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/removed \d+ objects an unfinished run left/);
    const manifest = await manifestOf('killed');
    const dump = manifest.parts.find((p) => p.part === 'relational')!;
    expect(dump.bytes).toBeGreaterThan(16 * 1024 * 1024);
    await suite.pool.query('DROP TABLE bulk');
  });

  it('never prints a credential, also when the destination refuses them', async () => {
    const r = await run(['backup', '--id', 'refused', '--termination-log', join(dir, 'r')], {
      [BACKUP_S3_ENV.secretAccessKey]: `wrong${randomBytes(8).toString('hex')}`,
    });
    expect(r.code).toBe(1);
    const wrong = `${r.stdout}${r.stderr}`;
    expect(wrong).not.toMatch(/wrong[0-9a-f]{16}/);
    for (const text of printed) {
      expect(text).not.toContain(suite.s3.secretAccessKey);
      expect(text).not.toContain(suite.s3.accessKeyId);
    }
  });
});

/** Output of `child` until its first uploaded part is reported, then SIGKILL; bounded. */
function killAtFirstUploadedPart(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no upload progress within ${BACKUP_RUN_TIMEOUT_MS} ms: ${out}`));
    }, BACKUP_RUN_TIMEOUT_MS);
    const onData = (c: Buffer) => {
      out += c.toString();
      if (out.includes('relational dump')) child.kill('SIGKILL');
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(out);
      else reject(new Error(`backup ended by itself (${code}) before it was killed: ${out}`));
    });
  });
}
