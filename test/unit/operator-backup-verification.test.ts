/**
 * Backup verification in the operator: the pure decisions (when it is due, what blocks it, how a
 * verdict reads) by tables, and the planner one world at a time: recorded first, then its Job;
 * the verdict as status, condition and event; retention protects its backup and restores and
 * backups wait for it.
 */
import { describe, expect, it } from 'vitest';
import type {
  BackupRecord,
  ObservabilityService,
  ObservabilityServiceStatus,
} from '../../operator/api/v1alpha1.ts';
import {
  countNewBackups,
  initialVerification,
  parseVerifySummary,
  verdictCondition,
  verdictRecord,
  verificationBlocker,
  verificationDue,
} from '../../operator/planner/backup-verification.ts';
import { plan } from '../../operator/planner/plan.ts';
import type { Action, ObservedJob, World } from '../../operator/planner/types.ts';
import { validate } from '../../operator/validation.ts';
import type { BackupVerifySummary } from '../../server/contract/backup.ts';
import { dualSpec, objectsOn, quietWorld, SINCE, settledStatus } from '../fixtures/operator/planner-world.ts';
import { rolledOut } from '../fixtures/operator/rolled-out.ts';
import { BACKUP_SPEC } from './operator-walks.ts';

const NOW = new Date('2026-03-08T04:05:00Z');
const WEEKLY = '0 4 * * 0';

const complete = (id: string, finishedAt: string): BackupRecord => ({
  id,
  trigger: 'Scheduled',
  result: 'Complete',
  job: `obs-backup-${id}`,
  finishedAt,
  release: '4',
  writeMode: 'Dual',
});
const B1 = complete('b1', '2026-03-06T03:04:00.000Z');
const B2 = complete('b2', '2026-03-07T03:04:00.000Z');
const FAILED: BackupRecord = { id: 'b3', trigger: 'Requested', result: 'Failed', job: 'j', message: 'x' };

describe('countNewBackups', () => {
  it.each([
    ['all complete ones when none was counted', [B2, B1, FAILED], undefined, 2, B2.finishedAt],
    ['only those finished after the mark', [B2, B1], B1.finishedAt, 1, B2.finishedAt],
    ['none new', [B2, B1], B2.finishedAt, 0, B2.finishedAt],
    ['none at all', [], undefined, 0, undefined],
  ] as const)('%s', (_, backups, until, added, mark) =>
    expect(countNewBackups(backups, until)).toEqual({ added, countedUntil: mark }),
  );
});

describe('verificationDue', () => {
  it.each([
    [
      'a scheduled time passed',
      { schedule: WEEKLY },
      { lastScheduleTime: '2026-03-01T04:00:00.000Z' },
      { reason: 'Scheduled', at: '2026-03-08T04:00:00.000Z' },
    ],
    [
      'the scheduled time was handled',
      { schedule: WEEKLY },
      { lastScheduleTime: '2026-03-08T04:00:00.000Z' },
      undefined,
    ],
    [
      'a first read counts from when it was read',
      { schedule: WEEKLY },
      { since: NOW.toISOString() },
      undefined,
    ],
    [
      'N backups since the last one',
      { afterEveryBackups: 2 },
      { backupsSince: 2 },
      { reason: 'AfterBackups', backups: 2 },
    ],
    ['fewer than N', { afterEveryBackups: 3 }, { backupsSince: 2 }, undefined],
    [
      'both: the schedule first',
      { schedule: WEEKLY, afterEveryBackups: 1 },
      { lastScheduleTime: '2026-03-01T04:00:00.000Z', backupsSince: 5 },
      { reason: 'Scheduled', at: '2026-03-08T04:00:00.000Z' },
    ],
  ] as const)('%s', (_, v, s, due) => expect(verificationDue(v, { since: SINCE, ...s }, NOW)).toEqual(due));

  it('a first read takes neither a time already passed nor the backups already taken', () => {
    const s = initialVerification({ schedule: WEEKLY, afterEveryBackups: 1 }, [B2, B1], NOW);
    expect(s).toEqual({
      since: NOW.toISOString(),
      lastScheduleTime: '2026-03-08T04:00:00.000Z',
      countedUntil: B2.finishedAt,
      backupsSince: 0,
    });
    expect(verificationDue({ schedule: WEEKLY, afterEveryBackups: 1 }, s, NOW)).toBeUndefined();
  });
});

describe('verificationBlocker', () => {
  const idle = { restoring: false, runningJobs: [] };
  it.each([
    ['nothing', idle, undefined],
    ['a restore', { ...idle, restoring: true }, 'the restore must finish first'],
    [
      'a pass',
      { ...idle, passTo: 'EventsOnly' },
      'the pass to EventsOnly (and its backup) must finish first',
    ],
    ['a recorded backup', { ...idle, backupPending: 'scheduled-x' }, 'backup scheduled-x must finish first'],
    [
      'a recorded prune',
      { ...idle, prunePending: 'b2' },
      'the retention run after backup b2 must finish first',
    ],
    ['a running Job', { ...idle, runningJobs: ['obs-backup-1'] }, 'Job obs-backup-1 must finish first'],
  ])('%s', (_, busy, why) => expect(verificationBlocker(busy)).toBe(why));
});

const VERIFIED: BackupVerifySummary = {
  id: 'b2',
  result: 'Verified',
  tables: 31,
  rows: { analytics: 500, relational: 90 },
  differences: 0,
};
const DIFFERS: BackupVerifySummary = {
  ...VERIFIED,
  result: 'Differs',
  rows: { analytics: 0, relational: 90 },
  differences: 3,
  first: { part: 'analytics', table: 'traces', detail: '12 rows restored, recorded 40' },
};

describe('the verdict', () => {
  it.each([
    ['', 'the Job left no summary in its termination message'],
    ['{', 'the termination message is not JSON'],
    ['{"id":"b2"}', 'the summary does not follow the contract'],
    [JSON.stringify({ ...VERIFIED, id: 'b1' }), 'the summary is of backup b1'],
  ])('%j is no verdict on b2', (message, why) =>
    expect(parseVerifySummary('b2', message)).toEqual({ ok: false, why: expect.stringContaining(why) }),
  );

  it.each([
    [
      VERIFIED,
      'Verified',
      { id: 'b2', at: NOW.toISOString(), tables: 31, rows: '500 analytics rows, 90 relational rows' },
    ],
    [
      { ...VERIFIED, result: 'RowsNotRecorded' as const, tables: 0, rows: { relational: 90 } },
      'RowsNotRecorded',
      { id: 'b2', at: NOW.toISOString(), rows: '90 relational rows' },
    ],
    [
      DIFFERS,
      'VerificationFailed',
      {
        id: 'b2',
        at: NOW.toISOString(),
        detail: 'analytics table traces: 12 rows restored, recorded 40 (and 2 more differences)',
      },
    ],
  ])('%# %s', (summary, reason, facts) => {
    const parsed = parseVerifySummary('b2', JSON.stringify(summary));
    expect(parsed.ok).toBe(true);
    const record = verdictRecord(summary, NOW.toISOString());
    expect(verdictCondition(record)).toEqual({ reason, facts });
  });
});

// ---- the planner ----

const spec = dualSpec({
  backfill: { enabled: false },
  backup: { ...BACKUP_SPEC, schedule: '0 3 * * *', retention: { keepLast: 1 }, verify: { schedule: WEEKLY } },
});
const steady = settledStatus('Dual', {
  backups: [B2, B1],
  backupSchedule: { since: SINCE, lastScheduleTime: '2026-03-08T03:00:00.000Z' },
});
const dueVerification = { since: SINCE, lastScheduleTime: '2026-03-01T04:00:00.000Z', backupsSince: 0 };

const objectOn = objectsOn(spec, 3);
const object = (status: ObservabilityServiceStatus, annotations?: Record<string, string>) =>
  objectOn({}, status, annotations);
const world = (o: ObservabilityService, jobs: ObservedJob[] = []): World =>
  quietWorld(NOW, { deployments: rolledOut(o, 'Dual'), jobs });
const created = (actions: Action[]) => actions.flatMap((a) => (a.kind === 'createJob' ? [a.object] : []));
const events = (actions: Action[]) =>
  actions.flatMap((a) => (a.kind === 'event' ? [`${a.type} ${a.reason}: ${a.message}`] : []));
const cond = (s: ObservabilityServiceStatus) => s.conditions?.find((c) => c.type === 'BackupVerified');

describe('backup verification: the planner', () => {
  it('a due time: the latest complete backup is recorded first, then its Job runs backup-verify', () => {
    const o = object({ ...steady, backupVerification: dueVerification });
    const first = plan({ object: o, world: world(o) });
    expect(first.status.backupVerification?.pending).toEqual({ id: 'b2', since: NOW.toISOString() });
    expect(created(first.actions)).toEqual([]);
    const second = plan({ object: { ...o, status: first.status }, world: world(o) });
    const [job] = created(second.actions);
    expect(job?.spec?.template.spec?.containers[0]?.args).toEqual(['backup-verify', '--id', 'b2']);
    expect(job?.spec?.template.spec?.containers[0]?.terminationMessagePath).toBe('/dev/termination-log');
    expect(job?.metadata?.annotations?.['observatory.dev/purpose']).toBe('backup-verify');
    // The bucket's keys come from Secrets, never inline.
    const env = job?.spec?.template.spec?.containers[0]?.env ?? [];
    expect(
      env.find((e) => e.name === 'SERVICE_S3_BACKUP_SECRET_ACCESS_KEY')?.valueFrom?.secretKeyRef,
    ).toBeDefined();
    expect(cond(second.status)).toMatchObject({ status: 'Unknown', reason: 'VerificationRunning' });
    expect(second.status.phase).toBe('Ready');
  });

  it.each([
    [
      'Verified',
      VERIFIED,
      'True',
      'Verified',
      'Normal BackupVerified: backup b2 restored into scratch databases: 31 tables verified',
    ],
    [
      'Differs',
      DIFFERS,
      'False',
      'VerificationFailed',
      'Warning BackupVerificationFailed: backup b2 failed its verification: analytics table traces: 12 rows restored, recorded 40 (and 2 more differences)',
    ],
  ] as const)(
    'a verdict (%s) goes to status, BackupVerified and one event',
    (_, summary, status, reason, event) => {
      const pendingStatus = {
        ...steady,
        backupVerification: {
          ...dueVerification,
          lastScheduleTime: '2026-03-08T04:00:00.000Z',
          pending: { id: 'b2', since: '2026-03-08T04:01:00.000Z' },
        },
      };
      const o = object(pendingStatus);
      const first = plan({ object: o, world: world(o) });
      const name = created(first.actions)[0]!.metadata!.name!;
      const done: ObservedJob = {
        name,
        purpose: 'backup-verify',
        outcome: 'succeeded',
        terminationMessage: JSON.stringify(summary),
      };
      const p = plan({ object: o, world: world(o, [done]) });
      expect(p.status.backupVerification?.pending).toBeUndefined();
      expect(p.status.backupVerification?.last).toMatchObject({
        id: 'b2',
        result: summary.result,
        tables: 31,
      });
      expect(cond(p.status)).toMatchObject({ status, reason });
      expect(events(p.actions).filter((e) => e.includes('Verif'))).toEqual([event]);
      // Read again: no second event.
      const again = plan({ object: { ...o, status: p.status }, world: world(o, [done]) });
      expect(events(again.actions).filter((e) => e.includes('Verif'))).toEqual([]);
    },
  );

  it('a failed Job is a failed verification, named, without a secret', () => {
    const o = object({
      ...steady,
      backupVerification: { ...dueVerification, pending: { id: 'b2', since: '2026-03-08T04:01:00.000Z' } },
    });
    const name = created(plan({ object: o, world: world(o) }).actions)[0]!.metadata!.name!;
    const p = plan({
      object: o,
      world: world(o, [
        {
          name,
          purpose: 'backup-verify',
          outcome: 'failed',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
        },
      ]),
    });
    expect(p.status.backupVerification?.last).toMatchObject({ id: 'b2', result: 'Failed' });
    expect(cond(p.status)?.message).toBe(
      `backup b2 failed its verification at ${NOW.toISOString()}: Job ${name}: BackoffLimitExceeded: Job has reached the specified backoff limit`,
    );
  });

  it('waits for a running prune, and retention protects the backup under verification', () => {
    const prune: ObservedJob = { name: 'obs-backup-prune-1', purpose: 'backup-prune', outcome: 'running' };
    const o = object({ ...steady, backupVerification: dueVerification });
    const p = plan({ object: o, world: world(o, [prune]) });
    expect(p.status.backupVerification?.pending).toBeUndefined();
    expect(cond(p.status)).toMatchObject({ reason: 'VerificationWaiting' });
    expect(cond(p.status)?.message).toContain('Job obs-backup-prune-1 must finish first');
    // Verifying b1 while a scheduled backup completes: the prune after it keeps b1 (keepLast 1).
    const verifying = object({
      ...steady,
      backupSchedule: { since: SINCE, lastScheduleTime: '2026-03-08T03:00:00.000Z', prune: { after: 'b2' } },
      backupVerification: { ...dueVerification, pending: { id: 'b1', since: '2026-03-08T04:01:00.000Z' } },
    });
    const job = created(plan({ object: verifying, world: world(verifying) }).actions).find(
      (j) => j.metadata?.annotations?.['observatory.dev/purpose'] === 'backup-prune',
    );
    expect(job?.spec?.template.spec?.containers[0]?.args).toContain('b1');
  });

  it('a restore requested while a verification is recorded waits for it', () => {
    const o = object(
      {
        ...steady,
        backupVerification: { ...dueVerification, pending: { id: 'b2', since: '2026-03-08T04:01:00.000Z' } },
      },
      { 'observatory.dev/restore-requested': 'b1' },
    );
    const p = plan({ object: o, world: world(o) });
    expect(p.status.restore).toBeUndefined();
    expect(p.status.conditions?.find((c) => c.type === 'Restored')?.message).toContain(
      'the verification of backup b2 must finish first',
    );
  });

  it('validation names a verify block that sets nothing and a schedule that never fires', () => {
    const problems = validate({ spec: { ...spec, backup: { ...BACKUP_SPEC, verify: {} } } }).map(
      (p) => p.reason,
    );
    expect(problems).toContain('BackupVerifyEmpty');
    const never = validate({
      spec: { ...spec, backup: { ...BACKUP_SPEC, verify: { schedule: '0 0 31 2 *' } } },
    });
    expect(never.map((p) => `${p.reason} ${p.field}`)).toContain(
      'InvalidBackupSchedule spec.backup.verify.schedule',
    );
  });
});
