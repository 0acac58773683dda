/**
 * Scheduled backups and retention replayed through the planner against the simulated world: hours
 * of an hourly schedule held to maintenance windows, with random Job and API failures, lagging
 * caches and operator restarts. The fake cluster checks at every action that a scheduled backup
 * starts only inside a window, that one backup Job runs at a time, and that a prune protects what a
 * restore or a pass still needs; at the end the bucket holds exactly what the retention keeps. A
 * calm run's narrative is a golden log.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { findFlicker, narrative } from '../fixtures/operator/condition-history.ts';
import { CALM, type Chaos, FakeCluster, seededRng } from '../fixtures/operator/fake-cluster.ts';
import { BACKUP_SPEC, base, chaosArb } from './operator-walks.ts';

const HOUR = 3_600_000;
const SPEC: ObservabilityServiceSpec = {
  ...base,
  backup: { ...BACKUP_SPEC, schedule: '0 * * * *', retention: { keepLast: 2 } },
  maintenanceWindows: [{ cron: '30 * * * *', duration: '20m' }],
};

/** Plays `hours` of the schedule; returns the cluster once the world has cooperated for the last hours. */
function run(seed: number, chaos: Chaos, hours: number): FakeCluster {
  const c = new FakeCluster(structuredClone(SPEC), seededRng(seed), chaos);
  const end = c.now + hours * HOUR;
  for (let i = 0; i < 20_000 && c.now < end; i++) {
    const roll = c.rng();
    if (roll < 0.45) c.reconcile();
    else if (roll < 0.97) c.tick();
    else c.restartOperator();
    expect(c.violations).toEqual([]);
  }
  // The world cooperates for three more hours: every due backup is taken, retention catches up.
  c.chaos = CALM;
  const calmEnd = c.now + 3 * HOUR;
  for (let i = 0; i < 20_000 && c.now < calmEnd; i++) {
    c.reconcile();
    c.tick();
    expect(c.violations).toEqual([]);
  }
  for (
    let i = 0;
    i < 20 && c.jobs.size > 0 && [...c.jobs.values()].some((j) => j.outcome === 'running');
    i++
  ) {
    c.reconcile();
    c.tick();
  }
  c.reconcile();
  return c;
}

const scheduledIds = (c: FakeCluster) =>
  [...c.backups.keys()].filter((id) => id.startsWith('scheduled-')).sort();

describe('operator planner: scheduled backups with retention', () => {
  it('an hourly schedule inside the windows: one backup per hour, the newest two kept, the rest deleted', () => {
    const c = run(21, CALM, 6);
    expect(c.violations).toEqual([]);
    const taken = c.jobsCreated.filter((p) => p === 'backup').length;
    expect(taken).toBeGreaterThanOrEqual(8);
    // The bucket keeps the newest two scheduled backups; every other one was pruned, and no
    // pruned backup is still offered for a restore.
    const kept = scheduledIds(c);
    expect(kept).toHaveLength(2);
    expect(c.pruned.length + kept.length).toBe(taken);
    const recorded = (c.live.status?.backups ?? []).map((b) => b.id);
    expect(recorded.filter((id) => c.pruned.includes(id))).toEqual([]);
    expect([...c.configMaps.keys()].filter((k) => c.pruned.some((id) => k.endsWith(id)))).toEqual([]);
    expect(c.live.status?.backupSchedule).toMatchObject({ kept: 2, lastSuccessful: { id: kept[1] } });
    // Each id names an hour; each backup was taken in that hour's window (checked as it was created).
    for (const id of [...kept, ...c.pruned]) expect(id).toMatch(/^scheduled-\d{8}t\d{2}0000z$/);
    // Active, or the next hour waiting for its window.
    expect(c.live.status?.conditions?.find((x) => x.type === 'BackupScheduled')?.status).toBe('True');
    expect(findFlicker(c.statuses)).toEqual([]);
    const text = `${narrative(c.statuses.slice(0, 60)).join('\n')}\n`;
    const file = new URL('./testdata/scheduled-backups-hourly.golden', import.meta.url);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
    expect(text).toBe(readFileSync(file, 'utf8'));
  }, 60_000);

  it('keeps every safety property under failures and restarts, and catches up once they stop', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), chaosArb, (seed, chaos) => {
        const c = run(seed, chaos, 3);
        expect(c.violations).toEqual([]);
        // The calm hours took their backups and pruned down to the newest two.
        expect(scheduledIds(c).length).toBeLessThanOrEqual(2);
        expect(c.live.status?.backupSchedule?.lastSuccessful?.id).toBe(scheduledIds(c).at(-1));
      }),
      { numRuns: 8, seed: 77, endOnFailure: true },
    );
  }, 240_000);
});
