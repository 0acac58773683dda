import { describe, expect, it } from 'vitest';
import {
  type Chunk,
  type Key,
  keyRange,
  planChunks,
  sampleSize,
} from '../../server/features/backfill/chunks.ts';

const keys = (...ids: string[]): Key[] => ids.map((id) => ['p', id]);

describe('planChunks', () => {
  it.each([
    {
      name: 'a partition within the chunk size is one open range',
      partitions: [{ partition: '202610', rows: 10, sample: keys('a', 'b') }],
      chunkRows: 10,
      expected: [{ partition: '202610', from: null, to: null }],
    },
    {
      name: 'a large partition is cut at evenly spaced sample keys, open at both ends',
      partitions: [{ partition: '202610', rows: 40, sample: keys('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h') }],
      chunkRows: 10,
      expected: [
        { partition: '202610', from: null, to: ['p', 'c'] },
        { partition: '202610', from: ['p', 'c'], to: ['p', 'e'] },
        { partition: '202610', from: ['p', 'e'], to: ['p', 'g'] },
        { partition: '202610', from: ['p', 'g'], to: null },
      ],
    },
    {
      name: 'a key shared by many rows stays in one chunk',
      partitions: [{ partition: '202610', rows: 40, sample: keys('a', 'b', 'b', 'b', 'b', 'b', 'b', 'c') }],
      chunkRows: 10,
      expected: [
        { partition: '202610', from: null, to: ['p', 'b'] },
        { partition: '202610', from: ['p', 'b'], to: null },
      ],
    },
    {
      name: 'no more chunks than sampled keys; partitions keep their order',
      partitions: [
        { partition: '202611', rows: 1000, sample: keys('x', 'y') },
        { partition: '202610', rows: 0, sample: [] },
      ],
      chunkRows: 10,
      expected: [
        { partition: '202611', from: null, to: ['p', 'y'] },
        { partition: '202611', from: ['p', 'y'], to: null },
        { partition: '202610', from: null, to: null },
      ],
    },
  ])('$name', ({ partitions, chunkRows, expected }) => {
    expect(planChunks(partitions, chunkRows)).toEqual(expected);
  });

  it('chunks of a partition tile its key space: each starts where the previous ends', () => {
    const sample = Array.from({ length: 1000 }, (_, i) => ['p', String(i).padStart(4, '0')]);
    const chunks = planChunks([{ partition: 'all', rows: 1_000_000, sample }], 50_000);
    expect(chunks).toHaveLength(20);
    expect(chunks[0]!.from).toBeNull();
    expect(chunks.at(-1)!.to).toBeNull();
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.from).toEqual(chunks[i - 1]!.to);
  });
});

describe('sampleSize', () => {
  it.each([
    [10, 200_000, 1_000],
    [10_000_000, 200_000, 3_200],
    [1_000_000_000, 10_000, 100_000],
  ])('%i rows in chunks of %i: %i keys', (rows, chunkRows, expected) => {
    expect(sampleSize(rows, chunkRows)).toBe(expected);
  });
});

describe('keyRange', () => {
  const key = [
    { expr: 'project_id', type: 'String' as const },
    { expr: 'toDate(start_time)', type: 'Date' as const },
  ];
  const chunk = (from: Key | null, to: Key | null): Chunk => ({ partition: '202610', from, to });

  it.each([
    { name: 'an open range is the whole partition', from: null, to: null, sql: '1', params: {} },
    {
      name: 'a lower bound compares column by column (what the primary index reads)',
      from: ['p', '2026-10-02'],
      to: null,
      sql: '((project_id > {lo0:String}) OR (project_id = {lo0:String} AND toDate(start_time) >= {lo1:Date}))',
      params: { lo0: 'p', lo1: '2026-10-02' },
    },
    {
      name: 'both bounds: from inclusive, to exclusive',
      from: ['p', '2026-10-02'],
      to: ['q', '2026-10-01'],
      sql:
        '((project_id > {lo0:String}) OR (project_id = {lo0:String} AND toDate(start_time) >= {lo1:Date}))' +
        ' AND ((project_id < {hi0:String}) OR (project_id = {hi0:String} AND toDate(start_time) < {hi1:Date}))',
      params: { lo0: 'p', lo1: '2026-10-02', hi0: 'q', hi1: '2026-10-01' },
    },
  ])('$name', ({ from, to, sql, params }) => {
    expect(keyRange(key, chunk(from, to))).toEqual({ sql, params: { partition: '202610', ...params } });
  });

  it('refuses a bound that does not fit the key', () => {
    expect(() => keyRange(key, chunk(['p'], null))).toThrow(/has 1 values, the key 2/);
  });
});
