/**
 * Whole migrations replayed through the planner against a simulated world (fake Deployment and
 * Job controllers, random delays, Job and API failures, flaky probes, lagging informers, operator
 * restarts, random approval and retry timing, random reconcile interleavings). Every action is
 * checked against the safety properties as it executes (see test/fixtures/operator/fake-cluster.ts);
 * once the world cooperates, every run must converge to the desired state.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findFlicker, narrative } from '../fixtures/operator/condition-history.ts';
import { CALM } from '../fixtures/operator/fake-cluster.ts';
import { play, runArb } from './operator-walks.ts';

function sequenceSeed(): number {
  const value = process.env['OBSERVATORY_SEQUENCE_SEED'];
  if (value === 'random') return Date.now();
  return value ? Number(value) : 1002;
}

describe('operator planner: whole migrations in a simulated world', () => {
  it('keeps every safety property and converges once the world cooperates', () => {
    fc.assert(
      fc.property(runArb, (r) => {
        const c = play(r);
        expect({
          converged: c.isConverged(),
          status: c.live.status?.phase,
          blocked: c.live.status?.blockedBy,
        }).toMatchObject({
          converged: true,
        });
        expect(findFlicker(c.statuses)).toEqual([]);
      }),
      // A fixed seed keeps the suite deterministic, and no shrinking: shrinking a failing walk
      // replays it thousands of times synchronously, past any test timeout. A random seed
      // (OBSERVATORY_SEQUENCE_SEED=random) explores further.
      {
        numRuns: 100,
        seed: sequenceSeed(),
        endOnFailure: true,
      },
    );
  }, 240_000);

  it('a calm upgrade from release 3 to EventsOnly takes the documented path', () => {
    const c = play({
      seed: 7,
      scenario: 'toEventsOnly',
      automatic: true,
      drop: true,
      replicas: 2,
      chaos: { jobFailure: 0, apiFailure: 0, probeFlake: 0, reportOutage: 0, cacheLag: 0 },
      schedule: [],
    });
    const transitions = c.log
      .filter((l) => l.includes('StateAdvanced'))
      .map((l) => l.replace(/^.*moved /, ''));
    expect(transitions).toEqual(['from Release3 to Dual', 'from Dual to EventsOnly']);
    expect(c.jobsCreated).toEqual([
      'preflight',
      'migrate',
      'backfill-1',
      'backfill-2',
      'backfill-3',
      'backfill-4',
      'backfill-5',
      'migrate',
    ]);
  });
});

describe('operator planner: maintenance windows', () => {
  it('the calm upgrade waits for each window and takes the documented path inside them', () => {
    const c = play({
      seed: 7,
      scenario: 'toEventsOnly',
      automatic: true,
      drop: true,
      replicas: 2,
      chaos: CALM,
      schedule: [],
      windows: true,
    });
    // play() checks at every action that nothing disruptive started outside a window.
    expect(c.isConverged()).toBe(true);
    expect(c.jobsCreated).toEqual([
      'preflight',
      'migrate',
      'backfill-1',
      'backfill-2',
      'backfill-3',
      'backfill-4',
      'backfill-5',
      'migrate',
    ]);
    const waits = new Set(
      c.statuses.flatMap((r) =>
        (r.status.blockedBy ?? [])
          .filter((b) => b.includes('maintenance window'))
          .map((b) => b.replace(/ waits for .*| \(spec.*|: the next opens.*/, '')),
      ),
    );
    expect([...waits].length).toBeGreaterThan(1);
  });
});

describe('operator planner: a rotated Secret rolls the Pods that read it', () => {
  const converge = (c: ReturnType<typeof play>) => {
    const actions: string[] = [];
    for (let i = 0; i < 100 && (actions.length === 0 || !c.isConverged()); i++) {
      for (const a of c.reconcile().actions)
        if (a.kind === 'applyDeployment' || a.kind === 'createJob')
          actions.push(`${a.kind} ${'role' in a ? a.role : a.purpose}`);
      c.tick();
      c.tick();
    }
    return actions;
  };
  const calmDual = () =>
    play({
      seed: 9,
      scenario: 'stayDual',
      automatic: true,
      drop: false,
      replicas: 2,
      chaos: CALM,
      schedule: [],
    });

  it('a referenced key changes: both Deployments re-apply, Ready drops while rolling, the state stays Dual', () => {
    const c = calmDual();
    c.sources = { secrets: { db: { url: 'digest-1' } }, configMaps: {} };
    converge(c);
    expect(c.isConverged()).toBe(true);
    const from = c.statuses.length;

    c.sources = { secrets: { db: { url: 'digest-2' } }, configMaps: {} };
    const actions = converge(c);
    expect(actions).toEqual(['applyDeployment web', 'applyDeployment worker']);
    expect(c.isConverged()).toBe(true);
    expect(c.live.status?.state).toBe('Dual');
    const text = `${narrative(c.statuses.slice(from)).join('\n')}\n`;
    const file = new URL('./testdata/secret-rotation-in-dual.golden', import.meta.url);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
    expect(text).toBe(readFileSync(file, 'utf8'));
  });

  it('a key no role reads changes: nothing is applied', () => {
    const c = calmDual();
    c.sources = { secrets: { db: { url: 'digest-1', other: 'a' } }, configMaps: {} };
    converge(c);
    c.sources = { secrets: { db: { url: 'digest-1', other: 'b' } }, configMaps: {} };
    const p = c.reconcile();
    expect(p.actions.filter((a) => a.kind.startsWith('apply'))).toEqual([]);
  });
});
