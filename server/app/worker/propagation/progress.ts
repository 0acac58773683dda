/**
 * The resume record of a staging partition propagated in chunks (pure): the chunks planned for it
 * and how many committed. Kept in the coordination store beside the cursor, so a worker that dies
 * between chunks (or another replica taking the lease) resumes with the same chunks; a chunk
 * that ran without being recorded runs again and writes identical rows, which FINAL collapses.
 */
import { z } from 'zod';
import type { Chunk } from '../../../features/backfill/chunks.ts';

const keySchema = z.array(z.string());
const chunkSchema = z.object({ partition: z.string(), from: keySchema.nullable(), to: keySchema.nullable() });

const chunkProgressSchema = z.object({
  /** The partition's value (the cursor's form). */
  partition: z.string(),
  chunks: z.array(chunkSchema).min(1),
  done: z.number().int().min(0),
});
type ChunkProgress = z.infer<typeof chunkProgressSchema>;

/** The stored record when it belongs to `partition` and is whole; otherwise the partition starts over. */
export function progressFor(raw: string | null, partition: string): ChunkProgress | undefined {
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = chunkProgressSchema.safeParse(value);
  if (!parsed.success || parsed.data.partition !== partition) return undefined;
  return parsed.data.done > parsed.data.chunks.length ? undefined : parsed.data;
}

export const progressRecord = (partition: string, chunks: Chunk[], done: number): string =>
  JSON.stringify({ partition, chunks, done } satisfies ChunkProgress);
