/**
 * How a backfill step cuts its source table into chunks (pure). A chunk is one partition and a
 * range of the table's sort key, [from, to): the store prunes every other range through its
 * primary index, so a chunk reads, merges (FINAL) and joins only its own rows and its memory does
 * not grow with the table. Boundaries come from a sample of the partition's keys (a partition within
 * one chunk needs none), so the chunks follow the data's distribution (projects, days, trace ids). The first and last chunk of a
 * partition are open-ended, so the chunks cover every key, also keys written after planning.
 */

/** A sort-key column of the source table as an expression, and the type its bounds are bound as. */
export interface KeyColumn {
  expr: string;
  type: 'String' | 'Date';
}

/** A key: one value per key column, in the text form the store prints and parses. */
export type Key = string[];

export interface Chunk {
  partition: string;
  /** Inclusive lower bound; null: from the partition's first key. */
  from: Key | null;
  /** Exclusive upper bound; null: to the partition's last key. */
  to: Key | null;
}

/** A partition as the planner sees it: its row count and a sorted sample of its keys. */
export interface PartitionSample {
  partition: string;
  rows: number;
  sample: Key[];
}

/** Keys sampled per chunk the partition needs, so chunk sizes stay within a few percent. */
const SAMPLES_PER_CHUNK = 64;
const MIN_SAMPLE = 1_000;
const MAX_SAMPLE = 100_000;

/** How many keys to sample from a partition of `rows` rows (a literal of the sampling query). */
export const sampleSize = (rows: number, chunkRows: number): number =>
  Math.min(MAX_SAMPLE, Math.max(MIN_SAMPLE, Math.ceil(rows / chunkRows) * SAMPLES_PER_CHUNK));

const sameKey = (a: Key, b: Key) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Chunks of about `chunkRows` rows each, partitions in the order given. Boundaries are evenly spaced
 * keys of the sorted sample; equal neighbours merge, so a key shared by many rows (a large trace)
 * stays in one chunk.
 */
export function planChunks(partitions: PartitionSample[], chunkRows: number): Chunk[] {
  return partitions.flatMap(({ partition, rows, sample }) => {
    const count = Math.min(Math.ceil(rows / chunkRows), sample.length);
    const bounds: Key[] = [];
    for (let i = 1; i < count; i++) {
      const key = sample[Math.floor((i * sample.length) / count)]!;
      const last = bounds[bounds.length - 1] ?? sample[0]!;
      if (!sameKey(key, last)) bounds.push(key);
    }
    const edges = [null, ...bounds, null];
    return edges.slice(1).map((to, i) => ({ partition, from: edges[i]!, to }));
  });
}

/** The condition of a chunk over `columns` (lexicographic, as the sort key orders) and its parameters. */
export interface KeyRange {
  sql: string;
  params: Record<string, string>;
}

/**
 * `columns` in [from, to), written as comparisons of single key columns (the primary index uses
 * those; it ignores tuple comparisons). `columns` may name the same key under other expressions
 * (the trace table's `id` for the scratch table's `trace_id`); the parameters are shared.
 */
export function keyRange(columns: readonly KeyColumn[], chunk: Chunk): KeyRange {
  const params: Record<string, string> = { partition: chunk.partition };
  const bound = (side: 'lo' | 'hi', key: Key | null, last: '>=' | '<'): string => {
    if (!key) return '';
    if (key.length !== columns.length) {
      throw new RangeError(
        `chunk bound ${JSON.stringify(key)} has ${key.length} values, the key ${columns.length}`,
      );
    }
    const param = (i: number) => {
      params[`${side}${i}`] = key[i]!;
      return `{${side}${i}:${columns[i]!.type}}`;
    };
    const strict = last === '>=' ? '>' : '<';
    const alternatives = columns.map((c, i) => {
      const equal = columns.slice(0, i).map((p, j) => `${p.expr} = ${param(j)}`);
      const op = i === columns.length - 1 ? last : strict;
      return [...equal, `${c.expr} ${op} ${param(i)}`].join(' AND ');
    });
    return alternatives.length === 1
      ? alternatives[0]!
      : `(${alternatives.map((a) => `(${a})`).join(' OR ')})`;
  };
  const parts = [bound('lo', chunk.from, '>='), bound('hi', chunk.to, '<')].filter((p) => p !== '');
  return { sql: parts.length === 0 ? '1' : parts.join(' AND '), params };
}
