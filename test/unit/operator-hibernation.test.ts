/** Table tests of hibernation (spec.hibernate): one world at a time through the whole planner. */
import { describe, expect, it } from 'vitest';
import type {
  ObservabilityService,
  ObservabilityServiceSpec,
  ObservabilityServiceStatus,
} from '../../operator/api/v1alpha1.ts';
import { parseArgs } from '../../operator/kubectl/args.ts';
import { hibernationRequest, Refused } from '../../operator/kubectl/requests.ts';
import { observationsNeeded } from '../../operator/planner/observations.ts';
import { plan } from '../../operator/planner/plan.ts';
import { DRAIN_LIMIT_SECONDS } from '../../operator/planner/steps/hibernate.ts';
import type { Action, ObservedDeployment, World } from '../../operator/planner/types.ts';
import { validate } from '../../operator/validation.ts';
import { DUAL_SETTINGS, plannerTable, SINCE, settledStatus } from '../fixtures/operator/planner-world.ts';
import { rolledOut } from '../fixtures/operator/rolled-out.ts';

const NOW = new Date('2026-03-01T12:00:00Z');
const steady = settledStatus('Dual', {
  settings: DUAL_SETTINGS,
  backfill: {
    completedSteps: 1,
    totalSteps: 4,
    currentStep: 2,
    progress: '1/4',
    currentJob: 'obs-backfill-2-x',
  },
});

const { object, world } = plannerTable(
  NOW,
  { upgrade: { backupConfirmed: true }, worker: { replicas: 3 } },
  7,
);

/** Both Deployments at zero with no Pod left. */
const atZero = (o: ObservabilityService): World['deployments'] => {
  const zero = object(
    { ...o.spec, web: { replicas: 0 }, worker: { ...o.spec.worker, replicas: 0 } },
    o.status!,
  );
  const d = rolledOut(zero, 'Dual');
  return Object.fromEntries(
    Object.entries(d).map(([role, x]) => [role, { ...x, livePods: 0 } as ObservedDeployment]),
  );
};

const cond = (s: ObservabilityServiceStatus, type: string) => s.conditions?.find((c) => c.type === type);
const applied = (actions: Action[]) =>
  actions.flatMap((a) => (a.kind === 'applyDeployment' ? [`${a.role}=${a.object.spec?.replicas}`] : []));
/** Rolled out with every Pod of the rendering live. */
const running = (o: ObservabilityService): World['deployments'] => {
  const d = rolledOut(o, 'Dual');
  return { web: { ...d.web!, livePods: 1 }, worker: { ...d.worker!, livePods: 3 } };
};
const RECENT = new Date(NOW.getTime() - 60_000).toISOString();
const draining = (since = SINCE) => ({ hibernation: { phase: 'Draining' as const, since } });

describe('hibernation: the planner', () => {
  it('not asked: no Hibernated condition and no record', () => {
    const o = object({}, steady);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual') }) });
    expect(cond(p.status, 'Hibernated')).toBeUndefined();
    expect(p.status.hibernation).toBeUndefined();
  });

  it('asked: the hibernation is recorded first, and nothing else is done in that reconcile', () => {
    const o = object({ hibernate: true }, steady);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual') }) });
    expect(p.status.hibernation).toEqual({ phase: 'Draining', since: NOW.toISOString() });
    expect(p.actions.map((a) => a.kind)).toEqual(['writeStatus', 'event', 'requeue']);
    expect(cond(p.status, 'Hibernated')).toMatchObject({ status: 'False', reason: 'Draining' });
    expect(p.status.phase).toBe('Hibernating');
  });

  it('draining without an ingestion log: both to zero at once, the running backfill Job stopped', () => {
    const o = object({ hibernate: true }, { ...steady, ...draining() });
    const jobs = [{ name: 'obs-backfill-2-x', purpose: 'backfill-2', outcome: 'running' as const }];
    const p = plan({ object: o, world: world({ deployments: running(o), jobs }) });
    expect(applied(p.actions)).toEqual(['web=0', 'worker=0']);
    expect(p.actions.filter((a) => a.kind === 'deleteJob')).toMatchObject([{ name: 'obs-backfill-2-x' }]);
    expect(p.actions.some((a) => a.kind === 'createJob')).toBe(false);
    expect(p.status.hibernation).toMatchObject({ phase: 'Draining', stoppedJob: 'obs-backfill-2-x' });
  });

  const log = { blobStorage: { ingestionLog: { bucket: 'log-bucket' } } };
  const webGone = (o: ObservabilityService) => {
    const d = running(o);
    return { ...d, web: { ...d.web!, livePods: 0 } };
  };
  const table: [string, Partial<World>, string, string[], RegExp][] = [
    ['web Pods still terminating', {}, RECENT, ['web=0'], /web Pod\(s\) still terminating/],
    [
      'backlog left',
      { ingestionBacklog: { known: true, pendingFiles: 4, pendingBytes: 9, oldestPendingAgeSeconds: 20 } },
      RECENT,
      ['web=0'],
      /drain the ingestion log: 4 file\(s\) left/,
    ],
    ['backlog unknown', { ingestionBacklog: { known: false } }, RECENT, ['web=0'], /have not reported/],
    [
      'backlog drained',
      { ingestionBacklog: { known: true, pendingFiles: 0, pendingBytes: 0, oldestPendingAgeSeconds: 0 } },
      RECENT,
      ['web=0', 'worker=0'],
      /3 web and worker Pod\(s\) still running/,
    ],
    [
      'the drain ran out of time',
      { ingestionBacklog: { known: true, pendingFiles: 4, pendingBytes: 9, oldestPendingAgeSeconds: 20 } },
      new Date(NOW.getTime() - DRAIN_LIMIT_SECONDS * 1000).toISOString(),
      ['web=0', 'worker=0'],
      /3 web and worker Pod\(s\) still running/,
    ],
  ];
  it.each(table)('with an ingestion log, %s', (_, w, since, want, blocked) => {
    const o = object({ hibernate: true, ...log }, { ...steady, ...draining(since) });
    const deployments = _ === 'web Pods still terminating' ? running(o) : webGone(o);
    const p = plan({ object: o, world: world({ deployments, ...w }) });
    expect(applied(p.actions)).toEqual(want);
    expect(p.status.blockedBy?.join('\n')).toMatch(blocked);
    expect(p.status.hibernation?.phase).toBe('Draining');
  });

  it('reads the backlog only while it drains with an ingestion log', () => {
    const need = (s: Partial<ObservabilityServiceSpec>, st: ObservabilityServiceStatus) =>
      observationsNeeded(object(s, st)).ingestionBacklog;
    expect(need({ hibernate: true, ...log }, { ...steady, ...draining() })).toBe(true);
    expect(need({ hibernate: true }, { ...steady, ...draining() })).toBe(false);
    expect(
      need({ hibernate: true, ...log }, { ...steady, hibernation: { phase: 'Hibernated', since: SINCE } }),
    ).toBe(false);
  });

  it('no Pod left: Hibernated, Ready True, and nothing scheduled starts, whatever the spec asks now', () => {
    const o = object(
      { hibernate: true, writeMode: 'EventsOnly', nativeOtelBehaviour: 'Direct', image: 'observatory:next' },
      { ...steady, ...draining() },
    );
    const parkedAs = object({ hibernate: true }, o.status!);
    const p = plan({ object: o, world: world({ deployments: atZero(parkedAs) }) });
    expect(p.status.hibernation).toMatchObject({ phase: 'Hibernated', hibernatedAt: NOW.toISOString() });
    expect(p.status.phase).toBe('Hibernated');
    expect(cond(p.status, 'Ready')).toMatchObject({ status: 'True', reason: 'Hibernated' });
    expect(cond(p.status, 'Hibernated')).toMatchObject({ status: 'True', reason: 'Hibernated' });
    expect(cond(p.status, 'Hibernated')!.message).toContain('state Dual');
    expect(p.actions.some((a) => a.kind === 'createJob')).toBe(false);
    expect(applied(p.actions)).toEqual([]);
    expect([p.status.state, p.status.target, p.status.settings, p.status.backfill]).toEqual([
      steady.state,
      steady.target,
      steady.settings,
      steady.backfill,
    ]);
    expect(p.actions).toContainEqual(expect.objectContaining({ kind: 'event', reason: 'Hibernated' }));
  });

  it('a pass in progress finishes first: the hibernation waits and the pass goes on', () => {
    const moving: ObservabilityServiceStatus = {
      state: 'Legacy',
      deployedImage: 'observatory:dev',
      target: { state: 'Dual', since: SINCE, image: 'observatory:dev', settings: DUAL_SETTINGS },
    };
    const o = object({ hibernate: true }, moving);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Legacy') }) });
    expect(p.status.hibernation).toBeUndefined();
    expect(cond(p.status, 'Hibernated')).toMatchObject({ status: 'False', reason: 'HibernationWaiting' });
    expect(p.status.blockedBy).toContain('spec.hibernate: the pass to Dual must finish first');
    expect(p.actions.some((a) => a.kind === 'createJob' && a.purpose === 'migrate')).toBe(true);
  });

  it('mid-cutover: refused, Stalled with the field, nothing recorded', () => {
    const cutover: ObservabilityServiceStatus = {
      ...steady,
      target: { state: 'EventsOnly', since: SINCE, image: 'observatory:dev' },
    };
    const o = object({ hibernate: true, writeMode: 'EventsOnly', nativeOtelBehaviour: 'Direct' }, cutover);
    const p = plan({ object: o, world: world({ deployments: rolledOut(o, 'Dual') }) });
    expect(cond(p.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'HibernationRefused' });
    expect(p.status.hibernation).toBeUndefined();
    expect(validate({ spec: o.spec, status: cutover })).toEqual([
      expect.objectContaining({ reason: 'HibernationRefused', field: 'spec.hibernate' }),
    ]);
    expect(validate({ spec: o.spec, status: { ...cutover, state: 'EventsOnly' } })).toEqual([]);
  });

  it('wake: web and worker roll out again in the recorded state before anything else, then the record goes', () => {
    const parked = {
      ...steady,
      hibernation: { phase: 'Hibernated' as const, since: SINCE, hibernatedAt: SINCE },
    };
    const o = object({}, parked);
    const first = plan({ object: o, world: world({ deployments: atZero(o) }) });
    expect(first.status.hibernation?.phase).toBe('Waking');
    expect(applied(first.actions)).toEqual(['web=1', 'worker=3']);
    expect(first.actions.some((a) => a.kind === 'createJob')).toBe(false);
    expect(first.status.phase).toBe('Waking');
    expect(first.status.settings).toEqual(DUAL_SETTINGS);

    const back = object({}, first.status);
    const second = plan({ object: back, world: world({ deployments: rolledOut(back, 'Dual') }) });
    expect(second.status.hibernation).toBeUndefined();
    expect(cond(second.status, 'Hibernated')).toMatchObject({ status: 'False', reason: 'Awake' });
    expect(second.status.settings).toEqual(DUAL_SETTINGS);
    // The backfill goes on at step 2.
    expect(second.actions).toContainEqual(
      expect.objectContaining({ kind: 'createJob', purpose: 'backfill-2' }),
    );
    expect(second.actions).toContainEqual(expect.objectContaining({ kind: 'event', reason: 'Woken' }));
  });

  it('the worker autoscaler keeps its count through the hibernation', () => {
    const scaled = {
      blobStorage: { ingestionLog: { bucket: 'log-bucket' } },
      worker: { replicas: 1, autoscaling: { enabled: true, maxReplicas: 6 } },
    };
    const autoscaling = {
      currentReplicas: 4,
      desiredReplicas: 4,
      reason: 'BacklogWithinTarget' as const,
      message: 'kept',
    };
    const o = object({ hibernate: true, ...scaled }, { ...steady, ...draining(), autoscaling });
    const backlog = { known: true as const, pendingFiles: 0, pendingBytes: 0, oldestPendingAgeSeconds: 0 };
    const p = plan({ object: o, world: world({ deployments: atZero(o), ingestionBacklog: backlog }) });
    expect(p.status.autoscaling).toMatchObject({ desiredReplicas: 4, reason: 'Held' });
  });
});

describe('hibernation: kubectl observatory hibernate|wake', () => {
  it('parses both commands', () => {
    expect(parseArgs(['hibernate', 'obs']).command).toEqual({ kind: 'hibernate', name: 'obs' });
    expect(parseArgs(['wake']).command).toEqual({ kind: 'wake' });
  });

  it('asks for spec.hibernate, refused mid-cutover and when there is nothing to wake', () => {
    const o = object({}, steady);
    expect(hibernationRequest(o, true).spec).toEqual({ hibernate: true });
    expect(() => hibernationRequest(o, false)).toThrow(Refused);
    expect(hibernationRequest(object({ hibernate: true }, steady), false).spec).toEqual({ hibernate: false });
    const cutover = object({}, { ...steady, target: { state: 'EventsOnly', since: SINCE, image: 'x' } });
    expect(() => hibernationRequest(cutover, true)).toThrow(/middle of the cutover/);
  });
});
