/**
 * `observatory backup-prune` (the retention Job the operator runs after a scheduled backup) on the
 * real S3 server: backups planted in the bucket as `observatory backup` lays them out (parts, then
 * the manifest), of several ages, plus an unfinished one and one under another prefix. The prune
 * deletes exactly the objects of the expired complete backups, keeps the protected and the newest,
 * never touches an unfinished folder or another prefix; the bucket's keys are compared, not counted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackupManifest, backupKeys, backupPruneSummarySchema } from '../../server/contract/backup.ts';
import { backupEnv, type S3Server, startS3Server } from '../fixtures/s3.ts';
import { cli, type Env } from '../fixtures/service.ts';

const BUCKET = 'retention';
const PREFIX = 'obs/';
const DAY = 86_400_000;

let s3: S3Server;
let env: Env;
let dir: string;

beforeAll(async () => {
  s3 = await startS3Server();
  await s3.createBucket(BUCKET);
  dir = mkdtempSync(join(tmpdir(), 'obs-retention-'));
  env = backupEnv(s3, BUCKET, PREFIX);
}, 120_000);

afterAll(async () => {
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const put = (key: string, body: string) =>
  s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Buffer.from(body) }));

/** A complete backup as `observatory backup` leaves it: two analytics objects, the dump, the manifest. */
async function plant(id: string, ageDays: number, prefix = PREFIX): Promise<string[]> {
  const at = new Date(Date.now() - ageDays * DAY).toISOString();
  const keys = backupKeys(id);
  const parts = [`${keys.analytics}data/1.bin`, `${keys.analytics}.backup`, keys.relational];
  for (const k of parts) await put(`${prefix}${k}`, `${id}:${k}`);
  const manifest: BackupManifest = {
    id,
    startedAt: at,
    finishedAt: at,
    release: '4',
    writeMode: 'dual',
    schema: { relational: 38, analytics: 46 },
    parts: [
      { part: 'analytics', objects: 2, bytes: 10, sha256: 'a'.repeat(64) },
      { part: 'relational', objects: 1, bytes: 10, sha256: 'b'.repeat(64) },
    ],
  };
  await put(`${prefix}${keys.manifest}`, JSON.stringify(manifest));
  return [...parts, keys.manifest].map((k) => `${prefix}${k}`);
}

async function keysInBucket(): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: token }));
    out.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out.sort();
}

describe('observatory backup-prune on the S3 server', () => {
  it('deletes exactly the expired complete backups, keeping the protected, the newest and the unfinished', async () => {
    const planted: Record<string, string[]> = {};
    for (const [id, age] of [
      ['scheduled-a', 0.1],
      ['scheduled-b', 1.1],
      ['scheduled-c', 2.1],
      ['scheduled-d', 3.1],
      ['release4-old', 9],
      ['scheduled-e', 10],
    ] as const)
      planted[id] = await plant(id, age);
    // A backup whose Job still runs: parts without a manifest.
    await put(`${PREFIX}scheduled-f/analytics/data/1.bin`, 'running');
    // Another deployment's backups under another prefix.
    const foreign = await plant('scheduled-x', 30, 'other/');

    const summaryPath = join(dir, 'summary.json');
    const r = await cli(
      [
        'backup-prune',
        '--keep-last',
        '2',
        '--max-age',
        '2d',
        '--protect',
        'release4-old',
        '--termination-log',
        summaryPath,
        '--json',
      ],
      env,
    );
    expect(r.stderr).not.toContain(s3.secretAccessKey);
    expect(r.code, r.stderr).toBe(0);
    const summary = backupPruneSummarySchema.parse(JSON.parse(readFileSync(summaryPath, 'utf8')));
    expect(summary).toEqual({
      kept: 3,
      newest: 'scheduled-a',
      oldestKeptAt: expect.any(String),
      deletedCount: 3,
      deleted: ['scheduled-c', 'scheduled-d', 'scheduled-e'],
      incomplete: 1,
    });
    expect(JSON.parse(r.stdout)).toEqual(summary);
    // Kept: the newest two (and younger than 2 days), the protected one, the unfinished folder and
    // the other prefix; deleted: every object of c, d and e.
    expect(await keysInBucket()).toEqual(
      [
        ...planted['scheduled-a']!,
        ...planted['scheduled-b']!,
        ...planted['release4-old']!,
        `${PREFIX}scheduled-f/analytics/data/1.bin`,
        ...foreign,
      ].sort(),
    );
  });

  it('keeps the newest backup whatever the age, and refuses a prune without a rule', async () => {
    const r = await cli(['backup-prune', '--max-age', '1s', '--termination-log', join(dir, 's2.json')], env);
    expect(r.code, r.stderr).toBe(0);
    const keys = await keysInBucket();
    expect(keys.filter((k) => k.endsWith('manifest.json')).sort()).toEqual([
      `${PREFIX}scheduled-a/manifest.json`,
      'other/scheduled-x/manifest.json',
    ]);
    const refused = await cli(['backup-prune'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--keep-last');
  });
});
