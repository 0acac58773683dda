/**
 * Image upgrades within release 4 (4.1 -> 4.2, with migrations of their own) replayed through the
 * planner against the simulated world: random Job failures, API failures, stale caches, operator
 * restarts and hibernations during the upgrade. The fake cluster checks at every action that no
 * two schema Jobs run at once, that web and worker are never rendered on an image whose schema the
 * database is not at, and that no upgrade is recorded outside the maintenance windows; the walk
 * checks that a rolled-back upgrade leaves the previous image and schema, and that the walk
 * converges on the asked image once failures stop. A failed upgrade's narrative is a golden log
 * (testdata/upgrade-rolled-back.golden).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { LATEST_SCHEMA_VERSION } from '../../server/contract/schema-versions.ts';
import { findFlicker, narrative } from '../fixtures/operator/condition-history.ts';
import { CALM, FakeCluster, seededRng } from '../fixtures/operator/fake-cluster.ts';
import { BACKUP_SPEC, base, chaosArb, path, WALK_WINDOWS } from './operator-walks.ts';

const FROM = 'observatory:4.1';
const NEXT = 'observatory:4.2';
const BROKEN = 'observatory:4.2-broken';
/** Its migrations start at 50: from 47 it needs 4.2 first. */
const SKIP = 'observatory:4.3';
const NEXT_SCHEMA = 50;

type Start = 'Legacy' | 'Dual' | 'EventsOnly';

function cluster(seed: number, extra: Partial<ObservabilityServiceSpec> = {}): FakeCluster {
  const c = new FakeCluster({ ...structuredClone(base), image: FROM, ...extra }, seededRng(seed), CALM);
  c.images.set(FROM, { latest: LATEST_SCHEMA_VERSION, upgradableFrom: 0 });
  c.images.set(NEXT, { latest: NEXT_SCHEMA, upgradableFrom: 40 });
  c.images.set(BROKEN, { latest: NEXT_SCHEMA, upgradableFrom: 40, brokenMigration: true });
  c.images.set(SKIP, { latest: 55, upgradableFrom: NEXT_SCHEMA });
  return c;
}

const stalledReason = (c: FakeCluster) =>
  c.live.status?.conditions?.find((x) => x.type === 'Stalled' && x.status === 'True')?.reason;

/** Reconciles with a cooperative user until `done`, checking the properties at every step. */
function until(c: FakeCluster, done: () => boolean, limit = 600): void {
  for (let i = 0; i < limit && !done(); i++) {
    if (stalledReason(c) !== 'UpgradeFailed' && stalledReason(c) !== 'UpgradeRefused') c.retryIfStalled();
    c.reconcile();
    c.tick();
    c.tick();
    expect(c.violations).toEqual([]);
  }
}

/** A release 4 deployment on FROM, settled in `start` (with the backfill of Dual finished). */
function settled(c: FakeCluster, start: Start): FakeCluster {
  const o = { automatic: true, drop: false, replicas: 2, backups: c.live.spec.backup !== undefined };
  const specs =
    start === 'Legacy'
      ? path('viaLegacy', o).slice(0, 1)
      : path(start === 'Dual' ? 'stayDual' : 'toEventsOnly', o);
  for (const change of specs) c.updateSpec(change);
  until(
    c,
    () => c.isConverged() && (start !== 'Dual' || c.live.status?.backfill?.completedSteps === 4),
    1500,
  );
  expect(c.isConverged()).toBe(true);
  expect(c.db.version).toBe(LATEST_SCHEMA_VERSION);
  return c;
}

const deployedImages = (c: FakeCluster) =>
  [...c.deployments.values()].map((d) => d.object.spec!.template.spec!.containers[0]!.image);

const upgraded = (c: FakeCluster) => c.isConverged() && c.live.status?.deployedImage === c.live.spec.image;

describe('operator planner: image upgrades within release 4 at random', () => {
  const runArb = fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    start: fc.constantFrom<Start>('Legacy', 'Dual', 'EventsOnly'),
    broken: fc.boolean(),
    windows: fc.boolean(),
    backups: fc.boolean(),
    hibernate: fc.boolean(),
    chaos: chaosArb,
    schedule: fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 100, maxLength: 300 }),
  });

  it('keeps the schema and the images in step, rolls a failed migration back, and converges', () => {
    fc.assert(
      fc.property(runArb, (r) => {
        const c = settled(
          cluster(r.seed, {
            ...(r.windows ? { maintenanceWindows: WALK_WINDOWS } : {}),
            ...(r.backups ? { backup: BACKUP_SPEC } : {}),
          }),
          r.start,
        );
        const migrationsBefore = c.created.get('migrate')?.length ?? 0;
        c.chaos = r.chaos;
        c.updateSpec((s) => ({ ...s, image: r.broken ? BROKEN : NEXT }));
        const rolledBack = new Set<string>();
        // After a rollback the schema and the images are the previous ones until spec.image changes.
        const checkRolledBack = () => {
          const failed = c.live.status?.failedUpgrade;
          if (!failed || c.live.spec.image !== failed.image || c.live.status?.target?.image !== FROM) return;
          rolledBack.add(failed.image);
          expect(c.live.status?.deployedImage).toBe(FROM);
          expect(c.db.version).toBe(LATEST_SCHEMA_VERSION);
          expect(new Set(deployedImages(c))).toEqual(new Set([FROM]));
        };
        for (const roll of r.schedule) {
          if (roll < 45) c.reconcile();
          else if (roll < 80) c.tick();
          else if (roll < 85) c.restartOperator();
          else if (roll < 92) c.retryIfStalled();
          else if (r.hibernate && roll >= 96) c.updateSpec((s) => ({ ...s, hibernate: !s.hibernate }));
          else c.tick();
          expect(c.violations).toEqual([]);
          checkRolledBack();
        }

        // The world cooperates from here: a rolled-back image is re-tagged once fixed.
        c.chaos = CALM;
        if (c.live.spec.hibernate) c.updateSpec((s) => ({ ...s, hibernate: false }));
        let retag = 0;
        // Stalled on the image spec.image names now (not on the one before a re-tag).
        const refusedNow = () =>
          stalledReason(c) === 'UpgradeFailed' && c.live.status?.failedUpgrade?.image === c.live.spec.image;
        for (let i = 0; i < 20 && !upgraded(c); i++) {
          until(c, () => upgraded(c) || refusedNow());
          checkRolledBack();
          if (refusedNow()) {
            const image = `${NEXT}-r${++retag}`;
            c.images.set(image, { latest: NEXT_SCHEMA, upgradableFrom: 40 });
            c.updateSpec((s) => ({ ...s, image }));
          }
        }
        expect(upgraded(c)).toBe(true);
        expect(c.db.version).toBe(NEXT_SCHEMA);
        expect(c.live.status?.previousImage).toBe(FROM);
        expect(c.live.status?.failedUpgrade).toBeUndefined();
        expect(new Set(deployedImages(c))).toEqual(new Set([c.live.spec.image]));
        // The broken image never ends deployed: it was rolled back, and re-tagged by the user.
        if (r.broken) expect(rolledBack.has(BROKEN) && retag > 0).toBe(true);
        expect((c.created.get('migrate')?.length ?? 0) - migrationsBefore).toBeGreaterThanOrEqual(1);
      }),
      { numRuns: 100, seed: 4343, endOnFailure: true },
    );
  }, 300_000);
});

describe('operator planner: an image upgrade within release 4', () => {
  it('runs preflight, backup, migration and rollout on the new image, and records the previous one', () => {
    const c = settled(cluster(7, { backup: BACKUP_SPEC }), 'Dual');
    const from = c.jobsCreated.length;
    const events = c.log.length;
    c.updateSpec((s) => ({ ...s, image: NEXT }));
    until(c, () => upgraded(c));
    expect(c.jobsCreated.slice(from)).toEqual(['preflight', 'backup', 'migrate']);
    expect(c.db.version).toBe(NEXT_SCHEMA);
    expect(c.live.status).toMatchObject({ state: 'Dual', deployedImage: NEXT, previousImage: FROM });
    expect(c.live.status?.backups?.[0]).toMatchObject({ trigger: 'Upgrade', result: 'Complete' });
    expect(c.log.slice(events)).toContain(`Normal RolledOut: Dual: rolled out ${NEXT}`);
    expect(c.statuses.map((s) => s.status.phase)).toContain('Upgrading');
  });

  it('rolls a failed migration back to the previous schema and image, says why, and does not retry it', () => {
    const c = settled(cluster(9), 'Legacy');
    const from = c.jobsCreated.length;
    const events = c.log.length;
    const statuses = c.statuses.length;
    c.updateSpec((s) => ({ ...s, image: BROKEN }));
    until(c, () => stalledReason(c) === 'UpgradeFailed');
    expect(c.jobsCreated.slice(from)).toEqual(['preflight', 'migrate', 'rollback']);
    expect(c.db.version).toBe(LATEST_SCHEMA_VERSION);
    expect(new Set(deployedImages(c))).toEqual(new Set([FROM]));
    const status = c.live.status!;
    expect(status).toMatchObject({
      state: 'Legacy',
      deployedImage: FROM,
      failedUpgrade: { image: BROKEN, schemaVersion: LATEST_SCHEMA_VERSION },
    });
    expect(status.failedUpgrade?.reason).toContain('migration 50 failed: column already exists');
    expect(status.phase).toBe('Stalled');
    const rollback = [...c.jobs.values()].find((j) => j.purpose === 'rollback')!;
    expect(rollback.object.spec!.template.spec!.containers[0]).toMatchObject({
      image: BROKEN,
      args: ['migrate', 'down', '--to', String(LATEST_SCHEMA_VERSION)],
    });
    const warnings = c.log.slice(events).filter((l) => l.startsWith('Warning'));
    expect(warnings.map((w) => w.split(':')[0])).toEqual([
      'Warning UpgradeMigrationFailed',
      'Warning UpgradeRolledBack',
      'Warning UpgradeFailed',
    ]);
    expect(warnings[0]).toContain('column already exists');
    expect(c.statuses.some((s) => s.status.phase === 'RollingBackUpgrade')).toBe(true);
    expect(findFlicker(c.statuses.slice(statuses))).toEqual([]);
    const text = `${narrative(c.statuses.slice(statuses)).join('\n')}\n`;
    const file = new URL('./testdata/upgrade-rolled-back.golden', import.meta.url);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
    expect(text).toBe(readFileSync(file, 'utf8'));

    // Nothing hammers the broken image: time passes, no Job starts.
    const jobs = c.jobsCreated.length;
    for (let i = 0; i < 30; i++) {
      c.reconcile();
      c.tick();
    }
    expect(c.jobsCreated.length).toBe(jobs);
    // A new spec.image is a new attempt.
    c.updateSpec((s) => ({ ...s, image: NEXT }));
    until(c, () => upgraded(c));
    expect(c.live.status).toMatchObject({ deployedImage: NEXT, previousImage: FROM });
    expect(c.live.status?.failedUpgrade).toBeUndefined();
  });

  it('refuses a skip the new image cannot migrate from, after its preflight and nothing else', () => {
    const c = settled(cluster(3, { backup: BACKUP_SPEC }), 'EventsOnly');
    const from = c.jobsCreated.length;
    c.updateSpec((s) => ({ ...s, image: SKIP }));
    until(c, () => stalledReason(c) === 'UpgradeRefused');
    expect(c.jobsCreated.slice(from)).toEqual(['preflight']);
    const preflight = c.live.status?.conditions?.find((x) => x.type === 'PreflightPassed');
    expect(preflight).toMatchObject({ status: 'False', reason: 'UpgradeRefused' });
    expect(preflight?.message).toContain(
      `schema version ${LATEST_SCHEMA_VERSION}, older than ${NEXT_SCHEMA}`,
    );
    expect(c.db.version).toBe(LATEST_SCHEMA_VERSION);
    expect(new Set(deployedImages(c))).toEqual(new Set([FROM]));
    // Through 4.2 first, then 4.3.
    c.updateSpec((s) => ({ ...s, image: NEXT }));
    until(c, () => upgraded(c));
    c.updateSpec((s) => ({ ...s, image: SKIP }));
    until(c, () => upgraded(c));
    expect(c.db.version).toBe(55);
    expect(c.live.status?.previousImage).toBe(NEXT);
  });

  it('waits while hibernated, and runs once woken', () => {
    const c = settled(cluster(5), 'Dual');
    c.updateSpec((s) => ({ ...s, hibernate: true }));
    until(c, () => c.live.status?.hibernation?.phase === 'Hibernated');
    const jobs = c.jobsCreated.length;
    c.updateSpec((s) => ({ ...s, image: NEXT }));
    for (let i = 0; i < 30; i++) {
      c.reconcile();
      c.tick();
    }
    expect(c.jobsCreated.length).toBe(jobs);
    expect(c.live.status?.target?.image).toBe(FROM);
    c.updateSpec((s) => ({ ...s, hibernate: false }));
    until(c, () => upgraded(c));
    expect(c.jobsCreated.slice(jobs)).toEqual(['preflight', 'migrate']);
  });

  it('waits for a running backfill step, then upgrades; the chain goes on with the new image', () => {
    const c = cluster(11, { image: FROM });
    for (const change of path('stayDual', { automatic: true, drop: false, replicas: 2 }))
      c.updateSpec(change);
    for (let i = 0; i < 300 && !c.jobsCreated.includes('backfill-2'); i++) {
      c.reconcile();
      c.tick();
    }
    const step2 = [...c.jobs.values()].find((j) => j.purpose === 'backfill-2')!;
    expect(step2.outcome).toBe('running');
    c.updateSpec((s) => ({ ...s, image: NEXT }));
    c.reconcile();
    expect(c.live.status?.blockedBy?.join('\n')).toContain(
      `the upgrade to ${NEXT} waits for the backfill Job ${step2.object.metadata!.name} to stop`,
    );
    expect(c.live.status?.target?.image).toBe(FROM);
    until(c, () => upgraded(c) && c.live.status?.backfill?.completedSteps === 4);
    const after = [...c.jobs.values()].filter((j) => j.purpose === 'backfill-4');
    expect(after.map((j) => j.object.spec!.template.spec!.containers[0]!.image)).toEqual([NEXT]);
  });
});
