/**
 * The per-object series the operator exports, computed from the status a pass wrote and the
 * worker's backfill report: pure, so the alerts and the dashboard read numbers whose meaning is
 * fixed by a table test rather than by the order the reconciler happened to set them in.
 */
import { MIGRATION_STATES, type ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import type { BackfillReport } from '../planner/types.ts';

/** The gauges keyed by object (each also carries the `namespace` and `name` labels). */
export type ServiceGauge =
  | 'state'
  | 'condition'
  | 'backfillStepsCompleted'
  | 'backfillStepState'
  | 'backfillStepChunksDone'
  | 'backfillStepChunksPlanned'
  | 'cutoverBlockedSince'
  | 'backupLastSuccess'
  | 'backupAllowedAge';

export interface Sample {
  gauge: ServiceGauge;
  labels: Record<string, string>;
  value: number;
}

export const BACKFILL_STEP_STATES = ['pending', 'running', 'succeeded', 'failed'] as const;
const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** One sample per value of an enum: 1 for the current one, 0 for the others (kube-state-metrics style). */
function oneHot(
  gauge: ServiceGauge,
  labels: Record<string, string>,
  key: string,
  values: readonly string[],
  current: string,
): Sample[] {
  return values.map((v) => ({ gauge, labels: { ...labels, [key]: v }, value: v === current ? 1 : 0 }));
}

/** A step's state as the operator sees it: its cursor, its current step, and whether that step's Job failed. */
function stepState(
  step: number,
  backfill: NonNullable<ObservabilityServiceStatus['backfill']>,
  failed: boolean,
): (typeof BACKFILL_STEP_STATES)[number] {
  if (step <= backfill.completedSteps) return 'succeeded';
  if (step === backfill.currentStep) return failed ? 'failed' : 'running';
  return 'pending';
}

export interface ServiceSeries {
  samples: Sample[];
  /** The gauges these samples replace entirely; the others keep their last values. */
  replaces: ServiceGauge[];
}

const ALL_GAUGES: ServiceGauge[] = [
  'state',
  'condition',
  'backfillStepsCompleted',
  'backfillStepState',
  'backfillStepChunksDone',
  'backfillStepChunksPlanned',
  'cutoverBlockedSince',
  'backupLastSuccess',
  'backupAllowedAge',
];
const CHUNK_GAUGES: ServiceGauge[] = ['backfillStepChunksDone', 'backfillStepChunksPlanned'];

export function serviceSeries(status: ObservabilityServiceStatus, report: BackfillReport): ServiceSeries {
  const samples: Sample[] = [];
  if (status.state) samples.push(...oneHot('state', {}, 'state', MIGRATION_STATES, status.state));
  const conditions = status.conditions ?? [];
  for (const c of conditions)
    samples.push(...oneHot('condition', { condition: c.type }, 'status', CONDITION_STATUSES, c.status));

  const backfill = status.backfill;
  samples.push({ gauge: 'backfillStepsCompleted', labels: {}, value: backfill?.completedSteps ?? 0 });
  const backfillReason = conditions.find((c) => c.type === 'BackfillComplete')?.reason;
  if (backfill) {
    const failed = backfillReason === 'BackfillStepFailed';
    // Steps are counted from 1 in chain order; totalSteps is 4, or 5 with dropScratchTables.
    for (let step = 1; step <= backfill.totalSteps; step++)
      samples.push(
        ...oneHot(
          'backfillStepState',
          { step: String(step) },
          'state',
          BACKFILL_STEP_STATES,
          stepState(step, backfill, failed),
        ),
      );
  }
  if (report.known)
    for (const s of report.steps) {
      samples.push({
        gauge: 'backfillStepChunksDone',
        labels: { step: String(s.step) },
        value: s.chunksDone,
      });
      samples.push({
        gauge: 'backfillStepChunksPlanned',
        labels: { step: String(s.step) },
        value: s.chunksTotal,
      });
    }

  // GatesClosed is the one reason of CutoverReady=False: the cutover was asked for and waits.
  const cutover = conditions.find((c) => c.type === 'CutoverReady');
  if (cutover?.status === 'False' && cutover.reason === 'GatesClosed')
    samples.push({
      gauge: 'cutoverBlockedSince',
      labels: {},
      value: Date.parse(cutover.lastTransitionTime) / 1000,
    });
  // With a schedule: the latest successful scheduled backup (before the first, when the schedule
  // began, so a schedule that never succeeds is overdue too) and the age past which it is overdue.
  const schedule = status.backupSchedule;
  if (schedule?.allowedAgeSeconds !== undefined) {
    const last = schedule.lastSuccessful?.finishedAt ?? schedule.since;
    samples.push({ gauge: 'backupLastSuccess', labels: {}, value: Date.parse(last) / 1000 });
    samples.push({ gauge: 'backupAllowedAge', labels: {}, value: schedule.allowedAgeSeconds });
  }
  // A worker that did not answer this pass leaves the chunk counts as last reported.
  const replaces = report.known ? ALL_GAUGES : ALL_GAUGES.filter((g) => !CHUNK_GAUGES.includes(g));
  return { samples, replaces };
}
