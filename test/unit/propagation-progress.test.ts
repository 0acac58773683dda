// The resume record of a partition propagated in chunks: only a whole record of the same
// partition resumes; anything else starts the partition over (its chunks write identical rows).
import { describe, expect, it } from 'vitest';
import { progressFor, progressRecord } from '../../server/app/worker/propagation/progress.ts';
import type { Chunk } from '../../server/features/backfill/chunks.ts';

const P = '2026-11-01 00:00:00';
const CHUNKS: Chunk[] = [
  { partition: '1761955200', from: null, to: ['p', 't5'] },
  { partition: '1761955200', from: ['p', 't5'], to: null },
];

describe('progressFor', () => {
  it.each([
    ['nothing stored', null, undefined],
    ['an empty value', '', undefined],
    ['not JSON', '{', undefined],
    ['another partition', progressRecord('2026-11-01 00:03:00', CHUNKS, 1), undefined],
    ['no chunks', JSON.stringify({ partition: P, chunks: [], done: 0 }), undefined],
    ['more done than chunks', JSON.stringify({ partition: P, chunks: CHUNKS, done: 3 }), undefined],
    ['a negative count', JSON.stringify({ partition: P, chunks: CHUNKS, done: -1 }), undefined],
    [
      'a bad bound',
      JSON.stringify({ partition: P, chunks: [{ ...CHUNKS[0], to: [1] }], done: 0 }),
      undefined,
    ],
    ['none done yet', progressRecord(P, CHUNKS, 0), { partition: P, chunks: CHUNKS, done: 0 }],
    ['one done', progressRecord(P, CHUNKS, 1), { partition: P, chunks: CHUNKS, done: 1 }],
    ['all done', progressRecord(P, CHUNKS, 2), { partition: P, chunks: CHUNKS, done: 2 }],
  ])('%s', (_, raw, expected) => {
    expect(progressFor(raw, P)).toEqual(expected);
  });
});
