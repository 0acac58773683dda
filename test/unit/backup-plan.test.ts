import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type BackupManifest, backupSummarySchema } from '../../server/contract/backup.ts';
import { ANALYTICS_ROLE_BOUNDS, ANALYTICS_TIMEOUT_LIMITS } from '../../server/contract/env.ts';
import {
  backupStatement,
  bucketKeys,
  checkBackupId,
  digestPart,
  dropStatement,
  parseInclude,
  pgConnection,
  redact,
  restoreStatement,
  secretsOf,
  sizedOverrides,
  storeUrl,
  summaryOf,
} from '../../server/features/backup/plan.ts';
import type { S3Settings } from '../../server/kernel/config/blob-storage.ts';

const dest = (over: Partial<S3Settings> = {}): S3Settings => ({
  bucket: 'backups',
  prefix: 'obs/',
  region: 'eu-west-1',
  endpoint: 'http://s3.local:9000',
  forcePathStyle: true,
  credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: "s3cr'et\\x" },
  ...over,
});

describe('backup ids and parts', () => {
  it.each([
    ['b1', 'b1'],
    ['pre-upgrade-2026-11-27', 'pre-upgrade-2026-11-27'],
    [undefined, { problem: '--id is required' }],
    ['B1', { problem: expect.stringContaining('--id B1 must match') }],
    ['-x', { problem: expect.stringContaining('must match') }],
    ['a/b', { problem: expect.stringContaining('must match') }],
    ['x'.repeat(64), { problem: expect.stringContaining('must match') }],
  ])('id %s', (id, expected) => {
    expect(checkBackupId(id)).toEqual(expected);
  });

  it.each([
    [undefined, ['analytics', 'relational']],
    ['relational', ['relational']],
    ['relational, analytics', ['analytics', 'relational']],
    ['analytics,analytics', ['analytics']],
    ['', { problem: expect.stringContaining('--include takes') }],
    ['analytics,blobs', { problem: expect.stringContaining('"analytics,blobs"') }],
  ])('--include %s', (value, expected) => {
    expect(parseInclude(value)).toEqual(expected);
  });

  it('keys carry the destination prefix', () => {
    expect(bucketKeys('obs/', 'b1')).toEqual({
      analytics: 'obs/b1/analytics/',
      relational: 'obs/b1/relational.dump',
      manifest: 'obs/b1/manifest.json',
      all: 'obs/b1/',
    });
    expect(bucketKeys('', 'b1').all).toBe('b1/');
  });
});

describe('analytics statements', () => {
  it.each([
    ['path style', dest(), 'http://s3.local:9000/backups/obs/b1/analytics/'],
    [
      'endpoint with a slash',
      dest({ endpoint: 'http://s3.local:9000/' }),
      'http://s3.local:9000/backups/obs/b1/analytics/',
    ],
    ['virtual host', dest({ forcePathStyle: false }), 'http://backups.s3.local:9000/obs/b1/analytics/'],
    ['AWS', dest({ endpoint: undefined }), 'https://backups.s3.eu-west-1.amazonaws.com/obs/b1/analytics/'],
  ])('the store addresses the destination: %s', (_, d, url) => {
    expect(storeUrl(d, 'obs/b1/analytics/')).toBe(url);
  });

  it('quotes the credentials and the database', () => {
    expect(backupStatement('default', dest(), 'obs/b1/analytics/')).toBe(
      "BACKUP DATABASE `default` TO S3('http://s3.local:9000/backups/obs/b1/analytics/', 'AKIAEXAMPLE', 's3cr\\'et\\\\x')",
    );
    expect(restoreStatement('my`db', dest({ credentials: undefined }), 'b1/analytics/')).toBe(
      "RESTORE DATABASE `my\\`db` FROM S3('http://s3.local:9000/backups/b1/analytics/')",
    );
    expect(dropStatement('default', 'traces')).toBe('DROP TABLE IF EXISTS `default`.`traces` SYNC');
  });
});

describe('credentials never shown', () => {
  const secrets = secretsOf(dest(), 'postgres://obs:p%40ss@db:5432/obs');

  it('collects the destination keys and the database password, longest first', () => {
    expect(secrets).toEqual(['AKIAEXAMPLE', "s3cr'et\\x", 'p%40ss', 'p@ss']);
    expect(secretsOf(undefined, 'postgres://db/obs')).toEqual([]);
  });

  it.each([
    ["S3('u', 'AKIAEXAMPLE', 's3cr\\'et\\x')", "S3('u', '[redacted]', 's3cr\\'et\\x')"],
    ["failed: s3cr'et\\x", 'failed: [redacted]'],
    ["url-encoded s3cr'et%5Cx", 'url-encoded [redacted]'],
    ['postgres://obs:p%40ss@db and p@ss', 'postgres://obs:[redacted]@db and [redacted]'],
    ['nothing secret', 'nothing secret'],
  ])('redacts %s', (text, expected) => {
    expect(redact(text, secrets)).toBe(expected);
  });

  it('pg_dump gets the password in its environment, not its arguments', () => {
    expect(pgConnection('postgres://obs:p%40ss@db:5432/obs?sslmode=require')).toEqual({
      dbname: 'postgres://obs@db:5432/obs?sslmode=require',
      env: { PGPASSWORD: 'p@ss' },
    });
    expect(pgConnection('postgres://db/obs')).toEqual({ dbname: 'postgres://db/obs', env: {} });
  });
});

describe('statement bounds by size', () => {
  const base = ANALYTICS_ROLE_BOUNDS.jobs.maxExecutionTimeSeconds;
  const GiB = 1024 ** 3;
  it.each([
    [0, {}, { maxExecutionTimeSeconds: base, requestTimeoutSeconds: base + 5 }],
    [10 * GiB, {}, { maxExecutionTimeSeconds: base + 2560, requestTimeoutSeconds: base + 2565 }],
    [
      10_000 * GiB,
      {},
      {
        maxExecutionTimeSeconds: ANALYTICS_TIMEOUT_LIMITS.max - 5,
        requestTimeoutSeconds: ANALYTICS_TIMEOUT_LIMITS.max,
      },
    ],
    [10 * GiB, { requestTimeoutSeconds: 60 }, { requestTimeoutSeconds: 60 }],
    [10 * GiB, { maxExecutionTimeSeconds: 30 }, { maxExecutionTimeSeconds: 30 }],
  ])('%d bytes with overrides %j', (bytes, overrides, expected) => {
    expect(sizedOverrides(bytes, overrides)).toEqual(expected);
  });
});

describe('part checksum', () => {
  const content: Record<string, Buffer> = {
    'b1/analytics/.backup': Buffer.from('<backup/>'),
    'b1/analytics/data/t/all_1_1_0/data.bin': Buffer.alloc(70_000, 7),
    'b1/analytics/metadata/default.sql': Buffer.from(''),
  };
  const listed = Object.entries(content).map(([key, b]) => ({ key, size: b.length }));
  async function* chunks(key: string) {
    const b = content[key]!;
    for (let i = 0; i < b.length; i += 32_768) yield b.subarray(i, i + 32_768);
  }
  const expected = () => {
    const h = createHash('sha256');
    for (const [key, b] of Object.entries(content).sort(([a], [b]) => (a < b ? -1 : 1)))
      h.update(`${key}\n${b.length}\n`).update(b);
    return h.digest('hex');
  };

  it.each([
    ['in key order', listed],
    ['listed in any order', [...listed].reverse()],
  ])('hashes keys, sizes and content %s', async (_, objects) => {
    expect(await digestPart(objects, chunks)).toEqual({
      objects: 3,
      bytes: 70_009,
      sha256: expected(),
    });
  });

  it('changes with a key', async () => {
    const renamed = listed.map((o, i) => (i === 0 ? { ...o, key: 'b1/analytics/.backup2' } : o));
    const read = (key: string) => chunks(key === 'b1/analytics/.backup2' ? 'b1/analytics/.backup' : key);
    expect((await digestPart(renamed, read)).sha256).not.toBe(expected());
  });

  it('fails when an object does not have its listed size', async () => {
    const wrong = listed.map((o, i) => (i === 2 ? { ...o, size: 1 } : o));
    await expect(digestPart(wrong, chunks)).rejects.toThrow(
      'object b1/analytics/metadata/default.sql has 0 bytes, listed as 1',
    );
  });
});

describe('termination summary', () => {
  const manifest: BackupManifest = {
    id: 'b1',
    startedAt: '2026-11-27T20:00:00.000Z',
    finishedAt: '2026-11-27T20:01:00.000Z',
    release: '4',
    writeMode: 'dual',
    schema: { relational: 30, analytics: 12 },
    parts: [
      { part: 'analytics', objects: 40, bytes: 123, sha256: 'a'.repeat(64) },
      { part: 'relational', objects: 1, bytes: 45, sha256: 'b'.repeat(64) },
    ],
  };
  it('is the manifest without checksums, under 4096 bytes', () => {
    const text = summaryOf(manifest);
    expect(Buffer.byteLength(text)).toBeLessThan(4096);
    expect(backupSummarySchema.parse(JSON.parse(text))).toEqual({
      ...manifest,
      parts: [
        { part: 'analytics', objects: 40, bytes: 123 },
        { part: 'relational', objects: 1, bytes: 45 },
      ],
    });
    expect(text).not.toContain('sha256');
  });
});
