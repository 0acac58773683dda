/**
 * Work over many items on the main thread, cut into slices that give the event loop back in
 * between, so one large request cannot hold health checks and other requests behind it.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest stretch of synchronous work before the loop gets a turn. */
export const SLICE_MS = 10;

/** Calls `fn` on each item in order, yielding to the event loop whenever a slice has run `sliceMs`. */
export async function forEachInSlices<T>(
  items: readonly T[],
  fn: (item: T) => void,
  { sliceMs = SLICE_MS, clock = () => performance.now() }: { sliceMs?: number; clock?: () => number } = {},
): Promise<void> {
  let start = clock();
  for (const item of items) {
    fn(item);
    if (clock() - start >= sliceMs) {
      await nextTurn();
      start = clock();
    }
  }
}
