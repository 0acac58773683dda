/** Tables for the estimates `kubectl observatory plan` shows before each backfill step. */
import { describe, expect, it } from 'vitest';
import {
  bytesText,
  durationText,
  type Estimates,
  estimatesOf,
  renderEstimates,
} from '../../operator/kubectl/estimates.ts';
import { renderPlan } from '../../operator/kubectl/plan-view.ts';
import type { BackfillReport, BackfillStep } from '../../server/contract/worker-api.ts';
import { reconciledPlan } from '../fixtures/operator/plan-view.ts';

const GIB = 1024 ** 3;
const T0 = '2026-11-27T10:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

const step = (
  n: number,
  status: BackfillStep['status'],
  chunksDone: number,
  chunksTotal: number,
): BackfillStep => ({
  step: n,
  name: `step-${n}`,
  status,
  chunksDone,
  chunksTotal,
  finishedAt: null,
  failedAt: null,
  failedReason: null,
  lockedBy: null,
});
const source = (
  n: number,
  rows: number,
  bytes: number,
  startedAt: string | null,
  checkpointAt: string | null,
) => ({
  step: n,
  rows,
  bytes,
  startedAt,
  checkpointAt,
});

describe('estimatesOf', () => {
  it('is absent without the store in the report (an older worker)', () => {
    expect(estimatesOf(undefined, [1, 2])).toBeUndefined();
    expect(estimatesOf({ steps: [step(1, 'pending', 0, 0)] }, [1])).toBeUndefined();
  });

  const cases: [string, BackfillReport, number[], Estimates['steps']][] = [
    [
      'a step half done: its own rate, half its rows and disk',
      {
        steps: [step(1, 'running', 5, 10)],
        store: {
          freeBytes: 100 * GIB,
          sources: [source(1, 1_000_000, 10 * GIB, T0, at(100))],
          pressure: null,
        },
      },
      [1],
      [
        {
          step: 1,
          name: 'step-1',
          rowsToMove: 500_000,
          diskNeededBytes: 15 * GIB,
          rowsPerSecond: 5_000,
          expectedSeconds: 100,
          rateFrom: 'this step',
        },
      ],
    ],
    [
      'a step not started: the rate of the finished step before it, all its rows',
      {
        steps: [step(1, 'finished', 4, 4), step(2, 'pending', 0, 0)],
        store: {
          freeBytes: 100 * GIB,
          sources: [source(1, 200_000, GIB, T0, at(20)), source(2, 800_000, 4 * GIB, null, null)],
          pressure: null,
        },
      },
      [1, 2],
      [
        {
          step: 2,
          name: 'step-2',
          rowsToMove: 800_000,
          diskNeededBytes: 12 * GIB,
          rowsPerSecond: 10_000,
          expectedSeconds: 80,
          rateFrom: 'earlier steps',
        },
      ],
    ],
    [
      'nothing measured yet: no duration; a disabled step is left out',
      {
        steps: [step(1, 'pending', 0, 0), step(4, 'pending', 0, 0)],
        store: {
          freeBytes: GIB,
          sources: [source(1, 10, 1000, null, null), source(4, 10, 1000, null, null)],
          pressure: null,
        },
      },
      [1, 2, 3],
      [
        {
          step: 1,
          name: 'step-1',
          rowsToMove: 10,
          diskNeededBytes: 3000,
          rowsPerSecond: null,
          expectedSeconds: null,
          rateFrom: null,
        },
      ],
    ],
    [
      'a step planned but with no chunk done: the whole source, no rate of its own',
      {
        steps: [step(1, 'running', 0, 8)],
        store: { freeBytes: GIB, sources: [source(1, 80, 800, T0, null)], pressure: null },
      },
      [1],
      [
        {
          step: 1,
          name: 'step-1',
          rowsToMove: 80,
          diskNeededBytes: 2400,
          rowsPerSecond: null,
          expectedSeconds: null,
          rateFrom: null,
        },
      ],
    ],
  ];
  it.each(cases)('%s', (_, report, enabled, expected) => {
    expect(estimatesOf(report, enabled)?.steps).toEqual(expected);
  });
});

describe('rendering', () => {
  it.each([
    [512, '512 B'],
    [1536, '1.5 KiB'],
    [3 * GIB, '3.0 GiB'],
  ])('bytesText(%d) = %s', (n, text) => expect(bytesText(n)).toBe(text));

  it.each([
    [42, '42s'],
    [600, '10m'],
    [3900, '1h05m'],
    [3 * 86_400, '3d'],
  ])('durationText(%d) = %s', (n, text) => expect(durationText(n)).toBe(text));

  it('shows each step with rows, disk against the free space and the time, flagging a short disk', () => {
    const e: Estimates = {
      freeBytes: 10 * GIB,
      steps: [
        {
          step: 2,
          name: 'observations_to_scratch',
          rowsToMove: 1_234_567,
          diskNeededBytes: 12 * GIB,
          rowsPerSecond: 5_400,
          expectedSeconds: 229,
          rateFrom: 'earlier steps',
        },
        {
          step: 3,
          name: 'scratch_to_events',
          rowsToMove: 10,
          diskNeededBytes: 3000,
          rowsPerSecond: null,
          expectedSeconds: null,
          rateFrom: null,
        },
      ],
    };
    expect(renderEstimates(e)).toEqual([
      'Estimates before each backfill step still to run (analytics store: 10.0 GiB free):',
      '  step 2 (observations_to_scratch): 1,234,567 rows to move, needs about 12.0 GiB free (SHORT: the step will pause), about 4m at 5,400 rows/s (earlier steps)',
      '  step 3 (scratch_to_events): 10 rows to move, needs about 2.9 KiB free, duration unknown until a chunk finishes',
    ]);
    expect(renderPlan(reconciledPlan({ estimates: e }))).toContain(
      `No actions: the object is reconciled.\n${renderEstimates(e).join('\n')}\n`,
    );
    expect(renderEstimates({ freeBytes: GIB, steps: [] })).toEqual([]);
  });
});
