/**
 * `observatory models load FILE` on real PostgreSQL, run as a deployment runs it: the repository's
 * price file loads whole, a second load changes nothing, a file with newer prices replaces an
 * entry, one with older prices does not undo it, and an invalid file exits 2 naming the entry and
 * field without loading anything. Rows are read back with SQL, not through the loader's code.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { cli, ROOT } from '../fixtures/service.ts';

const BUILT_IN = join(ROOT, 'server/features/models/prices/built-in.json');
const entries = JSON.parse(readFileSync(BUILT_IN, 'utf8')) as Record<string, unknown>[];
const GPT_4O = 'b9854a5c92dc496b997d99d20';

let pgf: PostgresFixture;
let pool: pg.Pool;
let dir: string;
const env = () => ({ DATABASE_URL: pgf.url });

beforeAll(async () => {
  pgf = await startPostgres();
  pool = new pg.Pool({ connectionString: pgf.url, max: 1 });
  dir = mkdtempSync(join(tmpdir(), 'obs-models-cli-'));
});
afterAll(async () => {
  await pool?.end();
  await pgf?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, body: unknown) => {
  const file = join(dir, name);
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
  return file;
};
const gpt4oInputPrice = async () =>
  (
    await pool.query<{ price: number; source_date: Date }>(
      `SELECT (pricing_tiers->0->'prices'->>'input')::float8 AS price, source_date FROM models WHERE id = $1 AND project_id IS NULL`,
      [GPT_4O],
    )
  ).rows[0];

describe('observatory models load', () => {
  it('loads the repository price file, then finds nothing to change', async () => {
    const first = await cli(['models', 'load', BUILT_IN, '--json'], env());
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      file: BUILT_IN,
      entries: entries.length,
      inserted: entries.length,
      updated: 0,
      unchanged: 0,
    });
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM models WHERE project_id IS NULL');
    expect(rows[0].n).toBe(entries.length);
    expect((await gpt4oInputPrice())?.price).toBe(2.5e-6);
    const again = await cli(['models', 'load', BUILT_IN, '--json'], env());
    expect(JSON.parse(again.stdout)).toMatchObject({ inserted: 0, updated: 0, unchanged: entries.length });
  });

  it('newer prices replace an entry; older ones do not undo them', async () => {
    const gpt4o = entries.find((e) => e['id'] === GPT_4O)!;
    const priced = (price: number, sourceDate: string) => ({
      ...gpt4o,
      sourceDate,
      pricingTiers: [
        { id: 't', name: 'Standard', isDefault: true, priority: 0, conditions: [], prices: { input: price } },
      ],
    });
    const newer = await cli(
      ['models', 'load', write('newer.json', [priced(2e-6, '2099-01-01')]), '--json'],
      env(),
    );
    expect(JSON.parse(newer.stdout)).toMatchObject({ inserted: 0, updated: 1, unchanged: 0 });
    expect(await gpt4oInputPrice()).toEqual({ price: 2e-6, source_date: expect.any(Date) });
    const older = await cli(
      ['models', 'load', write('older.json', [priced(9e-6, '2020-01-01')]), '--json'],
      env(),
    );
    expect(JSON.parse(older.stdout)).toMatchObject({ updated: 0, unchanged: 1 });
    expect((await gpt4oInputPrice())?.price).toBe(2e-6);
  });

  it.each([
    ['an entry without a source', [{ ...entries[0], id: 'x', source: undefined }], /0\.source/],
    [
      'a pattern RE2 cannot compile (a back-reference)',
      [{ ...entries[0], id: 'x', matchPattern: '(a)\\1' }],
      /0\.matchPattern/,
    ],
    [
      'two default tiers',
      [
        {
          ...entries[0],
          id: 'x',
          pricingTiers: [entries[0]!['pricingTiers'], entries[0]!['pricingTiers']]
            .flat()
            .map((t, i) => ({ ...(t as object), name: `t${i}`, priority: i, conditions: [] })),
        },
      ],
      /0\.pricingTiers/,
    ],
    ['not JSON', 'nope', /not JSON/],
  ])('refuses %s: exit 2, nothing loaded', async (_, body, message) => {
    const before = await pool.query('SELECT count(*)::int AS n FROM models');
    const r = await cli(['models', 'load', write('bad.json', body)], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect((await pool.query('SELECT count(*)::int AS n FROM models')).rows[0].n).toBe(before.rows[0].n);
  });

  it('usage errors exit 2', async () => {
    expect((await cli(['models', 'load'], env())).code).toBe(2);
    expect((await cli(['models', 'load', join(dir, 'missing.json')], env())).code).toBe(2);
  });
});
