/**
 * What `kubectl observatory status` shows, read from the status the operator writes: state and
 * intent, the kstatus summary, the autoscaled workers, each gate (domain condition), what blocks,
 * what comes next, and the backfill chain step by step. Pure: the view is data (`-o json`) and its text rendering.
 */
import { desiredState, enabledSteps } from '../api/effective.ts';
import { CONDITION_TYPES, type Condition, type ObservabilityService } from '../api/v1alpha1.ts';
import type { BackfillStepState } from '../planner/types.ts';
import { progressBar } from './progress-bar.ts';

export interface Gate {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export interface StepView {
  step: number;
  status: BackfillStepState;
  /** Absent when the operator recorded no chunk counts for the step. */
  chunksDone?: number;
  chunksTotal?: number;
}

export interface StatusView {
  name: string;
  namespace: string;
  generation: number;
  observedGeneration: number | null;
  state: string | null;
  targetState: string | null;
  desiredWriteMode: string;
  phase: string | null;
  ready: Gate | null;
  stalled: Gate | null;
  gates: Gate[];
  blockedBy: string[];
  plannedActions: string[];
  backfill: {
    completedSteps: number;
    totalSteps: number;
    currentStep: number | null;
    currentJob: string | null;
    steps: StepView[];
  } | null;
  /** The worker autoscaler's last decision; absent when it is off. */
  workers?: {
    current: number;
    desired: number;
    reason: string;
    message: string;
    lastScaleTime: string | null;
  };
}

const SUMMARY = new Set(['Ready', 'Reconciling', 'Stalled']);

const gateOf = (c: Condition): Gate => ({
  type: c.type,
  status: c.status,
  reason: c.reason,
  message: c.message,
});

/** Each enabled step: the worker's counts when recorded, else what the cursor implies. */
function stepsOf(o: ObservabilityService): StepView[] {
  const b = o.status?.backfill;
  if (!b) return [];
  const recorded = new Map((b.steps ?? []).map((s) => [s.step, s]));
  const failed =
    o.status?.conditions?.find((c) => c.type === 'BackfillComplete')?.reason === 'BackfillStepFailed';
  return enabledSteps(o.spec)
    .slice(0, b.totalSteps)
    .map((step) => {
      const r = recorded.get(step);
      if (r) return { step, status: r.status, chunksDone: r.chunksDone, chunksTotal: r.chunksTotal };
      if (step <= b.completedSteps) return { step, status: 'finished' };
      if (step === b.currentStep) return { step, status: failed ? 'failed' : 'running' };
      return { step, status: 'pending' };
    });
}

export function statusView(o: ObservabilityService): StatusView {
  const s = o.status ?? {};
  const conditions = s.conditions ?? [];
  const find = (type: string) => conditions.find((c) => c.type === type);
  const stalled = find('Stalled');
  const rank = (type: string) => {
    const i = (CONDITION_TYPES as readonly string[]).indexOf(type);
    return i < 0 ? CONDITION_TYPES.length : i;
  };
  const b = s.backfill;
  const a = s.autoscaling;
  return {
    name: o.metadata.name,
    namespace: o.metadata.namespace,
    generation: o.metadata.generation,
    observedGeneration: s.observedGeneration ?? null,
    state: s.state ?? null,
    targetState: s.target && s.target.state !== s.state ? s.target.state : null,
    desiredWriteMode: desiredState(o.spec),
    phase: s.phase ?? null,
    ready: find('Ready') ? gateOf(find('Ready')!) : null,
    stalled: stalled?.status === 'True' ? gateOf(stalled) : null,
    gates: conditions
      .filter((c) => !SUMMARY.has(c.type))
      .sort((x, y) => rank(x.type) - rank(y.type))
      .map(gateOf),
    blockedBy: s.blockedBy ?? [],
    plannedActions: s.plannedActions ?? [],
    backfill: b
      ? {
          completedSteps: b.completedSteps,
          totalSteps: b.totalSteps,
          currentStep: b.currentStep ?? null,
          currentJob: b.currentJob ?? null,
          steps: stepsOf(o),
        }
      : null,
    ...(a
      ? {
          workers: {
            current: a.currentReplicas,
            desired: a.desiredReplicas,
            reason: a.reason,
            message: a.message,
            lastScaleTime: a.lastScaleTime ?? null,
          },
        }
      : {}),
  };
}

/** Left-aligned columns, the way kubectl prints tables. */
export function columns(rows: readonly (readonly string[])[], indent = ''): string[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  return rows.map((row) =>
    (
      indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')
    ).trimEnd(),
  );
}

function stepLine(s: StepView): string[] {
  const known = s.chunksTotal !== undefined && s.chunksDone !== undefined;
  const done = s.status === 'finished';
  const bar =
    known && s.chunksTotal! > 0 ? progressBar(s.chunksDone!, s.chunksTotal!) : progressBar(done ? 1 : 0, 1);
  const chunks = known ? `${s.chunksDone}/${s.chunksTotal} chunks` : '';
  return [`step ${s.step}`, bar, s.status, chunks];
}

const list = (title: string, items: readonly string[]) =>
  items.length === 0 ? [] : [`${title}:`, ...items.map((i) => `  - ${i}`)];

export function renderStatus(v: StatusView): string {
  const observed =
    v.observedGeneration === null
      ? 'not reconciled yet'
      : v.observedGeneration === v.generation
        ? `observed ${v.observedGeneration}`
        : `observed ${v.observedGeneration}: the operator has not seen the latest spec yet`;
  const state = v.state ?? 'none yet';
  const moving = v.targetState ? ` -> ${v.targetState} (in progress)` : '';
  const lines = [
    `ObservabilityService ${v.namespace}/${v.name}, generation ${v.generation} (${observed})`,
    ...columns([
      ['State:', `${state}${moving}`],
      ['Desired:', v.desiredWriteMode],
      ['Phase:', v.phase ?? '-'],
      [
        'Ready:',
        v.ready
          ? `${v.ready.status} (${v.ready.reason})${v.ready.message ? `: ${v.ready.message}` : ''}`
          : 'Unknown',
      ],
      ...(v.workers
        ? [
            [
              'Workers:',
              `${v.workers.current} of ${v.workers.desired} (${v.workers.reason}): ${v.workers.message}`,
            ],
          ]
        : []),
    ]),
  ];
  if (v.stalled) lines.push(`Stalled: ${v.stalled.reason}: ${v.stalled.message}`);
  if (v.gates.length > 0)
    lines.push(
      'Gates:',
      ...columns(
        [
          ['TYPE', 'STATUS', 'REASON', 'MESSAGE'],
          ...v.gates.map((g) => [g.type, g.status, g.reason, g.message]),
        ],
        '  ',
      ),
    );
  lines.push(...list('Blocked by', v.blockedBy), ...list('Next', v.plannedActions));
  if (v.backfill) {
    const b = v.backfill;
    const job = b.currentJob ? `, current Job ${b.currentJob}` : '';
    lines.push(`Backfill: ${b.completedSteps}/${b.totalSteps} steps finished${job}`);
    lines.push(...columns(b.steps.map(stepLine), '  '));
  }
  return `${lines.join('\n')}\n`;
}
