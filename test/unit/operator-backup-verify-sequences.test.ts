/**
 * Backup verification (spec.backup.verify) replayed through the planner against the simulated
 * world: an hourly backup schedule with aggressive retention (keep one), a verification every two
 * backups and on its own schedule, random Job and API failures, lagging caches, operator restarts,
 * and restores requested on the way. The fake cluster checks at every action that a verification
 * Job never starts beside a backup, a restore or a prune, that no backup or restore starts while
 * one runs, and that retention never deletes the backup under verification. A differing backup
 * sets BackupVerified False naming its table, with one Warning event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { findFlicker } from '../fixtures/operator/condition-history.ts';
import { CALM, type Chaos, FakeCluster, seededRng } from '../fixtures/operator/fake-cluster.ts';
import { BACKUP_SPEC, base, chaosArb } from './operator-walks.ts';

const HOUR = 3_600_000;
const SPEC: ObservabilityServiceSpec = {
  ...base,
  backup: {
    ...BACKUP_SPEC,
    schedule: '0 * * * *',
    retention: { keepLast: 1 },
    // At the backups' own times: the two compete for every other hour.
    verify: { schedule: '0 */2 * * *', afterEveryBackups: 2 },
  },
};

const verdict = (c: FakeCluster) => c.live.status?.conditions?.find((x) => x.type === 'BackupVerified');

/** Plays `hours`, now and then asking to restore the newest backup; then lets the world cooperate. */
function run(seed: number, chaos: Chaos, hours: number, restores = true): FakeCluster {
  const c = new FakeCluster(structuredClone(SPEC), seededRng(seed), chaos);
  const end = c.now + hours * HOUR;
  let asked = 0;
  for (let i = 0; i < 20_000 && c.now < end; i++) {
    const roll = c.rng();
    if (roll < 0.45) c.reconcile();
    else if (roll < 0.96) c.tick();
    else if (roll < 0.99 || !restores) c.restartOperator();
    else {
      const newest = c.live.status?.backups?.find((b) => b.result === 'Complete');
      if (newest) c.annotate('observatory.dev/restore-requested', `${newest.id}.${++asked}`);
    }
    expect(c.violations).toEqual([]);
  }
  c.chaos = CALM;
  const calmEnd = c.now + 4 * HOUR;
  for (let i = 0; i < 20_000 && c.now < calmEnd; i++) {
    c.reconcile();
    c.tick();
    expect(c.violations).toEqual([]);
  }
  // Settles what the calm hours started: running Jobs, and a verification recorded at their very end.
  const unsettled = () =>
    [...c.jobs.values()].some((j) => j.outcome === 'running') ||
    c.live.status?.backupVerification?.pending !== undefined;
  for (let i = 0; i < 40; i++) {
    c.reconcile();
    if (!unsettled()) break;
    c.tick();
  }
  return c;
}

describe('operator planner: backup verification', () => {
  it('verifies the latest backup every two backups and on its schedule, never beside a backup, restore or prune', () => {
    const c = run(5, CALM, 8, false);
    expect(c.violations).toEqual([]);
    const backups = c.jobsCreated.filter((p) => p === 'backup').length;
    expect(backups).toBeGreaterThanOrEqual(10);
    // Every two backups, plus the two-hourly schedule: at least one per two backups.
    expect(c.verified.length).toBeGreaterThanOrEqual(Math.floor(backups / 2) - 1);
    const v = c.live.status?.backupVerification;
    expect(v?.last).toMatchObject({
      result: 'Verified',
      tables: 24,
      analyticsRows: 1200,
      relationalRows: 340,
    });
    expect(verdict(c)).toMatchObject({ status: 'True', reason: 'Verified' });
    expect(verdict(c)?.message).toContain(`backup ${v!.last!.id} restored into scratch databases`);
    expect(verdict(c)?.message).toContain('24 tables, 1200 analytics rows, 340 relational rows');
    expect(c.log.filter((l) => l.startsWith('Normal BackupVerified')).length).toBe(c.verified.length);
    expect(findFlicker(c.statuses)).toEqual([]);
  }, 60_000);

  it('a backup that differs sets BackupVerified False naming the table, with one Warning event', () => {
    const c = new FakeCluster(structuredClone(SPEC), seededRng(9), CALM);
    for (let i = 0; i < 2000 && c.verified.length === 0; i++) {
      // Every backup this run takes restores wrongly.
      for (const id of c.backups.keys()) c.corrupted.add(id);
      c.reconcile();
      c.tick();
    }
    for (let i = 0; i < 5; i++) c.reconcile();
    expect(c.violations).toEqual([]);
    const id = c.verified[0]!;
    expect(c.live.status?.backupVerification?.last).toMatchObject({ id, result: 'Differs' });
    expect(verdict(c)).toMatchObject({ status: 'False', reason: 'VerificationFailed' });
    expect(verdict(c)?.message).toContain(`backup ${id} failed its verification`);
    expect(verdict(c)?.message).toContain('analytics table traces:');
    const warnings = c.log.filter((l) => l.startsWith('Warning BackupVerificationFailed'));
    expect(warnings).toEqual([
      `Warning BackupVerificationFailed: backup ${id} failed its verification: analytics table traces: its objects' sha256 is ${'f'.repeat(64)}, recorded ${'a'.repeat(64)}`,
    ]);
    // No secret in any condition message or event.
    expect(JSON.stringify([c.live.status, c.log])).not.toMatch(/secret-access-key|s3cr/);
  });

  it('keeps every safety property under failures, restarts and restores, and verifies once they stop', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), chaosArb, (seed, chaos) => {
        const c = run(seed, chaos, 4);
        expect(c.violations).toEqual([]);
        // The calm hours took backups and verified the latest of them.
        expect(c.verified.length).toBeGreaterThan(0);
        expect(c.live.status?.backupVerification?.pending).toBeUndefined();
      }),
      { numRuns: 8, seed: 91, endOnFailure: true },
    );
  }, 240_000);
});
