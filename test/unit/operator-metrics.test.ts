// The operator's per-object series (operator/runtime/service-series.ts) by tables: what each status
// yields for the alerts and the dashboard, and the registry keeping each object's series apart,
// dropping those a pass no longer yields and forgetting a deleted object. Also the worker's
// propagation gauges.
import { describe, expect, it } from 'vitest';
import type { Condition, ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import type { BackfillReport } from '../../operator/planner/types.ts';
import { operatorMetrics } from '../../operator/runtime/serve.ts';
import { type Sample, serviceSeries } from '../../operator/runtime/service-series.ts';
import { workerMetrics } from '../../server/app/worker/metrics.ts';

const at = '2026-01-01T00:00:00Z';
const cond = (type: Condition['type'], status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: at,
});
const unknown: BackfillReport = { known: false };

/** The samples of one gauge that are set to 1, as `label=value` strings (one-hot gauges). */
const hot = (samples: Sample[], gauge: Sample['gauge']) =>
  samples
    .filter((s) => s.gauge === gauge && s.value === 1)
    .map((s) =>
      Object.entries(s.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    );
const values = (samples: Sample[], gauge: Sample['gauge']) =>
  samples.filter((s) => s.gauge === gauge).map((s) => ({ ...s.labels, value: s.value }));

describe('per-object series from the status', () => {
  const backfill = (completedSteps: number, currentStep?: number) => ({
    completedSteps,
    totalSteps: 4,
    progress: `${completedSteps}/4`,
    ...(currentStep ? { currentStep } : {}),
  });
  it.each<[string, ObservabilityServiceStatus, string[]]>([
    ['no backfill yet', { state: 'Legacy' }, []],
    [
      'step 2 running',
      {
        state: 'Dual',
        backfill: backfill(1, 2),
        conditions: [cond('BackfillComplete', 'False', 'BackfillRunning')],
      },
      ['step=1,state=succeeded', 'step=2,state=running', 'step=3,state=pending', 'step=4,state=pending'],
    ],
    [
      'step 3 failed',
      {
        state: 'Dual',
        backfill: backfill(2, 3),
        conditions: [cond('BackfillComplete', 'False', 'BackfillStepFailed')],
      },
      ['step=1,state=succeeded', 'step=2,state=succeeded', 'step=3,state=failed', 'step=4,state=pending'],
    ],
    [
      'all finished',
      {
        state: 'Dual',
        backfill: backfill(4),
        conditions: [cond('BackfillComplete', 'True', 'AllStepsFinished')],
      },
      [
        'step=1,state=succeeded',
        'step=2,state=succeeded',
        'step=3,state=succeeded',
        'step=4,state=succeeded',
      ],
    ],
  ])('backfill step states: %s', (_case, status, expected) => {
    const { samples } = serviceSeries(status, unknown);
    expect(hot(samples, 'backfillStepState')).toEqual(expected);
    // Every step has one sample per state, exactly one of them 1.
    expect(values(samples, 'backfillStepState')).toHaveLength(expected.length * 4);
    expect(values(samples, 'backfillStepsCompleted')).toEqual([
      { value: status.backfill?.completedSteps ?? 0 },
    ]);
  });

  it('one state and one status per condition set to 1, the others 0', () => {
    const { samples } = serviceSeries(
      {
        state: 'Dual',
        conditions: [cond('Ready', 'False', 'Progressing'), cond('Stalled', 'True', 'PreflightFailed')],
      },
      unknown,
    );
    expect(hot(samples, 'state')).toEqual(['state=Dual']);
    expect(values(samples, 'state')).toHaveLength(4);
    expect(hot(samples, 'condition')).toEqual([
      'condition=Ready,status=False',
      'condition=Stalled,status=True',
    ]);
    expect(values(samples, 'condition')).toHaveLength(6);
  });

  it.each<[string, Condition | undefined, number | undefined]>([
    ['gates closed', cond('CutoverReady', 'False', 'GatesClosed'), Date.parse(at) / 1000],
    ['not requested', cond('CutoverReady', 'Unknown', 'CutoverNotRequested'), undefined],
    ['all gates hold', cond('CutoverReady', 'True', 'AllGatesHold'), undefined],
    ['cutover done', cond('CutoverReady', 'True', 'CutoverDone'), undefined],
    ['no condition', undefined, undefined],
  ])('cutover blocked since: %s', (_case, c, since) => {
    const { samples } = serviceSeries({ state: 'Dual', conditions: c ? [c] : [] }, unknown);
    expect(values(samples, 'cutoverBlockedSince')).toEqual(since === undefined ? [] : [{ value: since }]);
  });

  it.each<[string, NonNullable<ObservabilityServiceStatus['backupSchedule']> | undefined, number[]]>([
    ['no schedule', undefined, []],
    [
      'no success yet: counted from when the schedule began',
      { since: '2026-03-01T00:00:00.000Z', allowedAgeSeconds: 176_400 },
      [Date.parse('2026-03-01T00:00:00.000Z') / 1000, 176_400],
    ],
    [
      'the latest success',
      {
        since: '2026-03-01T00:00:00.000Z',
        allowedAgeSeconds: 10_800,
        lastSuccessful: { id: 'scheduled-x', finishedAt: '2026-03-02T03:04:00.000Z' },
      },
      [Date.parse('2026-03-02T03:04:00.000Z') / 1000, 10_800],
    ],
  ])('backup overdue inputs: %s', (_case, backupSchedule, want) => {
    const { samples } = serviceSeries(
      { state: 'Dual', ...(backupSchedule ? { backupSchedule } : {}) },
      unknown,
    );
    expect([...values(samples, 'backupLastSuccess'), ...values(samples, 'backupAllowedAge')]).toEqual(
      want.map((value) => ({ value })),
    );
  });

  it('chunk counts come from the worker report; without an answer the last ones stay', () => {
    const report: BackfillReport = {
      known: true,
      steps: [
        { step: 1, status: 'finished', chunksDone: 8, chunksTotal: 8 },
        { step: 2, status: 'running', chunksDone: 3, chunksTotal: 10 },
      ],
    };
    const known = serviceSeries({ state: 'Dual' }, report);
    expect(values(known.samples, 'backfillStepChunksDone')).toEqual([
      { step: '1', value: 8 },
      { step: '2', value: 3 },
    ]);
    expect(values(known.samples, 'backfillStepChunksPlanned')).toEqual([
      { step: '1', value: 8 },
      { step: '2', value: 10 },
    ]);
    expect(known.replaces).toContain('backfillStepChunksDone');
    const silent = serviceSeries({ state: 'Dual' }, unknown);
    expect(values(silent.samples, 'backfillStepChunksDone')).toEqual([]);
    expect(silent.replaces).not.toContain('backfillStepChunksDone');
    expect(silent.replaces).not.toContain('backfillStepChunksPlanned');
  });
});

/** The sample lines of one metric family in the exposition text. */
async function lines(registry: { metrics(): Promise<string> }, name: string): Promise<string[]> {
  return (await registry.metrics())
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

describe('the operator registry', () => {
  const blocked = { state: 'Dual' as const, conditions: [cond('CutoverReady', 'False', 'GatesClosed')] };

  it('keeps the series of each object apart', async () => {
    const m = operatorMetrics();
    m.objects.record('a', 'one', serviceSeries({ state: 'Dual' }, unknown));
    m.objects.record('b', 'two', serviceSeries({ state: 'Legacy' }, unknown));
    const hotStates = (await lines(m.registry, 'observatory_service_state')).filter((l) => l.endsWith(' 1'));
    expect(hotStates).toEqual([
      'observatory_service_state{namespace="a",name="one",state="Dual"} 1',
      'observatory_service_state{namespace="b",name="two",state="Legacy"} 1',
    ]);
  });

  it('drops a series the next pass no longer yields, and an object that was deleted', async () => {
    const m = operatorMetrics();
    m.objects.record('a', 'one', serviceSeries(blocked, unknown));
    m.objects.record('b', 'two', serviceSeries(blocked, unknown));
    expect(await lines(m.registry, 'observatory_cutover_blocked_since_timestamp_seconds')).toEqual([
      'observatory_cutover_blocked_since_timestamp_seconds{namespace="a",name="one"} 1767225600',
      'observatory_cutover_blocked_since_timestamp_seconds{namespace="b",name="two"} 1767225600',
    ]);
    m.objects.record('a', 'one', serviceSeries({ state: 'EventsOnly' }, unknown));
    expect(await lines(m.registry, 'observatory_cutover_blocked_since_timestamp_seconds')).toEqual([
      'observatory_cutover_blocked_since_timestamp_seconds{namespace="b",name="two"} 1767225600',
    ]);
    m.objects.forget('b', 'two');
    expect(await lines(m.registry, 'observatory_cutover_blocked_since_timestamp_seconds')).toEqual([]);
    expect((await lines(m.registry, 'observatory_service_state')).some((l) => l.includes('"two"'))).toBe(
      false,
    );
  });

  it('keeps the chunk counts of a pass in which the worker did not answer', async () => {
    const m = operatorMetrics();
    const report: BackfillReport = {
      known: true,
      steps: [{ step: 2, status: 'running', chunksDone: 3, chunksTotal: 10 }],
    };
    m.objects.record('a', 'one', serviceSeries({ state: 'Dual' }, report));
    m.objects.record('a', 'one', serviceSeries({ state: 'Dual' }, unknown));
    expect(await lines(m.registry, 'observatory_backfill_step_chunks_done')).toEqual([
      'observatory_backfill_step_chunks_done{namespace="a",name="one",step="2"} 3',
    ]);
  });
});

describe('the worker registry', () => {
  it('exports the propagation backlog, lag and the time of the last successful run in seconds', async () => {
    const m = workerMetrics();
    m.onPropagation({ backlog: 2, lastProcessedDelaySeconds: 250, lastSuccessAt: 1_767_225_600_500 });
    expect(await lines(m.registry, 'observatory_event_propagation_partition_backlog')).toEqual([
      'observatory_event_propagation_partition_backlog 2',
    ]);
    expect(
      await lines(m.registry, 'observatory_event_propagation_last_processed_partition_delay_seconds'),
    ).toEqual(['observatory_event_propagation_last_processed_partition_delay_seconds 250']);
    expect(await lines(m.registry, 'observatory_event_propagation_last_success_timestamp_seconds')).toEqual([
      'observatory_event_propagation_last_success_timestamp_seconds 1767225600.5',
    ]);
  });
});
