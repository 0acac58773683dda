/** The condition library, step ownership, probe hysteresis and the Events of transitions, by tables. */
import { describe, expect, it } from 'vitest';
import type { ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { CONDITION_TYPES } from '../../operator/api/v1alpha1.ts';
import { CONDITIONS, checkCondition, condition, writeConditions } from '../../operator/planner/conditions.ts';
import { transitionEvents } from '../../operator/planner/events.ts';
import { STEPS, SUMMARY_TYPES } from '../../operator/planner/plan.ts';
import {
  nextStreak,
  type ProbeRound,
  type ProbeStreak,
  propagationVerdict,
  roundOf,
} from '../../operator/planner/propagation.ts';

describe('condition ownership', () => {
  it('each condition type has exactly one owner (a step or the summary)', () => {
    const owners = new Map<string, string[]>();
    for (const step of STEPS) for (const t of step.owns) owners.set(t, [...(owners.get(t) ?? []), step.name]);
    for (const t of SUMMARY_TYPES) owners.set(t, [...(owners.get(t) ?? []), 'summary']);
    expect([...owners].filter(([, o]) => o.length !== 1)).toEqual([]);
    expect([...owners.keys()].sort()).toEqual([...CONDITION_TYPES].sort());
  });
});

describe('the condition table', () => {
  it('derives the message from the reason and its facts', () => {
    expect(condition('SchemaMigrated', 'SchemaUpToDate', { state: 'Dual' })).toEqual({
      type: 'SchemaMigrated',
      status: 'True',
      reason: 'SchemaUpToDate',
      message: 'the schema of Dual is in place',
    });
    expect(() => condition('SchemaMigrated', 'PreflightRunning')).toThrow(/no reason/);
    expect(() => condition('SchemaMigrated', 'SchemaUpToDate')).toThrow(/needs the fact state/);
  });

  it.each([
    [
      {
        type: 'SchemaMigrated',
        status: 'True',
        reason: 'SchemaUpToDate',
        message: 'the schema of Dual is in place',
      },
      undefined,
    ],
    // The disagreement: a reason saying done with a message saying in progress.
    [
      {
        type: 'SchemaMigrated',
        status: 'True',
        reason: 'SchemaUpToDate',
        message: 'applying the schema migrations',
      },
      'does not follow',
    ],
    [
      {
        type: 'SchemaMigrated',
        status: 'False',
        reason: 'SchemaUpToDate',
        message: 'the schema of Dual is in place',
      },
      'means True',
    ],
    [{ type: 'PreflightPassed', status: 'Unknown', reason: 'SchemaUpToDate', message: '' }, 'not one of'],
  ])('checks %o', (c, problem) => {
    const r = checkCondition(c as Parameters<typeof checkCondition>[0]);
    if (problem === undefined) expect(r).toBeUndefined();
    else expect(r).toContain(problem);
  });

  it('every reason of every type has one status and a template', () => {
    for (const [type, reasons] of Object.entries(CONDITIONS))
      for (const [reason, e] of Object.entries(reasons)) {
        expect(['True', 'False', 'Unknown'], `${type}/${reason}`).toContain(e.status);
        expect(reason).toMatch(/^[A-Z][A-Za-z0-9]*$/);
      }
  });

  it('keeps lastTransitionTime while the status stays, stamps the generation, puts kstatus first', () => {
    const old = writeConditions(
      undefined,
      [condition('BackfillComplete', 'BackfillRunning', { step: 1, total: 4, chunks: '', progress: '0/4' })],
      1,
      't1',
    );
    const next = writeConditions(
      old,
      [
        condition('BackfillComplete', 'BackfillRunning', { step: 2, total: 4, chunks: '', progress: '1/4' }),
        condition('Ready', 'Progressing', { detail: 'x' }),
        condition('Stalled', 'NotStalled'),
        condition('Reconciling', 'Progressing', { detail: 'x' }),
      ],
      2,
      't2',
    );
    expect(next.map((c) => [c.type, c.lastTransitionTime, c.observedGeneration])).toEqual([
      ['Ready', 't2', 2],
      ['Reconciling', 't2', 2],
      ['Stalled', 't2', 2],
      ['BackfillComplete', 't1', 2],
    ]);
    const done = writeConditions(
      next,
      [condition('BackfillComplete', 'AllStepsFinished', { total: 4 })],
      2,
      't3',
    );
    expect(done.find((c) => c.type === 'BackfillComplete')!.lastTransitionTime).toBe('t3');
  });
});

describe('probe hysteresis (failureThreshold 3)', () => {
  const healthy: ProbeRound = { kind: 'healthy', pods: 2 };
  const stuck: ProbeRound = { kind: 'stuck', pods: ['w-1'] };
  const silent: ProbeRound = { kind: 'unanswered', detail: 'unreachable: w-1' };
  const partlyReady: ProbeRound = roundOf([{ pod: 'w-1', result: 'healthy' }], 2)!;

  it('classifies one round of answers', () => {
    expect(roundOf(undefined, 2)).toBeUndefined();
    expect(roundOf([{ pod: 'a', result: 'healthy' }], 2)).toEqual({
      kind: 'unanswered',
      detail: '1 of 2 worker pods are Ready and answered',
      allAskedHealthy: true,
    });
    expect(roundOf([], 2)).toMatchObject({ kind: 'unanswered', allAskedHealthy: false });
    expect(
      roundOf(
        [
          { pod: 'a', result: 'unreachable' },
          { pod: 'b', result: 'stuck' },
        ],
        2,
      ),
    ).toEqual({
      kind: 'stuck',
      pods: ['b'],
    });
    expect(
      roundOf(
        [
          { pod: 'a', result: 'healthy' },
          { pod: 'b', result: 'healthy' },
        ],
        2,
      ),
    ).toEqual(healthy);
  });

  it.each([
    ['one healthy answer', [healthy], ['True WorkersHealthy']],
    [
      'one miss keeps True',
      [healthy, silent, healthy],
      ['True WorkersHealthy', 'True ProbeFailuresBelowThreshold', 'True WorkersHealthy'],
    ],
    [
      'False after 3 stuck',
      [healthy, stuck, stuck, stuck],
      [
        'True WorkersHealthy',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'False PropagationStuck',
      ],
    ],
    [
      'unanswered rounds do not break a stuck streak',
      [healthy, stuck, silent, stuck, silent, stuck],
      [
        'True WorkersHealthy',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'False PropagationStuck',
      ],
    ],
    [
      'a round where every pod asked is healthy breaks a stuck streak, fewer than replicas or not',
      [healthy, stuck, stuck, partlyReady, stuck, stuck],
      [
        'True WorkersHealthy',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
      ],
    ],
    [
      'Unknown after 3 unanswered',
      [silent, silent, silent],
      ['Unknown AwaitingProbe', 'Unknown AwaitingProbe', 'Unknown ProbeUnanswered'],
    ],
    [
      'a stuck answer resets the unanswered count',
      [healthy, silent, silent, stuck, silent],
      [
        'True WorkersHealthy',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
        'True ProbeFailuresBelowThreshold',
      ],
    ],
    [
      'True again after one healthy answer',
      [stuck, stuck, stuck, healthy],
      ['Unknown AwaitingProbe', 'Unknown AwaitingProbe', 'False PropagationStuck', 'True WorkersHealthy'],
    ],
  ])('%s', (_n, rounds, expected) => {
    let streak: ProbeStreak = { stuck: 0, unanswered: 0 };
    let previous: 'True' | 'False' | 'Unknown' | undefined;
    const seen: string[] = [];
    for (const round of rounds) {
      streak = nextStreak(streak, round);
      const v = propagationVerdict(round, streak, 3, previous);
      const c = condition('PropagationHealthy', v.reason, v.facts);
      previous = c.status;
      seen.push(`${c.status} ${c.reason}`);
    }
    expect(seen).toEqual(expected);
  });
});

describe('Events of transitions', () => {
  const withConditions = (s: ObservabilityServiceStatus, ...cs: ReturnType<typeof condition>[]) => ({
    ...s,
    conditions: writeConditions(undefined, cs, 1, 't'),
  });
  const base: ObservabilityServiceStatus = { state: 'Dual', deployedImage: 'i' };

  it('one Event per transition, none when nothing changed', () => {
    const open = withConditions(base, condition('PropagationHealthy', 'WorkersHealthy', { pods: 2 }));
    const stuck = withConditions(
      base,
      condition('PropagationHealthy', 'PropagationStuck', { count: 3, threshold: 3, pods: 'w-1' }),
    );
    expect(transitionEvents(open, open, false)).toEqual([]);
    expect(transitionEvents(open, stuck, false)).toEqual([
      {
        kind: 'event',
        type: 'Warning',
        reason: 'GateClosed',
        message:
          'PropagationHealthy: propagation stuck on 3 consecutive probes (spec.propagation.failureThreshold 3): w-1',
      },
    ]);
    expect(transitionEvents(stuck, open, false).map((e) => e.reason)).toEqual(['GateOpened']);
    // A reason or message change within the same status is no gate transition.
    const below = withConditions(
      base,
      condition('PropagationHealthy', 'ProbeFailuresBelowThreshold', { detail: 'x', count: 1, threshold: 3 }),
    );
    expect(transitionEvents(open, below, false)).toEqual([]);
  });

  it('state reached, cutover started with the approval consumed, Job failed, backfill steps', () => {
    const cut: ObservabilityServiceStatus = {
      ...base,
      target: { state: 'EventsOnly', since: 's', image: 'i' },
    };
    expect(transitionEvents(base, cut, true).map((e) => e.reason)).toEqual([
      'CutoverStarted',
      'ApprovalConsumed',
    ]);
    expect(transitionEvents(base, cut, false).map((e) => e.reason)).toEqual(['CutoverStarted']);
    expect(transitionEvents(cut, { ...cut, state: 'EventsOnly' }, true)).toEqual([
      { kind: 'event', type: 'Normal', reason: 'StateAdvanced', message: 'moved from Dual to EventsOnly' },
    ]);
    const failed = withConditions(
      base,
      condition('Stalled', 'BackfillStepFailed', { detail: 'Job j failed' }),
    );
    expect(transitionEvents(base, failed, false)).toEqual([
      { kind: 'event', type: 'Warning', reason: 'BackfillStepFailed', message: 'Job j failed' },
    ]);
    expect(transitionEvents(failed, failed, false)).toEqual([]);
    const two = { ...base, backfill: { completedSteps: 2, totalSteps: 4, progress: '2/4' } };
    expect(transitionEvents(base, two, false).map((e) => e.message)).toEqual([
      'backfill step 1 of 4 finished',
      'backfill step 2 of 4 finished',
    ]);
  });
});
