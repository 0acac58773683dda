/**
 * The worker autoscaler (spec.worker.autoscaling): the pure decision by a table, over seeded
 * backlogs (bounds, stabilization, holds), as a golden narrative of one burst, and through the
 * whole planner in the simulated world: a burst scales the Deployment up with an Event, a drained
 * backlog brings it back to minReplicas after the window, and whole migrations with a random
 * backlog keep every safety property (the count within its bounds, fixed during a pass).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AutoscalingSpec, AutoscalingStatus } from '../../operator/api/v1alpha1.ts';
import { type AutoscaleInput, decideWorkers } from '../../operator/planner/autoscale.ts';
import type { IngestionBacklogReport, ObservedDeployment } from '../../operator/planner/types.ts';
import { CALM, FakeCluster, seededRng } from '../fixtures/operator/fake-cluster.ts';
import { AUTOSCALED, BACKUP_SPEC, base, calmRun, path, play, runArb } from './operator-walks.ts';

const policy: Required<AutoscalingSpec> = {
  enabled: true,
  minReplicas: 1,
  maxReplicas: 6,
  targetBacklogAgeSeconds: 30,
  scaleDownStabilizationSeconds: 300,
};
const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const iso = (seconds: number) => at(seconds).toISOString();

/** A worker Deployment settled at `n` replicas (or `ready` of them ready). */
const worker = (n: number, ready = n): ObservedDeployment => ({
  generation: 1,
  observedGeneration: 1,
  specReplicas: n,
  replicas: n,
  updatedReplicas: n,
  readyReplicas: ready,
  availableReplicas: ready,
  configHash: 'h',
  specHash: 's',
  stalePods: 0,
});
const backlog = (age: number): IngestionBacklogReport => ({
  known: true,
  pendingFiles: age > 0 ? 10 : 0,
  pendingBytes: age > 0 ? 10_000 : 0,
  oldestPendingAgeSeconds: age,
});
const recorded = (desired: number, extra: Partial<AutoscalingStatus> = {}): AutoscalingStatus => ({
  currentReplicas: desired,
  desiredReplicas: desired,
  lastScaleTime: iso(0),
  reason: 'BacklogWithinTarget',
  message: '',
  ...extra,
});

describe('the decision', () => {
  const base: AutoscaleInput = {
    policy,
    recorded: undefined,
    startReplicas: 1,
    worker: worker(1),
    backlog: backlog(0),
    held: undefined,
    now: at(600),
  };
  const rows: { case: string; input: Partial<AutoscaleInput>; want: Partial<AutoscalingStatus> }[] = [
    {
      case: 'first decision: starts from spec.worker.replicas (a drained backlog starts the window)',
      input: { startReplicas: 2, worker: worker(2) },
      want: { desiredReplicas: 2, reason: 'StabilizingScaleDown', lastScaleTime: undefined },
    },
    {
      case: 'spec.worker.replicas outside the bounds is clamped',
      input: { startReplicas: 9, worker: worker(9) },
      want: { desiredReplicas: 6 },
    },
    {
      case: 'age over the target: about in proportion (45s over 30s at 2 -> 3)',
      input: { recorded: recorded(2), worker: worker(2), backlog: backlog(45) },
      want: { desiredReplicas: 3, reason: 'ScaledUp', lastScaleTime: iso(600) },
    },
    {
      case: 'far over the target: at most doubling',
      input: { recorded: recorded(2), worker: worker(2), backlog: backlog(3000) },
      want: { desiredReplicas: 4, reason: 'ScaledUp' },
    },
    {
      case: 'just over the target: at least one more',
      input: { recorded: recorded(3), worker: worker(3), backlog: backlog(31) },
      want: { desiredReplicas: 4, reason: 'ScaledUp' },
    },
    {
      case: 'never above maxReplicas',
      input: { recorded: recorded(5), worker: worker(5), backlog: backlog(3000) },
      want: { desiredReplicas: 6, reason: 'ScaledUp' },
    },
    {
      case: 'at maxReplicas: stays, says so',
      input: { recorded: recorded(6), worker: worker(6), backlog: backlog(3000) },
      want: { desiredReplicas: 6, reason: 'AtMaxReplicas', lastScaleTime: iso(0) },
    },
    {
      case: 'the last scale is not ready yet: the next scale up waits',
      input: { recorded: recorded(4), worker: worker(4, 2), backlog: backlog(300) },
      want: { desiredReplicas: 4, reason: 'ScaleUpPending' },
    },
    {
      case: 'the last scale was less than one target ago: the new workers get time to catch up',
      input: { recorded: recorded(2, { lastScaleTime: iso(590) }), worker: worker(2), backlog: backlog(300) },
      want: { desiredReplicas: 2, reason: 'ScaleUpPending' },
    },
    {
      case: 'between half and the full target: kept',
      input: { recorded: recorded(4), worker: worker(4), backlog: backlog(20) },
      want: { desiredReplicas: 4, reason: 'BacklogWithinTarget' },
    },
    {
      case: 'drained: the stabilization window starts, nothing moves yet',
      input: { recorded: recorded(4), worker: worker(4), backlog: backlog(0) },
      want: { desiredReplicas: 4, reason: 'StabilizingScaleDown', scaleDownSince: iso(600), scaleDownTo: 1 },
    },
    {
      case: 'window not over: the most any observation asked for is kept as the destination',
      input: {
        recorded: recorded(4, { scaleDownSince: iso(400), scaleDownTo: 2 }),
        worker: worker(4),
        backlog: backlog(0),
      },
      want: { desiredReplicas: 4, reason: 'StabilizingScaleDown', scaleDownSince: iso(400), scaleDownTo: 2 },
    },
    {
      case: 'window over: down to that destination',
      input: {
        recorded: recorded(4, { scaleDownSince: iso(300), scaleDownTo: 2 }),
        worker: worker(4),
        backlog: backlog(0),
      },
      want: { desiredReplicas: 2, reason: 'ScaledDown', lastScaleTime: iso(600) },
    },
    {
      case: 'window over with an empty backlog all along: down to minReplicas',
      input: {
        recorded: recorded(4, { scaleDownSince: iso(300), scaleDownTo: 1 }),
        worker: worker(4),
        backlog: backlog(0),
      },
      want: { desiredReplicas: 1, reason: 'ScaledDown' },
    },
    {
      case: 'a busy observation inside the window ends it',
      input: {
        recorded: recorded(4, { scaleDownSince: iso(300), scaleDownTo: 1 }),
        worker: worker(4),
        backlog: backlog(20),
      },
      want: { desiredReplicas: 4, reason: 'BacklogWithinTarget', scaleDownSince: undefined },
    },
    {
      case: 'at minReplicas and drained: nothing to stabilize',
      input: { recorded: recorded(1), worker: worker(1), backlog: backlog(0) },
      want: { desiredReplicas: 1, reason: 'BacklogWithinTarget', scaleDownSince: undefined },
    },
    {
      case: 'no answer from any worker: kept, whatever the last age was',
      input: {
        recorded: recorded(3, { lastBacklogAgeSeconds: 500 }),
        worker: worker(3),
        backlog: { known: false },
      },
      want: { desiredReplicas: 3, reason: 'BacklogUnknown', lastBacklogAgeSeconds: 500 },
    },
    {
      case: 'held (a pass or a restore): kept, with why',
      input: { recorded: recorded(3), worker: worker(3), backlog: backlog(3000), held: 'the pass to Dual' },
      want: { desiredReplicas: 3, reason: 'Held', message: '3 worker(s) held: the pass to Dual' },
    },
    {
      case: 'bounds lowered under the recorded count: clamped at once, recorded as a scale',
      input: {
        policy: { ...policy, maxReplicas: 2 },
        recorded: recorded(4),
        worker: worker(4),
        backlog: backlog(20),
      },
      want: { desiredReplicas: 2, lastScaleTime: iso(600) },
    },
  ];
  it.each(rows)('$case', ({ input, want }) => {
    const got = decideWorkers({ ...base, ...input });
    // An undefined value in the row: the field is absent.
    for (const [k, v] of Object.entries(want))
      if (v === undefined) expect(got).not.toHaveProperty(k);
      else expect(got).toHaveProperty(k, v);
  });
});

/**
 * A queue over time: requests arrive in bursts, each ready worker drains a fixed rate, the oldest
 * write's age follows. Each tick the autoscaler decides; the Deployment follows with a lag.
 */
function simulate(seed: number, ticks: number) {
  const rng = seededRng(seed);
  const p: Required<AutoscalingSpec> = {
    ...policy,
    minReplicas: 1 + Math.floor(rng() * 2),
    maxReplicas: 3 + Math.floor(rng() * 5),
    targetBacklogAgeSeconds: 10 + Math.floor(rng() * 50),
    scaleDownStabilizationSeconds: Math.floor(rng() * 400),
  };
  let rec: AutoscalingStatus | undefined;
  let pods = p.minReplicas;
  let ready = pods;
  let pending = 0;
  let oldest = 0;
  const steps: { t: number; age: number; held: boolean; before: number; after: AutoscalingStatus }[] = [];
  for (let i = 0; i < ticks; i++) {
    const t = i * 15;
    const burst = Math.sin(i / 20) > 0.3 ? Math.floor(rng() * 400) : Math.floor(rng() * 20);
    if (pending === 0 && burst > 0) oldest = t;
    pending += burst;
    pending = Math.max(0, pending - ready * 60);
    const age = pending > 0 ? t - oldest : 0;
    const held = rng() < 0.05;
    const before = rec?.desiredReplicas ?? p.minReplicas;
    const after = decideWorkers({
      policy: p,
      recorded: rec,
      startReplicas: p.minReplicas,
      worker: worker(pods, ready),
      backlog: rng() < 0.05 ? { known: false } : backlog(age),
      held: held ? 'a pass' : undefined,
      now: at(t),
    });
    steps.push({ t, age, held, before, after });
    rec = after;
    pods = after.desiredReplicas;
    ready = Math.min(pods, ready + (rng() < 0.7 ? pods : 0));
    if (ready > pods) ready = pods;
  }
  return { p, steps };
}

describe('the decision over seeded backlogs', () => {
  it.each(Array.from({ length: 40 }, (_, i) => 101 + i))(
    'seed %i: within the bounds, up only over the target, down only after the window, never while held',
    (seed) => {
      const { p, steps } = simulate(seed, 300);
      let windowFrom: number | undefined;
      for (const { t, age, held, before, after } of steps) {
        const n = after.desiredReplicas;
        expect(n).toBeGreaterThanOrEqual(p.minReplicas);
        expect(n).toBeLessThanOrEqual(p.maxReplicas);
        if (held) expect(n).toBe(before);
        if (n > before) {
          expect(age).toBeGreaterThan(p.targetBacklogAgeSeconds);
          expect(n).toBeLessThanOrEqual(2 * before);
        }
        if (n < before) {
          expect(windowFrom).toBeDefined();
          expect(t - windowFrom!).toBeGreaterThanOrEqual(p.scaleDownStabilizationSeconds);
        }
        windowFrom = after.scaleDownSince ? Date.parse(after.scaleDownSince) / 1000 - T0 / 1000 : undefined;
      }
      expect(steps.some((s) => s.after.reason === 'ScaledUp')).toBe(true);
    },
  );
});

describe('one burst, decision by decision', () => {
  it('matches the golden narrative', () => {
    const p: Required<AutoscalingSpec> = { ...policy, maxReplicas: 4, scaleDownStabilizationSeconds: 60 };
    // The oldest write's age every 15 s: a burst the workers fall behind on, then drain.
    const ages = [0, 5, 20, 35, 50, 65, 80, 60, 40, 20, 12, 0, 0, 0, 0, 0, 0, 0];
    let rec: AutoscalingStatus | undefined;
    const lines: string[] = [];
    ages.forEach((age, i) => {
      const n = rec?.desiredReplicas ?? 1;
      rec = decideWorkers({
        policy: p,
        recorded: rec,
        startReplicas: 1,
        worker: worker(n),
        backlog: backlog(age),
        held: undefined,
        now: at(i * 15),
      });
      lines.push(`t=${i * 15}s age=${age}s -> ${rec.desiredReplicas} ${rec.reason}: ${rec.message}`);
    });
    const text = `${lines.join('\n')}\n`;
    const file = new URL('./testdata/autoscale-burst.golden', import.meta.url);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
    expect(text).toBe(readFileSync(file, 'utf8'));
  });
});

describe('through the planner, in the simulated world', () => {
  /** Dual reached and Ready, workers autoscaled on the backlog. */
  function dualWithAutoscaling(): FakeCluster {
    return play(calmRun('stayDual', { seed: 11, replicas: 1, autoscaling: true }));
  }
  const workerReplicas = (c: FakeCluster) => c.deployments.get('worker')!.object.spec!.replicas;
  const run = (c: FakeCluster, rounds: number) => {
    for (let i = 0; i < rounds; i++) {
      c.reconcile();
      c.tick();
    }
  };

  it('a burst scales the workers up with an Event, a drained backlog back to minReplicas after the window', () => {
    const c = dualWithAutoscaling();
    expect(c.isConverged()).toBe(true);
    expect(workerReplicas(c)).toBe(1);

    c.backlogAgeSeconds = 600;
    run(c, 40);
    expect(workerReplicas(c)).toBe(AUTOSCALED.worker!.autoscaling!.maxReplicas);
    expect(c.live.status?.autoscaling).toMatchObject({ desiredReplicas: 4, reason: 'AtMaxReplicas' });
    const ups = c.log.filter((l) => l.startsWith('Normal WorkersScaledUp'));
    expect(ups.length).toBeGreaterThan(0);
    expect(ups[0]).toMatch(/over the target 30s: 1 -> 2 worker\(s\)/);

    c.backlogAgeSeconds = 0;
    run(c, 40);
    expect(workerReplicas(c)).toBe(1);
    expect(c.live.status?.autoscaling).toMatchObject({ desiredReplicas: 1, currentReplicas: 1 });
    expect(c.log.filter((l) => l.startsWith('Normal WorkersScaledDown'))).toEqual([
      expect.stringMatching(/stayed drained for 300s .*: 4 -> 1 worker\(s\)/),
    ]);
    expect(c.violations).toEqual([]);
    expect(c.isConverged()).toBe(true);
  });

  it('turned off: the worker returns to spec.worker.replicas and the status record goes', () => {
    const c = dualWithAutoscaling();
    c.backlogAgeSeconds = 600;
    run(c, 20);
    expect(workerReplicas(c)).toBeGreaterThan(1);
    c.updateSpec((s) => ({ ...s, worker: { replicas: 1 } }));
    run(c, 10);
    expect(workerReplicas(c)).toBe(1);
    expect(c.live.status?.autoscaling).toBeUndefined();
  });

  it('a restore holds the count: the worker goes to zero and back to the recorded count, no scale meanwhile', () => {
    const c = new FakeCluster(
      { ...structuredClone(base), backup: BACKUP_SPEC, ...AUTOSCALED },
      seededRng(7),
      CALM,
    );
    const converge = () => {
      for (let i = 0; i < 300 && !c.isConverged(); i++) {
        c.reconcile();
        c.tick();
      }
    };
    converge();
    for (const change of path('rollbackFromDual', {
      automatic: true,
      drop: false,
      replicas: 1,
      backups: true,
    })) {
      c.updateSpec(change);
      converge();
    }
    const backup = c.live.status!.backups!.find((b) => b.trigger === 'Release4')!;
    const recorded = c.live.status!.autoscaling!.desiredReplicas;
    const events = c.log.length;
    c.backlogAgeSeconds = 600;
    c.annotate('observatory.dev/restore-requested', backup.id);
    const scales: number[] = [];
    const reasons = new Set<string>();
    // Read afresh each time: every reconcile may move the phase.
    const restoring = () => c.live.status?.restore?.phase !== 'Complete';
    for (let i = 0; i < 200 && restoring(); i++) {
      for (const a of c.reconcile().actions)
        if (a.kind === 'applyDeployment' && a.role === 'worker') scales.push(a.object.spec!.replicas!);
      if (restoring()) reasons.add(c.live.status!.autoscaling!.reason);
      c.tick();
    }
    expect(c.restored).toEqual([backup.id]);
    expect(scales).toEqual([0]);
    expect([...reasons]).toEqual(['Held']);
    expect(c.log.slice(events).filter((l) => l.includes('WorkersScaled'))).toEqual([]);
    c.reconcile();
    expect(workerReplicas(c)).toBe(recorded);
    expect(c.violations).toEqual([]);
  });

  it('whole migrations with a random backlog keep every safety property and converge', () => {
    fc.assert(
      fc.property(runArb, (r) => {
        const c = play({ ...r, autoscaling: true });
        expect(c.isConverged()).toBe(true);
      }),
      { numRuns: 30, seed: 38, endOnFailure: true },
    );
  }, 240_000);
});
