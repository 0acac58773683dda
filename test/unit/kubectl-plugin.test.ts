/** Tables for the pure parts of `kubectl observatory`: arguments, bars, the status view, the requests. */
import { describe, expect, it } from 'vitest';
import type { ObservabilityService, ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { type Invocation, parseArgs, UsageError, usage } from '../../operator/kubectl/args.ts';
import { describeAction } from '../../operator/kubectl/plan-view.ts';
import { progressBar } from '../../operator/kubectl/progress-bar.ts';
import {
  approvalRequest,
  noPodReason,
  Refused,
  retryBackfillRequest,
} from '../../operator/kubectl/requests.ts';
import { renderStatus, statusView } from '../../operator/kubectl/status-view.ts';
import { backfillingStatus, condition } from '../fixtures/obsvc-status.ts';

describe('arguments', () => {
  const cases: [string, Invocation][] = [
    ['', { command: { kind: 'help' }, connection: {} }],
    ['--help', { command: { kind: 'help' }, connection: {} }],
    ['help logs', { command: { kind: 'help', topic: 'logs' }, connection: {} }],
    ['status --help', { command: { kind: 'help', topic: 'status' }, connection: {} }],
    ['status', { command: { kind: 'status', output: 'text' }, connection: {} }],
    [
      'status demo -n obs',
      { command: { kind: 'status', name: 'demo', output: 'text' }, connection: { namespace: 'obs' } },
    ],
    ['status -o json', { command: { kind: 'status', output: 'json' }, connection: {} }],
    [
      'status --output=json -nobs',
      { command: { kind: 'status', output: 'json' }, connection: { namespace: 'obs' } },
    ],
    [
      '--kubeconfig /k --context c --namespace=x plan demo',
      {
        command: { kind: 'plan', name: 'demo', output: 'text' },
        connection: { kubeconfig: '/k', context: 'c', namespace: 'x' },
      },
    ],
    ['approve', { command: { kind: 'approve' }, connection: {} }],
    ['approve demo', { command: { kind: 'approve', name: 'demo' }, connection: {} }],
    ['retry-backfill 3', { command: { kind: 'retry-backfill', step: 3 }, connection: {} }],
    [
      'retry-backfill 2 demo -n obs',
      { command: { kind: 'retry-backfill', step: 2, name: 'demo' }, connection: { namespace: 'obs' } },
    ],
    ['logs --tail 20', { command: { kind: 'logs', tail: 20 }, connection: {} }],
    [
      'logs demo --context=kind',
      { command: { kind: 'logs', name: 'demo' }, connection: { context: 'kind' } },
    ],
    ['report', { command: { kind: 'report' }, connection: {} }],
    ['report demo -o out', { command: { kind: 'report', name: 'demo', to: 'out' }, connection: {} }],
    ['report -o b.tar.gz', { command: { kind: 'report', to: 'b.tar.gz' }, connection: {} }],
  ];
  it.each(cases)('%j', (line, expected) => {
    expect(parseArgs(line.split(' ').filter(Boolean))).toEqual(expected);
  });

  const errors: [string, string][] = [
    [
      'frobnicate',
      'unknown command "frobnicate": use one of status, plan, approve, retry-backfill, logs, report',
    ],
    ['status --bogus', 'unknown flag --bogus'],
    ['status -n', 'flag -n needs a value'],
    ['status -n --context c', 'flag -n needs a value'],
    ['status --namespace=', 'flag --namespace needs a value'],
    ['status -o yaml', '--output yaml is not supported: use -o json or leave it out'],
    ['approve -o json', 'approve does not take --output'],
    ['status --tail 3', 'status does not take --tail'],
    ['status a b', 'status takes [NAME]; unexpected "b"'],
    ['retry-backfill', 'retry-backfill needs the STEP to retry, e.g. retry-backfill 3'],
    ['retry-backfill two', 'STEP must be a step number, not "two"'],
    ['retry-backfill 0', 'STEP must be a step number, not "0"'],
    ['retry-backfill 3 demo extra', 'retry-backfill takes STEP [NAME]; unexpected "extra"'],
    ['logs --tail -1', 'flag --tail needs a value'],
    ['logs --tail=-1', '--tail must be a number of lines, not "-1"'],
    ['logs --tail x', '--tail must be a number of lines, not "x"'],
    ['help nope', 'unknown command "nope"'],
    ['report --tail 3', 'report does not take --tail'],
    ['report a b', 'report takes [NAME]; unexpected "b"'],
  ];
  it.each(errors)('%j is refused: %s', (line, message) => {
    const run = () => parseArgs(line.split(' ').filter(Boolean));
    expect(run).toThrow(UsageError);
    expect(run).toThrow(message);
  });

  it('documents every command and the -o json document', () => {
    const text = usage();
    for (const c of ['status', 'plan', 'approve', 'retry-backfill STEP', 'logs', 'report'])
      expect(text).toContain(c);
    expect(usage('status')).toContain('"steps":[{"step","status","chunksDone","chunksTotal"}]');
  });
});

describe('progress bars', () => {
  const cases: [number, number, number, string][] = [
    [0, 10, 10, '[----------]'],
    [5, 10, 10, '[#####-----]'],
    [9, 10, 10, '[#########-]'],
    [10, 10, 10, '[##########]'],
    [99, 100, 4, '[###-]'],
    [12, 10, 4, '[####]'],
    [3, 0, 4, '[----]'],
    [1, 3, 20, '[######--------------]'],
  ];
  it.each(cases)('%d of %d, width %d: %s', (done, total, width, bar) => {
    expect(progressBar(done, total, width)).toBe(bar);
  });
});

const spec = {
  release: '4' as const,
  image: 'observatory:dev',
  writeMode: 'EventsOnly' as const,
  nativeOtelBehaviour: 'Direct' as const,
  datastores: {
    postgres: { urlSecretRef: { name: 's', key: 'pg' } },
    clickhouse: { urlSecretRef: { name: 's', key: 'ch' } },
    redis: { urlSecretRef: { name: 's', key: 'redis' } },
  },
};

function obsvc(
  status: ObservabilityServiceStatus,
  extraSpec: Record<string, unknown> = {},
): ObservabilityService {
  return {
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'ObservabilityService',
    metadata: { name: 'demo', namespace: 'obs', uid: 'u', generation: 4, resourceVersion: '17' },
    spec: { ...spec, ...extraSpec },
    status,
  };
}

const backfilling: ObservabilityServiceStatus = { ...backfillingStatus, observedGeneration: 4 };

describe('the status view', () => {
  it('shows state, gates in API order, blocked-by and a bar per step from the recorded chunks', () => {
    const v = statusView(obsvc(backfilling));
    expect(v).toMatchObject({
      state: 'Dual',
      desiredWriteMode: 'EventsOnly',
      phase: 'Backfilling',
      stalled: null,
    });
    expect(v.gates.map((g) => [g.type, g.status, g.reason])).toEqual([
      ['SchemaMigrated', 'True', 'SchemaUpToDate'],
      ['BackfillComplete', 'False', 'BackfillRunning'],
      ['PropagationHealthy', 'True', 'WorkersHealthy'],
      ['CutoverReady', 'False', 'GatesClosed'],
    ]);
    const text = renderStatus(v);
    expect(text).toContain('ObservabilityService obs/demo, generation 4 (observed 4)');
    expect(text).toContain('Blocked by:\n  - Job demo-backfill-2-abc (backfill step 2) is running');
    expect(text).toContain('Backfill: 1/4 steps finished, current Job demo-backfill-2-abc');
    const bars = text.split('\n').filter((l) => l.trimStart().startsWith('step '));
    expect(bars).toEqual([
      '  step 1  [####################]  finished  8/8 chunks',
      '  step 2  [######--------------]  running   3/10 chunks',
      '  step 3  [--------------------]  pending   0/0 chunks',
      '  step 4  [--------------------]  pending   0/0 chunks',
    ]);
  });

  it('without recorded chunks, derives each step from the cursor and a stalled step', () => {
    const { steps: _, ...cursorOnly } = backfilling.backfill!;
    const failed = obsvc({
      ...backfilling,
      conditions: [
        condition('Stalled', 'True', 'BackfillStepFailed', 'Job demo-backfill-2-abc failed'),
        condition(
          'BackfillComplete',
          'False',
          'BackfillStepFailed',
          'step 2 of 4 failed: Job demo-backfill-2-abc',
        ),
      ],
      backfill: cursorOnly,
    });
    const v = statusView(failed);
    expect(v.stalled).toMatchObject({ reason: 'BackfillStepFailed' });
    expect(v.backfill?.steps).toEqual([
      { step: 1, status: 'finished' },
      { step: 2, status: 'failed' },
      { step: 3, status: 'pending' },
      { step: 4, status: 'pending' },
    ]);
    const text = renderStatus(v);
    expect(text).toContain('Stalled: BackfillStepFailed: Job demo-backfill-2-abc failed');
    expect(text).toContain('  step 1  [####################]  finished');
    expect(text).toContain('  step 2  [--------------------]  failed');
  });

  it('an object the operator has not seen yet', () => {
    const o = obsvc({});
    delete o.status;
    const v = statusView(o);
    expect(v).toMatchObject({ state: null, observedGeneration: null, backfill: null, gates: [] });
    expect(renderStatus(v)).toContain('(not reconciled yet)');
    expect(renderStatus(v)).toContain('State:    none yet');
  });

  it('shows the autoscaled workers, only when the autoscaler is on', () => {
    expect(renderStatus(statusView(obsvc(backfilling)))).not.toContain('Workers:');
    const v = statusView(
      obsvc({
        ...backfilling,
        autoscaling: {
          currentReplicas: 2,
          desiredReplicas: 3,
          lastBacklogAgeSeconds: 45,
          lastScaleTime: '2026-01-01T00:00:00.000Z',
          reason: 'ScaledUp',
          message: 'the oldest undrained write is 45s old, over the target 30s: 2 -> 3 worker(s)',
        },
      }),
    );
    expect(v.workers).toEqual({
      current: 2,
      desired: 3,
      reason: 'ScaledUp',
      message: 'the oldest undrained write is 45s old, over the target 30s: 2 -> 3 worker(s)',
      lastScaleTime: '2026-01-01T00:00:00.000Z',
    });
    expect(renderStatus(v)).toContain(
      'Workers:  2 of 3 (ScaledUp): the oldest undrained write is 45s old, over the target 30s: 2 -> 3 worker(s)',
    );
  });

  it('names a pass in progress and a spec the operator has not observed', () => {
    const v = statusView(
      obsvc({
        ...backfilling,
        observedGeneration: 3,
        target: { state: 'EventsOnly', since: 'x', image: 'i' },
      }),
    );
    expect(v.targetState).toBe('EventsOnly');
    const text = renderStatus(v);
    expect(text).toContain('State:    Dual -> EventsOnly (in progress)');
    expect(text).toContain('observed 3: the operator has not seen the latest spec yet');
  });
});

describe('requests written as annotations', () => {
  it('approves the current generation with the operator annotation', () => {
    expect(approvalRequest(obsvc(backfilling))).toMatchObject({
      annotation: 'observatory.dev/approve-cutover',
      value: '4',
    });
    expect(() => approvalRequest(obsvc({ state: 'EventsOnly' }))).toThrow(Refused);
  });

  const failedStep2: ObservabilityServiceStatus = {
    ...backfilling,
    conditions: [condition('BackfillComplete', 'False', 'BackfillStepFailed', 'step 2 of 4 failed: Job j')],
    backfill: { ...backfilling.backfill!, steps: undefined },
  };

  const refusals: [string, ObservabilityServiceStatus, number, Record<string, unknown>, string][] = [
    ['a step past the chain', failedStep2, 5, {}, 'backfill step 5 is unknown: demo runs steps 1, 2, 3, 4'],
    [
      'a step far past it',
      failedStep2,
      9,
      { backfill: { dropScratchTables: true } },
      'backfill step 9 is unknown: demo runs steps 1, 2, 3, 4, 5',
    ],
    ['a finished step', failedStep2, 1, {}, 'backfill step 1 has not failed (finished)'],
    ['a pending step', failedStep2, 3, {}, 'backfill step 3 has not failed (pending)'],
    ['a running step', backfilling, 2, {}, 'backfill step 2 has not failed (running)'],
    ['before the backfill', { state: 'Legacy' }, 1, {}, 'backfill step 1 has not failed (not started)'],
  ];
  it.each(refusals)('refuses %s', (_, status, step, extraSpec, message) => {
    const run = () => retryBackfillRequest(obsvc(status, extraSpec), step);
    expect(run).toThrow(Refused);
    expect(run).toThrow(message);
  });

  it('retries a failed step with a value the operator has not acted on', () => {
    expect(retryBackfillRequest(obsvc(failedStep2), 2)).toMatchObject({
      annotation: 'observatory.dev/retry-backfill',
      value: '2',
    });
    // The worker's record alone says failed too.
    const recorded = obsvc({
      ...backfilling,
      backfill: {
        ...backfilling.backfill!,
        steps: [{ step: 2, status: 'failed', chunksDone: 3, chunksTotal: 10 }],
      },
    });
    expect(retryBackfillRequest(recorded, 2).value).toBe('2');
    const again = obsvc({
      ...failedStep2,
      attempts: { 'backfill-2': 1 },
      consumedRetries: { 'observatory.dev/retry-backfill': '2' },
    });
    const value = retryBackfillRequest(again, 2).value;
    expect(value).not.toBe('2');
    expect(value).toMatch(/^2\.\d+$/);
  });
});

describe('plan lines', () => {
  const cases: [Parameters<typeof describeAction>[0], string][] = [
    [
      { kind: 'applyDeployment', role: 'web', object: { metadata: { name: 'demo-web' } } },
      'apply Deployment demo-web (web)',
    ],
    [
      { kind: 'createJob', purpose: 'backfill-2', object: { metadata: { name: 'demo-backfill-2-ab' } } },
      'create Job demo-backfill-2-ab (backfill-2)',
    ],
    [{ kind: 'deleteJob', name: 'j', reason: 'retry requested' }, 'delete Job j: retry requested'],
    [
      { kind: 'deleteDisruptionBudget', role: 'worker', name: 'demo-worker' },
      'delete PodDisruptionBudget demo-worker (worker)',
    ],
    [
      { kind: 'applyNetworkPolicy', role: 'web', object: { metadata: { name: 'demo-web' } } },
      'apply NetworkPolicy demo-web (web)',
    ],
    [
      { kind: 'deleteNetworkPolicy', role: 'worker', name: 'demo-worker' },
      'delete NetworkPolicy demo-worker (worker)',
    ],
    [
      { kind: 'writeStatus', status: { state: 'Dual', phase: 'Backfilling' } },
      'write status: state Dual, phase Backfilling',
    ],
    [
      { kind: 'event', type: 'Normal', reason: 'StateReached', message: 'Dual' },
      'record Normal Event StateReached: Dual',
    ],
    [{ kind: 'requeue', afterSeconds: 15 }, 'look again in 15s'],
  ];
  it.each(cases)('%j', (action, line) => {
    expect(describeAction(action)).toBe(line);
  });
});

describe('logs of a backfill Job without a Pod', () => {
  const withJobs = (jobs: ObservabilityServiceStatus['jobs']): ObservabilityService =>
    ({ metadata: { name: 'demo' }, status: { jobs } }) as ObservabilityService;
  it.each([
    [undefined, 'Job obs-backfill-2-x has no Pod yet'],
    [
      [
        {
          purpose: 'backfill-2',
          name: 'obs-backfill-2-x',
          result: 'Succeeded' as const,
          observedAt: '2026-03-01T12:00:00.000Z',
        },
      ],
      'Job obs-backfill-2-x succeeded (seen 2026-03-01T12:00:00.000Z); it and its Pod logs were removed after spec.jobs.ttlSecondsAfterFinished',
    ],
    [
      [
        {
          purpose: 'backfill-2',
          name: 'obs-backfill-2-x',
          result: 'Failed' as const,
          observedAt: '2026-03-01T12:00:00.000Z',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
        },
      ],
      'Job obs-backfill-2-x failed: BackoffLimitExceeded: Job has reached the specified backoff limit (seen 2026-03-01T12:00:00.000Z); it and its Pod logs were removed after spec.jobs.ttlSecondsAfterFinished',
    ],
  ])('%o', (jobs, message) => {
    expect(noPodReason(withJobs(jobs), 'obs-backfill-2-x')).toBe(message);
  });
});
