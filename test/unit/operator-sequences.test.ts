/**
 * Whole migrations replayed through the planner against a simulated world (fake Deployment and
 * Job controllers, random delays, Job and API failures, flaky probes, lagging informers, operator
 * restarts, random approval and retry timing, random reconcile interleavings). Every action is
 * checked against the safety properties as it executes (see operator/testing/fake-cluster.ts);
 * once the world cooperates, every run must converge to the desired state.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findFlicker } from '../../operator/testing/condition-history.ts';
import { play, runArb } from './operator-walks.ts';

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
      { numRuns: 100 },
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
