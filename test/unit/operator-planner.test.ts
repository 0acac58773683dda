/** Table tests of the planner's rules, one world at a time. */
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../operator/api/effective.ts';
import type {
  ObservabilityService,
  ObservabilityServiceSpec,
  ObservabilityServiceStatus,
} from '../../operator/api/v1alpha1.ts';
import { plan } from '../../operator/planner/plan.ts';
import type { Action, ObservedJob, World } from '../../operator/planner/types.ts';
import { type JobPurpose, jobNameFor } from '../../operator/render/jobs.ts';
import { DUAL_SETTINGS, plannerTable, SINCE, settledStatus } from '../fixtures/operator/planner-world.ts';
import { rolledOut } from '../fixtures/operator/rolled-out.ts';

const NOW = new Date('2026-03-01T12:00:00Z');
const { object, world } = plannerTable(NOW, { upgrade: { backupConfirmed: true } });

const job = (
  o: ObservabilityService,
  purpose: JobPurpose,
  outcome: ObservedJob['outcome'],
  attempt = 0,
  inputs?: Record<string, string>,
): ObservedJob => ({
  name: jobNameFor({ meta: o.metadata, spec: withDefaults(o.spec) }, { purpose, attempt, inputs }),
  purpose,
  outcome,
  ...(outcome === 'failed'
    ? { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }
    : {}),
});

const kinds = (actions: Action[]) => actions.map((a) => a.kind);
const created = (actions: Action[]) => actions.flatMap((a) => (a.kind === 'createJob' ? [a.purpose] : []));
const cond = (s: ObservabilityServiceStatus, type: string) => s.conditions?.find((c) => c.type === type);
describe('planner: guards', () => {
  it('paused: writes status only, with the Paused condition', () => {
    const o = object({ paused: true }, settledStatus('Dual'));
    const p = plan({ object: o, world: world() });
    expect(kinds(p.actions)).toEqual(['writeStatus', 'event']);
    expect(cond(p.status, 'Paused')).toMatchObject({ status: 'True', observedGeneration: 5 });
    expect(p.status.blockedBy).toEqual(['spec.paused is true: no changes are made']);
  });

  it('invalid spec: Stalled with the reason and field path, nothing else', () => {
    const o = object({ writeMode: 'EventsOnly', nativeOtelBehaviour: 'DualWrite' }, settledStatus('Dual'));
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual') }) });
    expect(kinds(p.actions)).toEqual(['writeStatus', 'event']);
    expect(cond(p.status, 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'EventsOnlyRequiresDirectOtel',
    });
    expect(cond(p.status, 'Stalled')!.message).toContain('spec.nativeOtelBehaviour');
    expect(cond(p.status, 'Ready')!.status).toBe('False');
    expect(cond(p.status, 'Reconciling')!.status).toBe('False');
  });

  it('after the commitment, a spec asking to go back is refused', () => {
    const status = settledStatus('Dual', {
      target: { state: 'EventsOnly', since: SINCE, image: 'observatory:dev' },
    });
    const p = plan({ object: object({ writeMode: 'Dual' }, status), world: world() });
    expect(cond(p.status, 'Stalled')!.reason).toBe('EventsOnlyIsFinal');
    expect(created(p.actions)).toEqual([]);
    expect(p.status.target!.state).toBe('EventsOnly');
  });
});

describe('planner: release 3 -> 4', () => {
  const r3 = settledStatus('Release3');

  it('needs the backup confirmation', () => {
    const o = object({ upgrade: { backupConfirmed: false } }, r3);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Release3') }) });
    expect(cond(p.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'BackupNotConfirmed' });
    expect(p.status.target!.state).toBe('Release3');
    expect(created(p.actions)).toEqual([]);
  });

  it('records the intent before anything else (G5)', () => {
    const o = object({}, r3);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Release3') }) });
    expect(kinds(p.actions)).toEqual(['writeStatus', 'event', 'requeue']);
    expect(p.status.target).toEqual({
      state: 'Dual',
      since: NOW.toISOString(),
      image: 'observatory:dev',
      settings: DUAL_SETTINGS,
    });
    expect(p.status.state).toBe('Release3');
  });

  const passing = { ...r3, target: { state: 'Dual' as const, since: SINCE, image: 'observatory:dev' } };
  const inputs = { pass: SINCE };

  it('runs preflight first, then the migrations, then the rollout; the state advances last (G2)', () => {
    const o = object({}, passing);
    const r3Deployments = rolledOut(o, 'Release3');
    let p = plan({ object: o, world: world({ deployments: r3Deployments }) });
    expect(created(p.actions)).toEqual(['preflight']);
    expect(kinds(p.actions)).not.toContain('applyDeployment');

    p = plan({
      object: o,
      world: world({ deployments: r3Deployments, jobs: [job(o, 'preflight', 'running', 0, inputs)] }),
    });
    expect(created(p.actions)).toEqual([]);
    expect(p.status.blockedBy!.join()).toContain('preflight checks');

    const afterPreflight = object({}, { ...passing, target: { ...passing.target, preflightPassed: true } });
    p = plan({
      object: o,
      world: world({ deployments: r3Deployments, jobs: [job(o, 'preflight', 'succeeded', 0, inputs)] }),
    });
    expect(p.status.target!.preflightPassed).toBe(true);
    expect(created(p.actions)).toEqual(['migrate']);
    expect(kinds(p.actions)[0]).toBe('writeStatus');

    const migrated = object(
      {},
      { ...afterPreflight.status!, target: { ...afterPreflight.status!.target!, schemaMigrated: true } },
    );
    p = plan({ object: migrated, world: world({ deployments: r3Deployments }) });
    expect(kinds(p.actions).filter((k) => k === 'applyDeployment')).toHaveLength(2);
    expect(p.status.state).toBe('Release3');

    const half = rolledOut(o, 'Dual');
    half.worker = { ...half.worker!, readyReplicas: 0, availableReplicas: 0 };
    p = plan({ object: migrated, world: world({ deployments: half }) });
    expect(p.status.state).toBe('Release3');

    p = plan({ object: migrated, world: world({ deployments: rolledOut(o, 'Dual') }) });
    expect(p.status.state).toBe('Dual');
    expect(p.status.dualSince).toBe(NOW.toISOString());
    expect(p.actions).toContainEqual(expect.objectContaining({ kind: 'event', reason: 'StateAdvanced' }));
  });

  it('a failed preflight stalls with the Job name and the documented retry', () => {
    const o = object({}, passing);
    const failed = job(o, 'preflight', 'failed', 0, inputs);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Release3'), jobs: [failed] }) });
    const stalled = cond(p.status, 'Stalled')!;
    expect(stalled).toMatchObject({ status: 'True', reason: 'PreflightFailed' });
    expect(stalled.message).toContain(failed.name);
    expect(stalled.message).toContain(
      'kubectl annotate obsvc/obs observatory.dev/retry-job=preflight --overwrite',
    );
    expect(p.actions).toContainEqual(
      expect.objectContaining({ kind: 'event', type: 'Warning', reason: 'PreflightFailed' }),
    );
  });
});

describe('planner: the backfill chain', () => {
  const dual = settledStatus('Dual');

  it('starts only after the Dual rollout is complete on every pod (Rule 3)', () => {
    const o = object({}, dual);
    const half = rolledOut(o, 'Dual');
    half.web = { ...half.web!, updatedReplicas: 0 };
    expect(created(plan({ object: o, world: world({ deployments: half }) }).actions)).toEqual([]);
    expect(created(plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual') }) }).actions)).toEqual(
      ['backfill-1'],
    );
  });

  it('waits for the pods of the earlier template to be gone, terminating ones too: they may still answer in the old mode', () => {
    const o = object({}, dual);
    const lingering = rolledOut(o, 'Dual');
    lingering.web = { ...lingering.web!, stalePods: 1 };
    const p = plan({ object: o, world: world({ deployments: lingering }) });
    expect(created(p.actions)).toEqual([]);
    expect(JSON.stringify(p.status)).toContain(
      '1 pod(s) of an earlier template still running or terminating',
    );
  });

  it('runs one step at a time, in order, moving the cursor in status', () => {
    const o = object({}, { ...dual, backfill: { completedSteps: 1, totalSteps: 4, progress: '1/4' } });
    const p = plan({
      object: o,
      world: world({ deployments: rolledOut(o, 'Dual'), jobs: [job(o, 'backfill-2', 'succeeded')] }),
    });
    expect(p.status.backfill).toMatchObject({ completedSteps: 2, currentStep: 3, progress: '2/4' });
    expect(created(p.actions)).toEqual(['backfill-3']);
  });

  it("records each enabled step's chunks from the worker report, and keeps them while the worker is silent", () => {
    const o = object({}, { ...dual, backfill: { completedSteps: 1, totalSteps: 4, progress: '1/4' } });
    const report = (
      step: number,
      status: 'finished' | 'running' | 'pending',
      done: number,
      total: number,
    ) => ({
      step,
      status,
      chunksDone: done,
      chunksTotal: total,
    });
    const steps = [
      report(1, 'finished', 8, 8),
      report(2, 'running', 3, 10),
      report(3, 'pending', 0, 0),
      report(4, 'pending', 0, 0),
      report(5, 'pending', 0, 0),
    ];
    const deployments = rolledOut(o, 'Dual');
    const p = plan({ object: o, world: world({ deployments, backfill: { known: true, steps } }) });
    expect(p.status.backfill?.steps).toEqual(steps.slice(0, 4));
    const silent = plan({
      object: { ...o, status: p.status },
      world: world({ deployments, backfill: { known: false } }),
    });
    expect(silent.status.backfill?.steps).toEqual(steps.slice(0, 4));
  });

  it('a failed step halts the chain and says how to retry', () => {
    const o = object({}, { ...dual, backfill: { completedSteps: 1, totalSteps: 4, progress: '1/4' } });
    const failed = job(o, 'backfill-2', 'failed');
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual'), jobs: [failed] }) });
    expect(created(p.actions)).toEqual([]);
    const stalled = cond(p.status, 'Stalled')!;
    expect(stalled.reason).toBe('BackfillStepFailed');
    expect(stalled.message).toContain(failed.name);
    expect(stalled.message).toContain('observatory.dev/retry-backfill=2');
  });

  it('a retry request raises the attempt, deletes the failed Job, un-fails the step, then runs it again', () => {
    const status = { ...dual, backfill: { completedSteps: 1, totalSteps: 4, progress: '1/4' } };
    const o = object({}, status, { 'observatory.dev/retry-backfill': '2' });
    const failed = job(o, 'backfill-2', 'failed');
    const deployments = rolledOut(o, 'Dual');
    let p = plan({ object: o, world: world({ deployments, jobs: [failed] }) });
    expect(p.status.attempts).toEqual({ 'backfill-2': 1 });
    expect(p.status.consumedRetries).toEqual({ 'observatory.dev/retry-backfill': '2' });
    expect(p.actions).toContainEqual({
      kind: 'deleteJob',
      name: failed.name,
      reason: 'retry of backfill step 2 requested',
    });
    expect(kinds(p.actions)[0]).toBe('writeStatus');

    const retried = object({}, p.status, { 'observatory.dev/retry-backfill': '2' });
    const report = (s: 'failed' | 'pending'): World['backfill'] => ({
      known: true,
      steps: [{ step: 2, status: s, chunksDone: 3, chunksTotal: 10 }],
    });
    p = plan({ object: retried, world: world({ deployments, backfill: report('failed') }) });
    expect(created(p.actions)).toEqual(['backfill-retry-2']);
    p = plan({ object: retried, world: world({ deployments, backfill: { known: false } }) });
    expect(created(p.actions)).toEqual([]);
    const unfailed = job(o, 'backfill-retry-2', 'succeeded', 1);
    p = plan({
      object: retried,
      world: world({ deployments, backfill: report('pending'), jobs: [unfailed] }),
    });
    expect(created(p.actions)).toEqual(['backfill-2']);
    // The same annotation value is not a second request.
    const again = job(o, 'backfill-2', 'failed', 1);
    p = plan({ object: retried, world: world({ deployments, jobs: [unfailed, again] }) });
    expect(kinds(p.actions)).not.toContain('deleteJob');
    expect(cond(p.status, 'Stalled')!.message).toContain('observatory.dev/retry-backfill=2.2');
  });
});

describe('planner: Job results outlive the Jobs (ttlSecondsAfterFinished)', () => {
  const dual = settledStatus('Dual', { backfill: { completedSteps: 1, totalSteps: 4, progress: '1/4' } });
  const r3 = settledStatus('Release3');
  const passing = {
    ...r3,
    target: { state: 'Dual' as const, since: SINCE, image: 'observatory:dev' },
  };
  const inputs = { pass: SINCE };

  it.each([
    { purpose: 'preflight' as const, status: passing, inputs, created: ['migrate'] },
    { purpose: 'backfill-2' as const, status: dual, inputs: undefined, created: ['backfill-3'] },
  ])(
    'a $purpose Job that succeeded and then vanished is not run again',
    ({ purpose, status, inputs, created: want }) => {
      const o = object({}, status);
      const deployments = rolledOut(o, status.state === 'Dual' ? 'Dual' : 'Release3');
      const finished = job(o, purpose, 'succeeded', 0, inputs);
      const seen = plan({ object: o, world: world({ deployments, jobs: [finished] }) });
      expect(seen.status.jobs).toEqual([
        { purpose, name: finished.name, result: 'Succeeded', observedAt: NOW.toISOString() },
      ]);
      // The TTL controller removed the Job; the status written above is all that is left.
      const gone = plan({ object: object({}, seen.status), world: world({ deployments }) });
      expect(created(gone.actions).filter((p) => p === purpose)).toEqual([]);
      expect(created(gone.actions)).toEqual(want);
      expect(gone.status.jobs).toEqual(seen.status.jobs);
    },
  );

  it('a failed Job that vanished stays failed (Stalled, same retry) until a retry, which needs no delete', () => {
    const o = object({}, dual);
    const deployments = rolledOut(o, 'Dual');
    const failed = job(o, 'backfill-2', 'failed');
    const seen = plan({ object: o, world: world({ deployments, jobs: [failed] }) });
    expect(seen.status.jobs).toEqual([
      {
        purpose: 'backfill-2',
        name: failed.name,
        result: 'Failed',
        observedAt: NOW.toISOString(),
        reason: 'BackoffLimitExceeded',
        message: 'Job has reached the specified backoff limit',
      },
    ]);
    const gone = plan({ object: object({}, seen.status), world: world({ deployments }) });
    expect(created(gone.actions)).toEqual([]);
    expect(cond(gone.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'BackfillStepFailed' });
    expect(cond(gone.status, 'Stalled')!.message).toContain('observatory.dev/retry-backfill=2');

    const retry = plan({
      object: object({}, seen.status, { 'observatory.dev/retry-backfill': '2' }),
      world: world({ deployments }),
    });
    expect(retry.status.attempts).toEqual({ 'backfill-2': 1 });
    expect(kinds(retry.actions)).not.toContain('deleteJob');
  });

  it('records a step the worker reported finished before its Job completed, once the Job completes', () => {
    const o = object(
      {},
      settledStatus('Dual', { backfill: { completedSteps: 0, totalSteps: 4, progress: '0/4' } }),
    );
    const deployments = rolledOut(o, 'Dual');
    const backfill = {
      known: true,
      steps: [{ step: 1, status: 'finished' as const, chunksDone: 1, chunksTotal: 1 }],
    };
    // The worker's report moves the cursor while the Job's Pod is still exiting.
    const early = plan({
      object: o,
      world: world({ deployments, backfill, jobs: [job(o, 'backfill-1', 'running')] }),
    });
    expect(early.status.backfill).toMatchObject({ completedSteps: 1 });
    expect(early.status.jobs).toBeUndefined();
    const done = job(o, 'backfill-1', 'succeeded');
    const later = plan({
      object: object({}, early.status),
      world: world({ deployments, backfill, jobs: [done] }),
    });
    expect(later.status.jobs).toEqual([
      { purpose: 'backfill-1', name: done.name, result: 'Succeeded', observedAt: NOW.toISOString() },
    ]);
  });

  it('keeps one result per purpose: a new attempt replaces the last', () => {
    const o = object({}, { ...dual, attempts: { 'backfill-2': 1 } });
    const deployments = rolledOut(o, 'Dual');
    const older = job(o, 'backfill-2', 'failed');
    const status = {
      ...o.status!,
      jobs: [{ purpose: 'backfill-2', name: older.name, result: 'Failed' as const, observedAt: SINCE }],
    };
    const newer = job(o, 'backfill-2', 'succeeded', 1);
    const p = plan({ object: object({}, status), world: world({ deployments, jobs: [newer] }) });
    expect(p.status.jobs).toEqual([
      { purpose: 'backfill-2', name: newer.name, result: 'Succeeded', observedAt: NOW.toISOString() },
    ]);
  });
});

describe("planner: a result the Job's command recorded outlives its Pod and its Job", () => {
  const r3 = settledStatus('Release3');
  const passing = { ...r3, target: { state: 'Dual' as const, since: SINCE, image: 'observatory:dev' } };
  const preflighted = { ...passing, target: { ...passing.target, preflightPassed: true } };
  const inputs = { pass: SINCE };
  const cleanupSpec = {
    writeMode: 'EventsOnly' as const,
    backfill: { enabled: false },
    cleanup: { truncateLegacyTables: true },
  };
  const cases = [
    {
      purpose: 'preflight' as const,
      spec: {},
      status: passing,
      state: 'Release3' as const,
      inputs,
      done: (s: ObservabilityServiceStatus) => s.target?.preflightPassed === true,
      stalled: 'PreflightFailed',
    },
    {
      purpose: 'migrate' as const,
      spec: {},
      status: preflighted,
      state: 'Release3' as const,
      inputs,
      done: (s: ObservabilityServiceStatus) => s.target?.schemaMigrated === true,
      stalled: 'MigrationFailed',
    },
    {
      purpose: 'cleanup' as const,
      spec: cleanupSpec,
      status: settledStatus('EventsOnly'),
      state: 'EventsOnly' as const,
      inputs: undefined,
      done: (s: ObservabilityServiceStatus) => s.legacyTablesTruncated === true,
      stalled: 'CleanupFailed',
    },
  ];
  const fates = [
    // Killed after its command recorded the result, before it exited: the Job counts a failure.
    { fate: 'killed after the record', jobs: (j: ObservedJob) => [{ ...j, outcome: 'failed' as const }] },
    // The Pod is still exiting.
    { fate: 'still exiting', jobs: (j: ObservedJob) => [j] },
    // Removed (its TTL, or by hand) before the operator saw it complete: status.jobs has nothing.
    { fate: 'gone unseen', jobs: () => [] },
  ];
  const recorded = (job: ObservedJob, result: 'succeeded' | 'failed', detail = '') => ({
    known: true as const,
    results: [{ job: job.name, result, detail }],
  });

  describe.each(cases)('$purpose', ({ purpose, spec, status, state, inputs: jobInputs, done, stalled }) => {
    const o = object(spec, status);
    const deployments = rolledOut(o, state);
    const running = job(o, purpose, 'running', 0, jobInputs);

    it.each(fates)('a recorded success counts when the Job was $fate', ({ jobs }) => {
      const p = plan({
        object: o,
        world: world({ deployments, jobs: jobs(running), jobResults: recorded(running, 'succeeded') }),
      });
      expect(done(p.status)).toBe(true);
      expect(cond(p.status, 'Stalled')?.status).not.toBe('True');
      expect(created(p.actions)).not.toContain(purpose);
      expect(p.status.jobs).toEqual([
        { purpose, name: running.name, result: 'Succeeded', observedAt: NOW.toISOString() },
      ]);
    });

    it('without a record, the killed Job stalls and the unseen one runs again (as before)', () => {
      for (const jobResults of [{ known: true as const, results: [] }, { known: false as const }]) {
        const killed = plan({
          object: o,
          world: world({ deployments, jobs: [{ ...running, outcome: 'failed' }], jobResults }),
        });
        expect(done(killed.status)).toBe(false);
        expect(cond(killed.status, 'Stalled')).toMatchObject({ status: 'True', reason: stalled });
        const gone = plan({ object: o, world: world({ deployments, jobResults }) });
        expect(created(gone.actions)).toEqual([purpose]);
      }
    });

    it('a recorded failure of a Job seen nowhere else stalls with what the command said, and is not run again', () => {
      const p = plan({
        object: o,
        world: world({ deployments, jobResults: recorded(running, 'failed', 'the check that failed') }),
      });
      expect(done(p.status)).toBe(false);
      expect(created(p.actions)).toEqual([]);
      expect(cond(p.status, 'Stalled')).toMatchObject({ status: 'True', reason: stalled });
      expect(cond(p.status, 'Stalled')!.message).toContain('the check that failed');
      expect(p.status.jobs).toMatchObject([{ purpose, name: running.name, result: 'Failed' }]);
    });

    it("a recorded failure waits for a running Job: it may be Kubernetes' retry of the Pod", () => {
      const p = plan({
        object: o,
        world: world({ deployments, jobs: [running], jobResults: recorded(running, 'failed', 'died') }),
      });
      expect(done(p.status)).toBe(false);
      expect(cond(p.status, 'Stalled')?.status).not.toBe('True');
      expect(created(p.actions)).toEqual([]);
    });

    it("another attempt's record does not count", () => {
      const earlier = job(o, purpose, 'succeeded', 1, jobInputs);
      const p = plan({
        object: o,
        world: world({ deployments, jobResults: recorded(earlier, 'succeeded') }),
      });
      expect(done(p.status)).toBe(false);
      expect(created(p.actions)).toEqual([purpose]);
    });
  });
});

describe('planner: the cutover gates', () => {
  const done = { completedSteps: 4, totalSteps: 4, progress: '4/4' };
  const dualDone = settledStatus('Dual', { backfill: done });
  const healthy = [{ pod: 'w-0', result: 'healthy' as const }];
  const eo = (
    spec: Partial<ObservabilityServiceSpec> = {},
    annotations?: Record<string, string>,
    status = dualDone,
  ) => object({ writeMode: 'EventsOnly', ...spec }, status, annotations);
  const run = (o: ObservabilityService, patch: Partial<World> = {}) =>
    plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual'), workerProbes: healthy, ...patch }) });

  it('records the intent to cut over when every gate holds, and nothing else', () => {
    const p = run(eo());
    expect(p.status.target!.state).toBe('EventsOnly');
    // The status write and the Events of its transitions; no Job and no Deployment change (the
    // Services, the same in every state, are kept as everywhere).
    expect(kinds(p.actions).filter((k) => k !== 'event' && k !== 'applyService')).toEqual([
      'writeStatus',
      'requeue',
    ]);
    expect(p.actions).toContainEqual(expect.objectContaining({ kind: 'event', reason: 'CutoverStarted' }));
    expect(cond(p.status, 'CutoverReady')!.status).toBe('True');
  });

  // A single probe round: the gate closes at once, while the condition follows the hysteresis
  // (an unreachable or first stuck answer is not yet a verdict on propagation).
  it.each([
    [
      'a stuck worker',
      { workerProbes: [{ pod: 'w-0', result: 'stuck' as const }] },
      'PropagationHealthy',
      'Unknown',
      'AwaitingProbe',
    ],
    [
      'an unreachable worker (G4)',
      { workerProbes: [{ pod: 'w-0', result: 'unreachable' as const }] },
      'PropagationHealthy',
      'Unknown',
      'AwaitingProbe',
    ],
    ['no probe at all', { workerProbes: [] }, 'PropagationHealthy', 'Unknown', 'AwaitingProbe'],
    [
      'an incompatible producer',
      {
        producers: {
          known: true as const,
          producers: [
            {
              sdkName: 'python',
              sdkVersion: '2.1.0',
              path: 'ingestion-api',
              consequence: 'refused' as const,
            },
            {
              sdkName: 'python',
              sdkVersion: '3.2.0',
              path: 'otel-dual-path',
              consequence: 'loses-propagation' as const,
            },
          ],
        },
      },
      'ProducersCompatible',
      'False',
      'IncompatibleProducersSeen',
    ],
    [
      'an unknown producer report',
      { producers: { known: false as const } },
      'ProducersCompatible',
      'Unknown',
      'ProducersUnknown',
    ],
  ])('holds on %s', (_n, patch, type, status, reason) => {
    const p = run(eo(), patch);
    expect(p.status.target!.state).toBe('Dual');
    expect(cond(p.status, type)).toMatchObject({ status, reason });
    expect(cond(p.status, 'CutoverReady')).toMatchObject({ status: 'False', reason: 'GatesClosed' });
    expect(cond(p.status, 'Reconciling')!.status).toBe('True');
    expect(p.status.blockedBy!.some((b) => b.startsWith('cutover:'))).toBe(true);
  });

  /** A producer EventsOnly accepts: OTLP that loses server-side propagation there. */
  const pythonLosingPropagation = {
    sdkName: 'python',
    sdkVersion: '3.2.0',
    path: 'otel-dual-path',
    consequence: 'loses-propagation',
  } as const;

  it('does not hold on producers EventsOnly accepts (OTLP losing server-side propagation), and says so', () => {
    const p = run(eo(), {
      producers: {
        known: true,
        producers: [pythonLosingPropagation],
      },
    });
    expect(p.status.target!.state).toBe('EventsOnly');
    const c = cond(p.status, 'ProducersCompatible')!;
    expect(c).toMatchObject({ status: 'True', reason: 'ProducersLosePropagation' });
    expect(c.message).toContain('no producer EventsOnly would refuse');
    expect(c.message).toContain('python 3.2.0 (otel-dual-path)');
    expect(c.message).toContain('lose server-side propagation');
  });

  it('names only the refused producers when it holds', () => {
    const p = run(eo(), {
      producers: {
        known: true,
        producers: [
          { sdkName: 'javascript', sdkVersion: '3.38.0', path: 'ingestion-api', consequence: 'refused' },
          pythonLosingPropagation,
        ],
      },
    });
    expect(p.status.target!.state).toBe('Dual');
    const c = cond(p.status, 'ProducersCompatible')!;
    expect(c).toMatchObject({ status: 'False', reason: 'IncompatibleProducersSeen' });
    expect(c.message).toContain('1 producer(s) EventsOnly would refuse');
    expect(c.message).toContain('javascript 3.38.0 (ingestion-api)');
    expect(c.message).not.toContain('otel-dual-path');
  });

  it.each([
    ['20 s ago with a 1m quiet period', 20_000, '1m', 40],
    ['just now with a 10m quiet period', 0, '10m', 300],
    ['2m ago with a 1m quiet period (the report lags)', 120_000, '1m', 1],
  ])('looks again when a refused producer last seen %s leaves the quiet period', (_n, ago, period, after) => {
    const lastSeen = new Date(NOW.getTime() - ago).toISOString();
    const p = run(eo({ cutover: { producerQuietPeriod: period } }), {
      producers: {
        known: true,
        producers: [
          {
            sdkName: 'javascript',
            sdkVersion: '3.38.0',
            path: 'ingestion-api',
            consequence: 'refused',
            lastSeen,
          },
        ],
      },
    });
    expect(cond(p.status, 'ProducersCompatible')?.reason).toBe('IncompatibleProducersSeen');
    expect(p.actions).toContainEqual({ kind: 'requeue', afterSeconds: after });
  });

  it('turns PropagationHealthy False only after failureThreshold stuck rounds, across restarts', () => {
    const stuck = { workerProbes: [{ pod: 'w-0', result: 'stuck' as const }] };
    const manual = { cutover: { approval: 'Manual' as const } };
    // Each plan starts from the status the previous one wrote, as after an operator restart.
    let status: ObservabilityServiceStatus = dualDone;
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      status = run(eo(manual, undefined, status), i === 0 ? {} : stuck).status;
      const c = cond(status, 'PropagationHealthy')!;
      seen.push(`${c.status} ${c.reason} ${status.probeStreak!.stuck}`);
    }
    status = run(eo(manual, undefined, status), stuck).status;
    seen.push(`${cond(status, 'PropagationHealthy')!.status} ${status.probeStreak!.stuck}`);
    status = run(eo(manual, undefined, status)).status;
    seen.push(`${cond(status, 'PropagationHealthy')!.status} ${status.probeStreak!.stuck}`);
    expect(seen).toEqual([
      'True WorkersHealthy 0',
      'True ProbeFailuresBelowThreshold 1',
      'True ProbeFailuresBelowThreshold 2',
      'False 3',
      'True 0',
    ]);
  });

  it('holds until the backfill finished, or the retention window was dual-written', () => {
    const running = settledStatus('Dual', {
      backfill: { completedSteps: 2, totalSteps: 4, progress: '2/4' },
    });
    expect(run(eo({}, undefined, running)).status.target!.state).toBe('Dual');
    const noBackfill = {
      backfill: { enabled: false },
      cutover: { approval: 'Automatic' as const, retentionWindow: '30d' },
    };
    const young = settledStatus('Dual', { dualSince: '2026-02-20T12:00:00.000Z' });
    const p = run(eo(noBackfill, undefined, young));
    expect(p.status.target!.state).toBe('Dual');
    expect(cond(p.status, 'CutoverReady')!.message).toContain('21d left');
    const old = settledStatus('Dual', { dualSince: '2026-01-20T12:00:00.000Z' });
    expect(run(eo(noBackfill, undefined, old)).status.target!.state).toBe('EventsOnly');
  });

  it('Manual approval names the current generation (annotation or spec field)', () => {
    const manual = { cutover: { approval: 'Manual' as const } };
    let p = run(eo(manual));
    expect(cond(p.status, 'CutoverApproved')).toMatchObject({ status: 'False', reason: 'AwaitingApproval' });
    expect(cond(p.status, 'CutoverApproved')!.message).toContain('observatory.dev/approve-cutover=5');
    expect(p.status.target!.state).toBe('Dual');
    const tracked = { ...dualDone, approval: p.status.approval! };
    p = run(eo(manual, { 'observatory.dev/approve-cutover': '5' }, tracked));
    expect(p.status.target!.state).toBe('EventsOnly');
    // Setting the field bumps the generation; it still approves what the user saw.
    const viaField = eo({ cutover: { approval: 'Manual', approvedGeneration: 5 } }, undefined, tracked);
    viaField.metadata.generation = 6;
    expect(run(viaField).status.target!.state).toBe('EventsOnly');
    // A stale approval does not carry over to a changed spec.
    const changed = eo(
      { ...manual, worker: { replicas: 1 }, image: 'observatory:dev' },
      { 'observatory.dev/approve-cutover': '4' },
      tracked,
    );
    expect(run(changed).status.target!.state).toBe('Dual');
  });

  it('holds on enabled trace-level evaluators, naming them, until an admin approves by hand', () => {
    const legacy = {
      producers: {
        known: true as const,
        producers: [],
        legacyEvaluators: [
          { projectId: 'p-1', name: 'trace-correctness' },
          { projectId: 'p-2', name: 'helpfulness' },
        ],
      },
    };
    // Automatic approval is nobody's decision: the cutover waits and says why.
    let p = run(eo(), legacy);
    expect(p.status.target!.state).toBe('Dual');
    const held = cond(p.status, 'EvaluatorsCompatible')!;
    expect(held).toMatchObject({ status: 'False', reason: 'LegacyEvaluatorsActive' });
    expect(held.message).toContain('2 trace-level evaluator(s) stop at the cutover');
    expect(held.message).toContain('"trace-correctness" (project p-1), "helpfulness" (project p-2)');
    expect(p.status.blockedBy!.some((b) => b.includes('trace-level evaluator'))).toBe(true);

    const manual = { cutover: { approval: 'Manual' as const } };
    p = run(eo(manual), legacy);
    expect(p.status.target!.state).toBe('Dual');
    const tracked = { ...dualDone, approval: p.status.approval! };
    p = run(eo(manual, { 'observatory.dev/approve-cutover': '5' }, tracked), legacy);
    expect(p.status.target!.state).toBe('EventsOnly');
    expect(cond(p.status, 'EvaluatorsCompatible')).toMatchObject({
      status: 'True',
      reason: 'LegacyEvaluatorsApproved',
    });

    p = run(eo(), { producers: { known: true, producers: [], legacyEvaluators: [] } });
    expect(cond(p.status, 'EvaluatorsCompatible')).toMatchObject({
      status: 'True',
      reason: 'NoLegacyEvaluators',
    });
    expect(p.status.target!.state).toBe('EventsOnly');
  });

  it('never goes back once the intent is recorded, and finishes the cutover pass', () => {
    const committed = settledStatus('Dual', {
      backfill: done,
      target: { state: 'EventsOnly', since: SINCE, image: 'observatory:dev' },
    });
    const o = eo({}, undefined, committed);
    // Gates failing after the commitment do not matter any more.
    let p = run(o, { workerProbes: [{ pod: 'w-0', result: 'stuck' }] });
    expect(created(p.actions)).toEqual(['migrate']);
    const migrated = eo({}, undefined, {
      ...committed,
      target: { ...committed.target!, schemaMigrated: true },
    });
    p = plan({ object: migrated, world: world({ deployments: rolledOut(o, 'Dual') }) });
    const applied = p.actions.filter((a) => a.kind === 'applyDeployment');
    expect(applied).toHaveLength(2);
    p = plan({ object: migrated, world: world({ deployments: rolledOut(o, 'EventsOnly') }) });
    expect(p.status.state).toBe('EventsOnly');
  });
});

/**
 * Render from the approved state (issue 31): while the spec asks for EventsOnly and the cutover is
 * not approved, web, worker and Jobs keep the settings recorded for Dual; the approval records the
 * new ones, and only its pass renders them. One case per setting rendered from the record.
 */
describe('planner: the settings of the approved state', () => {
  const done = { completedSteps: 4, totalSteps: 4, progress: '4/4' };
  const manual = { approval: 'Manual' as const, retentionWindow: '1d' };
  const longAgo = '2026-01-01T00:00:00.000Z';
  const envOf = (a: Action | undefined, name: string) =>
    a?.kind === 'applyDeployment'
      ? a.object.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === name)?.value
      : undefined;
  it.each<
    [string, Partial<ObservabilityServiceSpec>, Partial<ObservabilityServiceSpec>, string, string, string]
  >([
    [
      'nativeOtelBehaviour',
      {},
      { nativeOtelBehaviour: 'Direct' },
      'SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR',
      'dual_write',
      'direct',
    ],
    [
      'the historic backfill switch',
      { backfill: { enabled: true } },
      { backfill: { enabled: false } },
      'SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL',
      'true',
      'false',
    ],
    [
      'dropScratchTables',
      {},
      { backfill: { dropScratchTables: true } },
      'SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES',
      'false',
      'true',
    ],
    [
      'allowPreviewOptIn',
      { allowPreviewOptIn: false },
      { allowPreviewOptIn: true },
      'SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN',
      'false',
      'true',
    ],
    ['the write mode', {}, {}, 'SERVICE_MIGRATION_V4_WRITE_MODE', 'dual', 'events_only'],
  ])(
    '%s: the Dual Pods keep the recorded value until the cutover is approved',
    (_, dualSpec, asked, env, before, after) => {
      const dual = object({ ...dualSpec, cutover: manual });
      // Dual as the operator left it: rolled out from the Dual spec, its settings recorded.
      const settled = plan({
        object: object(
          { ...dualSpec, cutover: manual },
          settledStatus('Dual', { backfill: done, dualSince: longAgo }),
        ),
        world: world({ deployments: rolledOut(dual, 'Dual') }),
      }).status;
      expect(settled.settings?.writeMode).toBe('Dual');
      const deployments = rolledOut(dual, 'Dual');
      const requested = object({ ...dualSpec, ...asked, writeMode: 'EventsOnly', cutover: manual }, settled);
      const p = plan({
        object: requested,
        world: world({ deployments, workerProbes: [{ pod: 'w-0', result: 'healthy' }] }),
      });
      expect(cond(p.status, 'CutoverApproved')!.status).toBe('False');
      // Nothing reaches a Pod: no Deployment is applied, no Job created (but the chain step the
      // spec adds to the Dual backfill, which opens its own gate), the record is kept.
      expect(kinds(p.actions)).not.toContain('applyDeployment');
      expect(created(p.actions)).toEqual(asked.backfill?.dropScratchTables ? ['backfill-5'] : []);
      expect(p.status.settings).toEqual(settled.settings);
      // Approved: the pass records the settings the spec asks, and its rollout renders them.
      const approved = plan({
        object: object(
          { ...dualSpec, ...asked, writeMode: 'EventsOnly', cutover: manual },
          { ...p.status },
          { 'observatory.dev/approve-cutover': '5' },
        ),
        world: world({ deployments, workerProbes: [{ pod: 'w-0', result: 'healthy' }] }),
      }).status;
      expect(approved.target?.state).toBe('EventsOnly');
      const migrated = { ...approved, target: { ...approved.target!, schemaMigrated: true } };
      const rollout = plan({
        object: object({ ...dualSpec, ...asked, writeMode: 'EventsOnly' }, migrated),
        world: world({ deployments }),
      });
      const applied = rollout.actions.filter((a) => a.kind === 'applyDeployment');
      expect(applied).toHaveLength(2);
      for (const a of applied) expect(envOf(a, env)).toBe(after);
      // The Dual rendering from the record had the value the Dual spec asked.
      const dualPods = plan({
        object: object({ ...dualSpec, ...asked, writeMode: 'EventsOnly', cutover: manual }, settled),
        world: world({}),
      });
      const dualApplied = dualPods.actions.find((a) => a.kind === 'applyDeployment');
      expect(envOf(dualApplied, env)).toBe(before);
    },
  );

  it('a spec that asks EventsOnly from Legacy passes through Dual with DualWrite, as Dual defaults', () => {
    const legacy = settledStatus('Legacy');
    const o = object({ writeMode: 'EventsOnly', nativeOtelBehaviour: 'Direct' }, legacy);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Legacy') }) });
    expect(p.status.target?.state).toBe('Dual');
    expect(p.status.target?.settings?.nativeOtelBehaviour).toBe('DualWrite');
  });
});

describe('planner: rollback and steady states', () => {
  it('rolls back from Dual: intent, rollback Job on the deployed image, then release 3', () => {
    const r3 = { release: '3' as const, writeMode: undefined, image: 'observatory:v3' };
    const dual = settledStatus('Dual');
    let o = object(r3, dual);
    let p = plan({ object: o, world: world({ deployments: rolledOut(object({}, dual), 'Dual') }) });
    expect(p.status.target).toMatchObject({ state: 'Release3', image: 'observatory:v3' });
    expect(kinds(p.actions)).toEqual(['writeStatus', 'event', 'requeue']);
    o = object(r3, p.status);
    p = plan({ object: o, world: world({ deployments: rolledOut(object({}, dual), 'Dual') }) });
    const rollback = p.actions.find((a) => a.kind === 'createJob');
    expect(rollback).toMatchObject({ purpose: 'rollback' });
    const container =
      rollback?.kind === 'createJob' ? rollback.object.spec!.template.spec!.containers[0]! : undefined;
    expect(container!.image).toBe('observatory:dev');
    expect(container!.args).toEqual(['migrate', 'down', '--to', '37']);
    expect(p.status.target!.schemaStarted).toBe(true);
  });

  it('waits for a running backfill Job before rolling back', () => {
    const o = object({ release: '3', writeMode: undefined }, settledStatus('Dual'));
    const p = plan({
      object: o,
      world: world({ deployments: rolledOut(o, 'Dual'), jobs: [job(o, 'backfill-1', 'running')] }),
    });
    expect(p.status.target!.state).toBe('Dual');
    expect(p.status.blockedBy!.join()).toContain('rollback waits for the backfill Job');
  });

  it('is Ready with kstatus conditions once the desired state is reached and done', () => {
    const o = object({ backfill: { enabled: false } }, settledStatus('Dual'));
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual'), services: {} }) });
    expect(p.status.phase).toBe('Ready');
    expect(cond(p.status, 'Ready')).toMatchObject({ status: 'True', observedGeneration: 5 });
    expect(cond(p.status, 'Reconciling')!.status).toBe('False');
    expect(cond(p.status, 'Stalled')!.status).toBe('False');
    expect(p.status.observedGeneration).toBe(5);
    expect(p.status.plannedActions).toEqual(['apply Service obs-web', 'apply Service obs-worker']);
  });

  it('truncates the legacy tables after the cutover when asked, once', () => {
    const o = object(
      { writeMode: 'EventsOnly', backfill: { enabled: false }, cleanup: { truncateLegacyTables: true } },
      settledStatus('EventsOnly'),
    );
    const deployments = rolledOut(o, 'EventsOnly');
    expect(created(plan({ object: o, world: world({ deployments }) }).actions)).toEqual(['cleanup']);
    const p = plan({ object: o, world: world({ deployments, jobs: [job(o, 'cleanup', 'succeeded')] }) });
    expect(p.status.legacyTablesTruncated).toBe(true);
  });
});

describe('planner: analytics store pressure', () => {
  const reason =
    'the analytics store has 1.00 GiB free; backfill step 1 needs about 3.00 GiB (3x the 1.00 GiB of its source still to move)';
  const report = (step: number) => ({
    known: true as const,
    steps: [{ step: 1, status: 'pending' as const, chunksDone: 0, chunksTotal: 0 }],
    pressure: { step, reason },
  });

  it('no backfill Job starts while the worker reports the store short for it; the reason is in blockedBy', () => {
    const o = object({}, settledStatus('Dual'));
    const deployments = rolledOut(o, 'Dual');
    const held = plan({ object: o, world: world({ deployments, backfill: report(1) }) });
    expect(created(held.actions)).toEqual([]);
    expect(held.status.blockedBy).toContainEqual(`backfill step 1 is paused: ${reason}`);
    expect(cond(held.status, 'BackfillComplete')).toMatchObject({
      reason: 'AnalyticsStorePressure',
      message: `step 1 of 4 is paused: ${reason}; 0/4 done`,
    });
    expect(held.actions).toContainEqual({ kind: 'requeue', afterSeconds: 60 });
    // Pressure reported for another step does not hold this one.
    expect(created(plan({ object: o, world: world({ deployments, backfill: report(2) }) }).actions)).toEqual([
      'backfill-1',
    ]);
  });

  it('a running step keeps its Job and shows why it waits between chunks', () => {
    const o = object({}, settledStatus('Dual'));
    const p = plan({
      object: o,
      world: world({
        deployments: rolledOut(o, 'Dual'),
        jobs: [job(o, 'backfill-1', 'running')],
        backfill: report(1),
      }),
    });
    expect(p.actions.filter((a) => a.kind === 'deleteJob')).toEqual([]);
    expect(cond(p.status, 'BackfillComplete')!.reason).toBe('AnalyticsStorePressure');
    expect(p.status.backfill?.currentJob).toBeDefined();
  });
});

describe('planner: maintenance windows', () => {
  // NOW is Sunday 12:00 UTC: outside a nightly 02:00-06:00 window, which opens next on Monday 02:00.
  const maintenanceWindows = [{ cron: '0 2 * * *', duration: '4h' }];
  const INSIDE = new Date('2026-03-02T03:00:00Z');
  const OPENS = '2026-03-02T02:00:00.000Z';
  const waitsFor = (p: ReturnType<typeof plan>, what: string) =>
    expect(p.status.blockedBy).toContainEqual(
      `${what} waits for the next maintenance window (spec.maintenanceWindows), which opens at ${OPENS}`,
    );

  it('a backfill step waits for the window, then starts inside it; a running step goes on', () => {
    const o = object({ maintenanceWindows }, settledStatus('Dual'));
    const deployments = rolledOut(o, 'Dual');
    const outside = plan({ object: o, world: world({ deployments }) });
    expect(created(outside.actions)).toEqual([]);
    waitsFor(outside, 'backfill step 1');
    expect(cond(outside.status, 'BackfillComplete')).toMatchObject({
      reason: 'BackfillAwaitingWindow',
      message: `step 1 of 4 starts in the next maintenance window (${OPENS}); 0/4 done`,
    });
    expect(outside.actions).toContainEqual({ kind: 'requeue', afterSeconds: 3600 });

    const inside = plan({ object: o, world: world({ deployments, now: INSIDE }) });
    expect(created(inside.actions)).toEqual(['backfill-1']);

    const running = plan({
      object: o,
      world: world({ deployments, jobs: [job(o, 'backfill-1', 'running')] }),
    });
    expect(cond(running.status, 'BackfillComplete')!.reason).toBe('BackfillRunning');
    expect(running.status.blockedBy!.join()).not.toContain('maintenance window');
  });

  it('a move to another mode and an image upgrade wait for the window; a rollback does not', () => {
    const legacy = settledStatus('Legacy');
    const toDual = object({ maintenanceWindows }, legacy);
    const deployments = rolledOut(object({ writeMode: 'Legacy' }, legacy), 'Legacy');
    const outside = plan({ object: toDual, world: world({ deployments }) });
    expect(outside.status.target!.state).toBe('Legacy');
    waitsFor(outside, 'the move Legacy -> Dual');
    const inside = plan({ object: toDual, world: world({ deployments, now: INSIDE }) });
    expect(inside.status.target).toMatchObject({ state: 'Dual', since: INSIDE.toISOString() });

    const rollback = object({ maintenanceWindows, release: '3', writeMode: undefined }, legacy);
    expect(plan({ object: rollback, world: world({ deployments }) }).status.target!.state).toBe('Release3');
    const image = object({ maintenanceWindows, writeMode: 'Legacy', image: 'observatory:next' }, legacy);
    const held = plan({ object: image, world: world({ deployments }) });
    expect(held.status.target!.image).toBe('observatory:dev');
    waitsFor(held, 'the upgrade observatory:dev -> observatory:next');
    expect(plan({ object: image, world: world({ deployments, now: INSIDE }) }).status.target).toMatchObject({
      state: 'Legacy',
      image: 'observatory:next',
      fromImage: 'observatory:dev',
    });
  });

  it('the cutover is one more gate: closed outside the window, open inside it', () => {
    const status = settledStatus('Dual', { backfill: { completedSteps: 4, totalSteps: 4, progress: '4/4' } });
    const o = object({ maintenanceWindows, writeMode: 'EventsOnly' }, status);
    const w = (now = NOW) =>
      world({ deployments: rolledOut(o, 'Dual'), workerProbes: [{ pod: 'w-0', result: 'healthy' }], now });
    const outside = plan({ object: o, world: w() });
    expect(outside.status.target!.state).toBe('Dual');
    expect(cond(outside.status, 'CutoverReady')).toMatchObject({ status: 'False', reason: 'GatesClosed' });
    expect(cond(outside.status, 'CutoverReady')!.message).toContain(
      `outside the maintenance windows (spec.maintenanceWindows): the next opens at ${OPENS}`,
    );
    expect(plan({ object: o, world: w(INSIDE) }).status.target!.state).toBe('EventsOnly');
  });

  it('the cleanup waits for the window', () => {
    const o = object(
      {
        maintenanceWindows,
        writeMode: 'EventsOnly',
        backfill: { enabled: false },
        cleanup: { truncateLegacyTables: true },
      },
      settledStatus('EventsOnly'),
    );
    const deployments = rolledOut(o, 'EventsOnly');
    const outside = plan({ object: o, world: world({ deployments }) });
    expect(created(outside.actions)).toEqual([]);
    waitsFor(outside, 'the truncate of the legacy tables');
    expect(created(plan({ object: o, world: world({ deployments, now: INSIDE }) }).actions)).toEqual([
      'cleanup',
    ]);
  });
});
