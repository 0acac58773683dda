/**
 * Hibernation replayed through the planner against the simulated world: random walks in which
 * the user hibernates and wakes at random (the fake cluster checks at every action that nothing
 * scheduled starts and nothing scales up while hibernated, and that the recorded state does not
 * move), and a calm hibernation in the middle of a backfill with its narrative as a golden log.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findFlicker, narrative } from '../fixtures/operator/condition-history.ts';
import { CALM, FakeCluster, seededRng } from '../fixtures/operator/fake-cluster.ts';
import { AUTOSCALED, base, path, play, runArb } from './operator-walks.ts';

describe('operator planner: hibernate and wake at random in whole migrations', () => {
  it('keeps every safety property, and converges once woken', () => {
    fc.assert(
      fc.property(
        runArb.map((r) => ({ ...r, hibernate: true })),
        (r) => {
          const c = play(r);
          expect(c.isConverged()).toBe(true);
          expect(c.live.status?.hibernation).toBeUndefined();
          expect(findFlicker(c.statuses)).toEqual([]);
        },
      ),
      { numRuns: 50, seed: 4242, endOnFailure: true },
    );
  }, 240_000);
});

describe('operator planner: hibernation in the middle of a backfill', () => {
  const dualWithBackfill = (seed: number, extra = {}) => {
    const c = new FakeCluster({ ...structuredClone(base), ...extra }, seededRng(seed), CALM);
    for (const change of path('stayDual', { automatic: true, drop: false, replicas: 2 }))
      c.updateSpec(change);
    // Up to the Job of backfill step 2.
    for (let i = 0; i < 300; i++) {
      c.reconcile();
      if (c.jobsCreated.includes('backfill-2')) break;
      c.tick();
    }
    expect(c.jobsCreated.at(-1)).toBe('backfill-2');
    return c;
  };
  const until = (c: FakeCluster, done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) {
      c.reconcile();
      c.tick();
    }
    expect(c.violations).toEqual([]);
  };
  const hibernated = (c: FakeCluster) => c.live.status?.hibernation?.phase === 'Hibernated';

  it('stops the step, scales to zero, keeps everything, and wakes to the same point', () => {
    const c = dualWithBackfill(11);
    const step2 = [...c.jobs.values()].find((j) => j.purpose === 'backfill-2')!;
    expect(step2.outcome).toBe('running');
    const before = structuredClone(c.live.status!);
    const from = c.statuses.length;
    c.updateSpec((s) => ({ ...s, hibernate: true }));
    // Recorded, then the step's Job stopped, before the Job controller moves.
    c.reconcile();
    c.reconcile();
    until(c, () => hibernated(c) && c.isConverged());
    expect([...c.deployments.values()].map((d) => d.pods.length)).toEqual([0, 0]);
    expect([...c.jobs.values()].filter((j) => j.outcome === 'running')).toEqual([]);
    const status = c.live.status!;
    expect(status.phase).toBe('Hibernated');
    expect(status.hibernation?.stoppedJob).toBe(step2.object.metadata!.name);
    expect([status.state, status.settings, status.deployedImage, status.backfill?.completedSteps]).toEqual([
      before.state,
      before.settings,
      before.deployedImage,
      before.backfill?.completedSteps,
    ]);
    expect(status.conditions?.find((x) => x.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Hibernated',
    });

    // Parked: time passes, the user asks for another mode; nothing starts.
    const jobs = c.jobsCreated.length;
    c.updateSpec((s) => ({ ...s, writeMode: 'EventsOnly' }));
    for (let i = 0; i < 30; i++) {
      c.reconcile();
      c.tick();
    }
    expect(c.jobsCreated.length).toBe(jobs);
    expect(c.live.status?.target?.state).toBe('Dual');
    c.updateSpec((s) => ({ ...s, writeMode: 'Dual' }));

    c.updateSpec((s) => ({ ...s, hibernate: false }));
    until(c, () => c.isConverged() && c.db.steps[4] === 'finished');
    expect(c.live.status?.settings).toEqual(before.settings);
    expect(c.live.status?.backfill?.completedSteps).toBe(4);
    // Step 2 ran again from where it stopped (the same Job name), then the chain went on.
    expect(c.jobsCreated.slice(jobs)).toEqual(['backfill-2', 'backfill-3', 'backfill-4']);
    expect(c.created.get('backfill-2')).toEqual([step2.object.metadata!.name]);
    expect(c.log.filter((l) => /Hibernat|Woken/.test(l))).toEqual([
      'Normal Hibernating: spec.hibernate: web and worker drain and scale to zero',
      'Normal Hibernated: web and worker at zero; state Dual, its settings and the backfill cursor are kept',
      'Normal Woken: web and worker run again in Dual',
    ]);
    const text = `${narrative(c.statuses.slice(from)).join('\n')}\n`;
    const file = new URL('./testdata/hibernate-mid-backfill.golden', import.meta.url);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
    expect(text).toBe(readFileSync(file, 'utf8'));
  });

  it('with an ingestion log, the workers drain its backlog after the web stopped, then stop', () => {
    const c = dualWithBackfill(5, { blobStorage: AUTOSCALED.blobStorage });
    c.backlogAgeSeconds = 40;
    c.updateSpec((s) => ({ ...s, hibernate: true }));
    until(c, () => (c.deployments.get('web')?.pods.length ?? 1) === 0);
    for (let i = 0; i < 5; i++) {
      c.reconcile();
      c.tick();
    }
    // The backlog is not drained and the drain's ten minutes may not be up: workers still run.
    expect(c.live.status?.blockedBy?.join('\n')).toMatch(/drain the ingestion log: 1 file/);
    expect(c.deployments.get('worker')?.object.spec?.replicas).toBe(2);
    c.backlogAgeSeconds = 0;
    until(c, () => hibernated(c));
    expect(c.deployments.get('worker')?.pods.length).toBe(0);
  });

  it('refuses a hibernation in the middle of the cutover, and the cutover goes on once it is withdrawn', () => {
    const c = dualWithBackfill(3);
    until(c, () => c.isConverged() && c.live.status?.backfill?.completedSteps === 4);
    c.updateSpec((s) => ({ ...s, writeMode: 'EventsOnly' }));
    until(c, () => c.live.status?.target?.state === 'EventsOnly');
    c.updateSpec((s) => ({ ...s, hibernate: true }));
    c.reconcile();
    const stalled = c.live.status?.conditions?.find((x) => x.type === 'Stalled');
    expect(stalled).toMatchObject({ status: 'True', reason: 'HibernationRefused' });
    expect(stalled?.message).toContain('spec.hibernate');
    expect(c.live.status?.hibernation).toBeUndefined();
    c.updateSpec((s) => ({ ...s, hibernate: false }));
    until(c, () => c.isConverged());
    expect(c.live.status?.state).toBe('EventsOnly');
  });
});
