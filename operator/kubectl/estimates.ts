/**
 * Estimates `kubectl observatory plan` shows before each backfill step still to run (pure): the
 * rows it moves (its source's rows not yet covered by finished chunks), the free disk it needs
 * (the contract's headroom over the bytes still to move) against what the store has, and the time
 * it takes at the rate measured so far: the step's own chunks, else those of the steps before it.
 */
import { type BackfillReport, diskNeededBytes, type StepSource } from '../../server/contract/worker-api.ts';

export interface StepEstimate {
  step: number;
  name: string;
  rowsToMove: number;
  diskNeededBytes: number;
  /** Rows per second measured on finished chunks; null before any. */
  rowsPerSecond: number | null;
  /** Seconds at that rate; null without one. */
  expectedSeconds: number | null;
  /** Whether the rate is the step's own or that of the steps before it. */
  rateFrom: 'this step' | 'earlier steps' | null;
}

export interface Estimates {
  freeBytes: number;
  steps: StepEstimate[];
}

interface Measured {
  rows: number;
  seconds: number;
}

/** Rows moved and the time they took, from a step's finished chunks. */
function measured(src: StepSource, done: number, total: number): Measured | undefined {
  if (!src.startedAt || !src.checkpointAt || done === 0 || total === 0) return undefined;
  const seconds = (Date.parse(src.checkpointAt) - Date.parse(src.startedAt)) / 1000;
  if (!(seconds > 0)) return undefined;
  return { rows: (src.rows * Math.min(done, total)) / total, seconds };
}

/** Undefined when the worker did not report the store (an older worker, or no answer). */
export function estimatesOf(
  report: BackfillReport | undefined,
  enabled: readonly number[],
): Estimates | undefined {
  const store = report?.store;
  if (!report || !store) return undefined;
  const progress = new Map(report.steps.map((s) => [s.step, s]));
  const steps: StepEstimate[] = [];
  const earlier: Measured = { rows: 0, seconds: 0 };
  for (const src of [...store.sources].sort((a, b) => a.step - b.step)) {
    const p = progress.get(src.step);
    if (!p || !enabled.includes(src.step)) continue;
    const own = measured(src, p.chunksDone, p.chunksTotal);
    if (p.status !== 'finished') {
      const remaining = p.chunksTotal > 0 ? Math.max(0, p.chunksTotal - p.chunksDone) / p.chunksTotal : 1;
      const rowsToMove = Math.round(src.rows * remaining);
      const rate = own
        ? { value: own.rows / own.seconds, from: 'this step' as const }
        : earlier.seconds > 0
          ? { value: earlier.rows / earlier.seconds, from: 'earlier steps' as const }
          : undefined;
      steps.push({
        step: src.step,
        name: p.name,
        rowsToMove,
        diskNeededBytes: diskNeededBytes(src.bytes, p.chunksDone, p.chunksTotal),
        rowsPerSecond: rate ? Math.round(rate.value) : null,
        expectedSeconds: rate && rate.value > 0 ? Math.round(rowsToMove / rate.value) : null,
        rateFrom: rate?.from ?? null,
      });
    }
    if (own) {
      earlier.rows += own.rows;
      earlier.seconds += own.seconds;
    }
  }
  return { freeBytes: store.freeBytes, steps };
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function bytesText(n: number): string {
  let i = 0;
  let v = n;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${UNITS[i]}`;
}

export function durationText(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const m = Math.round(seconds / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h${String(m % 60).padStart(2, '0')}m` : `${Math.round(h / 24)}d`;
}

/** One line per step: rows, disk against what is free, and the time at the measured rate. */
export function renderEstimates(e: Estimates): string[] {
  if (e.steps.length === 0) return [];
  return [
    `Estimates before each backfill step still to run (analytics store: ${bytesText(e.freeBytes)} free):`,
    ...e.steps.map((s) => {
      const disk = `needs about ${bytesText(s.diskNeededBytes)} free${s.diskNeededBytes > e.freeBytes ? ' (SHORT: the step will pause)' : ''}`;
      const time =
        s.expectedSeconds === null
          ? 'duration unknown until a chunk finishes'
          : `about ${durationText(s.expectedSeconds)} at ${s.rowsPerSecond!.toLocaleString('en-US')} rows/s (${s.rateFrom})`;
      return `  step ${s.step} (${s.name}): ${s.rowsToMove.toLocaleString('en-US')} rows to move, ${disk}, ${time}`;
    }),
  ];
}
