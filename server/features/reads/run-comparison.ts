/**
 * Runs of a dataset side by side (pure): one row per dataset item with each run's result for it
 * (output, trace, scores) in the order of the runs asked for, and per run the mean of each
 * numeric score over its items.
 */
import type { RowScore } from './row-scores.ts';

export interface RunResult {
  runId: string;
  itemId: string;
  traceId: string;
  /** The output as stored (JSON text or plain text). */
  output: string | null;
  scores: RowScore[];
}

export interface ComparedItem<I> {
  item: I;
  results: (RunResult | null)[];
}

export function compareRuns<I extends { id: string }>(
  items: I[],
  runIds: string[],
  results: RunResult[],
): { rows: ComparedItem<I>[]; means: Record<string, number>[] } {
  const byKey = new Map<string, RunResult>();
  // A run that ran an item twice shows its first result, as its run items list it first.
  for (const r of results) {
    const key = `${r.runId}\u0000${r.itemId}`;
    if (!byKey.has(key)) byKey.set(key, r);
  }
  const rows = items.map((item) => ({
    item,
    results: runIds.map((run) => byKey.get(`${run}\u0000${item.id}`) ?? null),
  }));
  const means = runIds.map((run) => {
    const sums = new Map<string, { sum: number; n: number }>();
    for (const row of rows) {
      const r = row.results[runIds.indexOf(run)];
      for (const s of r?.scores ?? []) {
        if (typeof s.value !== 'number') continue;
        const acc = sums.get(s.name) ?? { sum: 0, n: 0 };
        sums.set(s.name, { sum: acc.sum + s.value, n: acc.n + 1 });
      }
    }
    return Object.fromEntries([...sums].map(([name, { sum, n }]) => [name, sum / n]));
  });
  return { rows, means };
}
