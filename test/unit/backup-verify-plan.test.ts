/**
 * The pure parts of backup verification: reading the store's `.backup` index (deduplicated
 * entries resolved through `data_file`), each table's exact rows and checksum, the scratch names,
 * the comparison with the manifest, and the verdict.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  analyticsTables,
  keepForTables,
  parseBackupIndex,
  tableOf,
} from '../../server/features/backup/analytics-tables.ts';
import {
  digestPart,
  dropDatabaseStatement,
  restoreAsStatement,
  summaryOf,
} from '../../server/features/backup/plan.ts';
import {
  compareTables,
  scratchNames,
  verifySummary,
  verifyText,
} from '../../server/features/backup/verify-plan.ts';

const INDEX = `<config><version>1</version><deduplicate_files>1</deduplicate_files><contents>
<file><name>data/default/a/all_1_1_0/count.txt</name><size>1</size><checksum>x</checksum></file>
<file><name>data/default/a/all_1_1_0/data.bin</name><size>4</size><checksum>y</checksum></file>
<file><name>data/default/a/all_2_2_0/count.txt</name><size>1</size><checksum>x</checksum><data_file>data/default/a/all_1_1_0/count.txt</data_file></file>
<file><name>data/default/b%2Dc/all_1_1_0/count.txt</name><size>1</size><checksum>x</checksum><data_file>data/default/a/all_1_1_0/count.txt</data_file></file>
<file><name>data/default/b%2Dc/all_1_1_0/empty.txt</name><size>0</size><checksum>z</checksum></file>
<file><name>metadata/default/a.sql</name><size>14</size><checksum>m</checksum></file>
<file><name>metadata/default/v.sql</name><size>27</size><checksum>n</checksum></file>
<file><name>metadata/default.sql</name><size>23</size><checksum>d</checksum></file>
</contents></config>`;

const OBJECTS: Record<string, string> = {
  'data/default/a/all_1_1_0/count.txt': '7',
  'data/default/a/all_1_1_0/data.bin': 'abcd',
  'metadata/default/a.sql': 'CREATE TABLE a',
  'metadata/default/v.sql': 'CREATE MATERIALIZED VIEW v ',
};

/** The objects as the part's read records them: size, own sha256, content (all kept here). */
const reader = (objects: Record<string, string>) => (key: string) => {
  const body = objects[key];
  if (body === undefined) return undefined;
  const content = Buffer.from(body);
  return { size: content.length, sha256: createHash('sha256').update(content).digest('hex'), content };
};

describe('the .backup index', () => {
  it('resolves deduplicated entries to the object holding them', () => {
    const entries = parseBackupIndex(INDEX);
    expect(entries).toHaveLength(8);
    expect(entries[2]).toEqual({
      name: 'data/default/a/all_2_2_0/count.txt',
      size: 1,
      object: 'data/default/a/all_1_1_0/count.txt',
    });
  });

  it.each([
    ['data/default/traces/all_1_1_0/count.txt', 'traces'],
    ['data/default/b%2Dc/all_1_1_0/data.bin', 'b-c'],
    ['metadata/default/events_core_mv.sql', 'events_core_mv'],
    ['metadata/default.sql', undefined],
    ['.backup', undefined],
  ])('%s belongs to table %s', (name, table) => expect(tableOf(name)).toBe(table));
});

describe('analyticsTables', () => {
  it('sums every part’s count.txt, shared objects included, and tells views apart', () => {
    const tables = analyticsTables(parseBackupIndex(INDEX), reader(OBJECTS));
    expect(tables.map(({ sha256: _, ...t }) => t)).toEqual([
      { table: 'a', rows: 14, view: false },
      { table: 'b-c', rows: 7, view: false },
      { table: 'v', rows: 0, view: true },
    ]);
  });

  it('changes only the checksum of the table whose object changed', () => {
    const before = analyticsTables(parseBackupIndex(INDEX), reader(OBJECTS));
    const after = analyticsTables(
      parseBackupIndex(INDEX),
      reader({ ...OBJECTS, 'data/default/a/all_1_1_0/data.bin': 'abce' }),
    );
    expect(after.map((t) => t.sha256 === before.find((b) => b.table === t.table)!.sha256)).toEqual([
      false,
      true,
      true,
    ]);
  });

  it('marks a table whose object is missing or has another size than its entry, and a count that is no number', () => {
    const tables = analyticsTables(
      parseBackupIndex(INDEX),
      reader({ ...OBJECTS, 'data/default/a/all_1_1_0/data.bin': 'ab' }),
    );
    expect(tables[0]!.problem).toBe(
      "data/default/a/all_1_1_0/data.bin has 2 bytes, the backup's index lists 4",
    );
    const bad = analyticsTables(
      parseBackupIndex(INDEX),
      reader({ ...OBJECTS, 'data/default/a/all_1_1_0/count.txt': 'x' }),
    );
    expect(bad[0]!.problem).toBe('data/default/a/all_1_1_0/count.txt is not a row count');
    const { 'data/default/a/all_1_1_0/data.bin': _, ...missing } = OBJECTS;
    expect(analyticsTables(parseBackupIndex(INDEX), reader(missing))[0]!.problem).toBe(
      'data/default/a/all_1_1_0/data.bin has no object (data/default/a/all_1_1_0/data.bin)',
    );
  });

  it.each([
    ['b1/analytics/data/default/t/all_1_1_0/count.txt', 5, true],
    ['b1/analytics/data/default/t/all_1_1_0/metadata_version.txt', 1, true],
    ['b1/analytics/metadata/default/events_core.sql', 4390, true],
    ['b1/analytics/.backup', 1_000_000, true],
    ['b1/analytics/data/default/t/all_1_1_0/data.bin', 8000, false],
  ])('keeps %s (%i bytes) to read: %s', (key, size, kept) => expect(keepForTables(key, size)).toBe(kept));
});

describe('scratchNames', () => {
  it.each([
    ['observatory', 'default', 'observatory_verify', 'default_verify'],
    ['d'.repeat(70), 'x', `${'d'.repeat(56)}_verify`, 'x_verify'],
  ])('%s / %s', (relational, analytics, pgName, chName) => {
    const n = scratchNames(relational, analytics);
    expect(n).toEqual({ relational: pgName, analytics: chName });
    expect(n.relational.length).toBeLessThanOrEqual(63);
  });
});

const sha = (c: string) => c.repeat(64);

describe('compareTables', () => {
  const recorded = [
    { table: 'a', rows: 3, sha256: sha('a') },
    { table: 'b', rows: 5, sha256: sha('b') },
    { table: 'c', rows: 0 },
  ];
  it.each([
    [
      'all as recorded',
      [
        { table: 'a', rows: 3 },
        { table: 'b', rows: 5 },
        { table: 'c', rows: 0 },
      ],
      [],
    ],
    [
      'a row count differs',
      [
        { table: 'a', rows: 3 },
        { table: 'b', rows: 4 },
        { table: 'c', rows: 0 },
      ],
      [{ part: 'analytics', table: 'b', detail: '4 rows restored, recorded 5' }],
    ],
    [
      'a checksum differs (named before its rows)',
      [
        { table: 'a', rows: 2, sha256: sha('f') },
        { table: 'b', rows: 5, sha256: sha('b') },
        { table: 'c', rows: 0 },
      ],
      [{ part: 'analytics', table: 'a', detail: `its objects' sha256 is ${sha('f')}, recorded ${sha('a')}` }],
    ],
    [
      'a table missing and one not recorded',
      [
        { table: 'a', rows: 3 },
        { table: 'c', rows: 0 },
        { table: 'd', rows: 1 },
      ],
      [
        { part: 'analytics', table: 'b', detail: 'recorded with 5 rows, missing restored' },
        { part: 'analytics', table: 'd', detail: 'restored but not in the manifest' },
      ],
    ],
    [
      'an unreadable table',
      [
        { table: 'a', rows: 3, problem: 'x has 1 bytes' },
        { table: 'b', rows: 5 },
        { table: 'c', rows: 0 },
      ],
      [{ part: 'analytics', table: 'a', detail: 'x has 1 bytes' }],
    ],
  ])('%s', (_, found, expected) =>
    expect(compareTables('analytics', recorded, found, 'restored')).toEqual(expected),
  );
});

describe('verifySummary', () => {
  const base = { id: 'b1', tables: 12, rows: { analytics: 40, relational: 9 } };
  it.each([
    [
      { ...base, comparable: true, differences: [] },
      'Verified',
      'backup b1 verified: 12 tables compared, analytics 40 rows, relational 9 rows',
    ],
    [
      { ...base, comparable: false, differences: [] },
      'RowsNotRecorded',
      'backup b1 restored (analytics 40 rows, relational 9 rows), but its manifest records no tables: rows cannot be compared',
    ],
    [
      {
        ...base,
        comparable: true,
        differences: [
          { part: 'relational' as const, table: 'public.projects', detail: '1 rows restored, recorded 2' },
          { part: 'relational' as const, detail: 'sha256 differs' },
        ],
      },
      'Differs',
      'backup b1 differs from its manifest (2 differences): relational table public.projects: 1 rows restored, recorded 2',
    ],
  ])('%# %s', (figures, result, text) => {
    const s = verifySummary(figures);
    expect(s.result).toBe(result);
    expect(verifyText(s)).toBe(text);
  });

  it('keeps the message under the termination limit whatever the detail', () => {
    const s = verifySummary({
      ...base,
      comparable: true,
      differences: [{ part: 'analytics', table: 't'.repeat(5000), detail: 'd'.repeat(5000) }],
    });
    expect(Buffer.byteLength(JSON.stringify(s))).toBeLessThan(4096);
  });
});

describe('the scratch RESTORE', () => {
  it('renames the database, leaves the views out, and names the destination once', () => {
    const d = {
      bucket: 'bk',
      prefix: 'p/',
      region: 'r',
      endpoint: 'http://s3.local:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' },
    };
    expect(restoreAsStatement('default', 'default_verify', ['mv', 'v'], d, 'p/b1/analytics/')).toBe(
      "RESTORE DATABASE `default` AS `default_verify` EXCEPT TABLES `default`.`mv`, `default`.`v` FROM S3('http://s3.local:9000/bk/p/b1/analytics/', 'AK', 'SK') SETTINGS allow_different_database_def = true",
    );
    expect(dropDatabaseStatement('default_verify')).toBe('DROP DATABASE IF EXISTS `default_verify` SYNC');
  });
});

describe('the backup summary', () => {
  it('leaves the per-table records out (they would not fit a termination message)', () => {
    const manifest = {
      id: 'b1',
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:01:00.000Z',
      release: '4' as const,
      writeMode: 'dual' as const,
      schema: { relational: 40, analytics: 46 },
      parts: [
        {
          part: 'relational' as const,
          objects: 1,
          bytes: 10,
          sha256: sha('a'),
          tables: Array.from({ length: 500 }, (_, i) => ({ table: `public.t${i}`, rows: i })),
        },
      ],
    };
    expect(JSON.parse(summaryOf(manifest)).parts).toEqual([{ part: 'relational', objects: 1, bytes: 10 }]);
  });
});

describe('digestPart with a recorder', () => {
  it('records each object’s own sha256 and the content it keeps, from the same read', async () => {
    const objects = { 'b1/analytics/a/count.txt': '7', 'b1/analytics/a/data.bin': 'abcd' };
    const files = new Map();
    const read = async function* (key: string) {
      yield Buffer.from(objects[key as keyof typeof objects]);
    };
    const listed = Object.entries(objects).map(([key, body]) => ({ key, size: body.length }));
    const plain = await digestPart(listed, read);
    expect(await digestPart(listed, read, { files, keep: (o) => o.key.endsWith('.txt') })).toEqual(plain);
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(Object.fromEntries(files)).toEqual({
      'b1/analytics/a/count.txt': { size: 1, sha256: sha('7'), content: Buffer.from('7') },
      'b1/analytics/a/data.bin': { size: 4, sha256: sha('abcd') },
    });
  });
});
