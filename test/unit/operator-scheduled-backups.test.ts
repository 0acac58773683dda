/** Table tests of scheduled backups and their retention, one world at a time through the planner. */
import { describe, expect, it } from 'vitest';
import type {
  BackupRecord,
  ObservabilityService,
  ObservabilityServiceStatus,
} from '../../operator/api/v1alpha1.ts';
import { plan } from '../../operator/planner/plan.ts';
import type { StepInput } from '../../operator/planner/step.ts';
import { protectedBackups } from '../../operator/planner/steps/scheduled-backup.ts';
import type { Action, ObservedJob, World } from '../../operator/planner/types.ts';
import { validate } from '../../operator/validation.ts';
import type { BackupPruneSummary, BackupSummary } from '../../server/contract/backup.ts';
import { dualSpec, objectsOn, quietWorld, SINCE, settledStatus } from '../fixtures/operator/planner-world.ts';
import { rolledOut } from '../fixtures/operator/rolled-out.ts';
import { BACKUP_SPEC } from './operator-walks.ts';

const NOW = new Date('2026-03-02T03:05:00Z');
const DUE = '2026-03-02T03:00:00.000Z';
const ID = 'scheduled-20260302t030000z';
const spec = dualSpec({
  backfill: { enabled: false },
  backup: { ...BACKUP_SPEC, schedule: '0 3 * * *', retention: { keepLast: 3 } },
});
const steady = settledStatus('Dual');
const scheduled = (extra: Partial<NonNullable<ObservabilityServiceStatus['backupSchedule']>> = {}) => ({
  since: SINCE,
  lastScheduleTime: '2026-03-01T03:00:00.000Z',
  ...extra,
});

const object = objectsOn(spec, 3);

const world = (o: ObservabilityService, patch: Partial<World> = {}): World =>
  quietWorld(NOW, { deployments: rolledOut(o, 'Dual'), ...patch });

const created = (actions: Action[]) => actions.flatMap((a) => (a.kind === 'createJob' ? [a.object] : []));
const cond = (s: ObservabilityServiceStatus, type: string) => s.conditions?.find((c) => c.type === type);
const summary: BackupSummary = {
  id: ID,
  startedAt: '2026-03-02T03:01:00.000Z',
  finishedAt: '2026-03-02T03:04:00.000Z',
  release: '4',
  writeMode: 'dual',
  schema: { relational: 38, analytics: 46 },
  parts: [
    { part: 'analytics', objects: 3, bytes: 300 },
    { part: 'relational', objects: 1, bytes: 100 },
  ],
};

/** Plans twice: the first reconcile records the scheduled backup, the second creates its Job. */
function jobOfDue(o: ObservabilityService) {
  const first = plan({ object: o, world: world(o) });
  const second = plan({ object: { ...o, status: first.status }, world: world(o) });
  return { first, second, job: created(second.actions)[0]! };
}

describe('scheduled backups: the planner', () => {
  it('first read: counts from now (nothing is taken for a time already passed), says when the next is', () => {
    const o = object({}, steady);
    const p = plan({ object: o, world: world(o) });
    expect(p.status.backupSchedule).toMatchObject({
      since: NOW.toISOString(),
      lastScheduleTime: DUE,
      nextScheduleTime: '2026-03-03T03:00:00.000Z',
      allowedAgeSeconds: 2 * 86_400 + 3600,
    });
    expect(created(p.actions)).toEqual([]);
    expect(cond(p.status, 'BackupScheduled')).toMatchObject({ status: 'True', reason: 'ScheduleActive' });
    expect(p.status.phase).toBe('Ready');
  });

  it('a due time: recorded first under its id, then its Job; Ready stays True meanwhile', () => {
    const o = object({}, { ...steady, backupSchedule: scheduled() });
    const { first, second, job } = jobOfDue(o);
    expect(first.status.backupSchedule?.pending).toEqual({ scheduledAt: DUE, id: ID });
    expect(created(first.actions)).toEqual([]);
    expect(job.spec?.template.spec?.containers[0]?.args).toEqual([
      'backup',
      '--id',
      ID,
      '--include',
      'analytics,relational',
    ]);
    expect(cond(second.status, 'BackupScheduled')).toMatchObject({ reason: 'ScheduledBackupRunning' });
    expect(cond(second.status, 'Ready')?.status).toBe('True');
    expect(second.status.blockedBy).toEqual([]);
  });

  it('complete: recorded as the latest success, then the retention Job (a restore that ended needs nothing)', () => {
    const restore = {
      request: 'cutover-abc',
      backupId: 'cutover-abc',
      phase: 'Complete' as const,
      since: SINCE,
      release: '4' as const,
      writeMode: 'Dual' as const,
    };
    const o0 = object({}, { ...steady, restore, backupSchedule: scheduled() });
    const { second, job } = jobOfDue(o0);
    const done: ObservedJob = {
      name: job.metadata!.name!,
      purpose: 'backup',
      outcome: 'succeeded',
      terminationMessage: JSON.stringify(summary),
    };
    const o = { ...o0, status: second.status };
    const p = plan({ object: o, world: world(o, { jobs: [done] }) });
    expect(p.status.backupSchedule).toMatchObject({
      lastScheduleTime: DUE,
      lastSuccessful: { id: ID, finishedAt: summary.finishedAt },
      prune: { after: ID },
    });
    expect(p.status.backupSchedule?.pending).toBeUndefined();
    expect(p.status.backups?.[0]).toMatchObject({ id: ID, trigger: 'Scheduled', result: 'Complete' });
    const prune = created(p.actions)[0]!;
    expect(prune.metadata?.annotations?.['observatory.dev/purpose']).toBe('backup-prune');
    expect(prune.spec?.template.spec?.containers[0]?.args).toEqual(['backup-prune', '--keep-last', '3']);
    const env = prune.spec?.template.spec?.containers[0]?.env?.map((e) => e.name) ?? [];
    expect(env).toContain('SERVICE_S3_BACKUP_BUCKET');
  });

  it('the retention result: kept count recorded, deleted backups leave status.backups and their ConfigMaps', () => {
    const old = (id: string): BackupRecord => ({
      id,
      trigger: 'Scheduled',
      result: 'Complete',
      job: `j-${id}`,
    });
    const status: ObservabilityServiceStatus = {
      ...steady,
      backups: [old(ID), old('scheduled-a'), old('scheduled-b')],
      backupSchedule: scheduled({ lastScheduleTime: DUE, prune: { after: ID } }),
    };
    const o = object({}, status);
    const first = plan({ object: o, world: world(o) });
    const job = created(first.actions)[0]!;
    const pruned: BackupPruneSummary = { kept: 3, deletedCount: 1, deleted: ['scheduled-b'], incomplete: 0 };
    const finished: ObservedJob = {
      name: job.metadata!.name!,
      purpose: 'backup-prune',
      outcome: 'succeeded',
      terminationMessage: JSON.stringify(pruned),
    };
    const p = plan({ object: o, world: world(o, { jobs: [finished] }) });
    expect(p.status.backups?.map((b) => b.id)).toEqual([ID, 'scheduled-a']);
    expect(p.actions).toContainEqual({ kind: 'deleteConfigMap', name: 'obs-backup-scheduled-b' });
    expect(p.status.backupSchedule).toMatchObject({
      kept: 3,
      prune: { after: ID, result: 'Succeeded', deleted: 1 },
    });
    expect(cond(p.status, 'BackupScheduled')?.message).toContain('3 kept');
  });

  it.each([
    [
      'a pass in progress',
      { target: { state: 'Dual' as const, since: SINCE, image: 'observatory:next', schemaStarted: true } },
      { image: 'observatory:next' },
      /the pass to Dual must finish first/,
    ],
    [
      'outside the maintenance windows',
      {},
      { maintenanceWindows: [{ cron: '0 22 * * *', duration: '2h' }] },
      /outside the maintenance windows/,
    ],
  ])('a due backup waits for %s', (_, extra, specExtra, why) => {
    const o = object(specExtra, { ...steady, ...extra, backupSchedule: scheduled() });
    const p = plan({ object: o, world: world(o) });
    expect(p.status.backupSchedule?.pending).toBeUndefined();
    expect(cond(p.status, 'BackupScheduled')).toMatchObject({ reason: 'ScheduledBackupWaiting' });
    expect(cond(p.status, 'BackupScheduled')?.message).toMatch(why);
  });

  it('a failed scheduled backup: condition False naming it and the next time; the schedule goes on', () => {
    const o0 = object({}, { ...steady, backupSchedule: scheduled() });
    const { second, job } = jobOfDue(o0);
    const failed: ObservedJob = {
      name: job.metadata!.name!,
      purpose: 'backup',
      outcome: 'failed',
      reason: 'BackoffLimitExceeded',
      message: 'Pod killed',
    };
    const o = { ...o0, status: second.status };
    const p = plan({ object: o, world: world(o, { jobs: [failed] }) });
    expect(cond(p.status, 'BackupScheduled')).toMatchObject({
      status: 'False',
      reason: 'ScheduledBackupFailed',
    });
    expect(cond(p.status, 'BackupScheduled')?.message).toContain('the next is at 2026-03-03T03:00:00.000Z');
    expect(p.status.backupSchedule).toMatchObject({ lastScheduleTime: DUE });
    expect(p.status.backupSchedule?.pending).toBeUndefined();
    expect(cond(p.status, 'Stalled')?.status).toBe('False');
    expect(p.actions).toContainEqual({
      kind: 'event',
      type: 'Warning',
      reason: 'BackupFailed',
      message: `backup ${ID} (Scheduled) failed: BackoffLimitExceeded: Pod killed`,
    });
  });

  it('hibernated: nothing scheduled is taken', () => {
    const o = object(
      { hibernate: true },
      {
        ...steady,
        backupSchedule: scheduled(),
        hibernation: { phase: 'Hibernated', since: SINCE, hibernatedAt: SINCE },
      },
    );
    const p = plan({ object: o, world: world(o, { deployments: {} }) });
    expect(p.status.backupSchedule?.pending).toBeUndefined();
    expect(created(p.actions)).toEqual([]);
  });

  it('the schedule removed: its status goes', () => {
    const o = object({ backup: BACKUP_SPEC }, { ...steady, backupSchedule: scheduled() });
    expect(plan({ object: o, world: world(o) }).status.backupSchedule).toBeUndefined();
  });

  it('validation refuses a schedule that never fires and a retention without a rule', () => {
    const v = validate({
      spec: { ...spec, backup: { ...BACKUP_SPEC, schedule: '0 0 31 2 *', retention: {} } },
    });
    expect(v.map((x) => [x.reason, x.field])).toEqual([
      ['InvalidBackupSchedule', 'spec.backup.schedule'],
      ['BackupRetentionEmpty', 'spec.backup.retention'],
    ]);
  });
});

describe('what a prune protects', () => {
  const restore = (phase: 'Restoring' | 'Complete' | 'Failed', request = 'r-1') => ({
    request,
    backupId: 'r-1',
    phase,
    since: SINCE,
    release: '4' as const,
    writeMode: 'Dual' as const,
  });
  const protect = (status: ObservabilityServiceStatus, annotation?: string) =>
    protectedBackups({
      object: object(
        {},
        status,
        annotation ? { 'observatory.dev/restore-requested': annotation } : undefined,
      ),
      status,
    } as StepInput);
  it.each([
    ['nothing in progress', steady, undefined, []],
    [
      'a pass taking its backup',
      { ...steady, target: { ...steady.target!, backupId: 'cutover-1' } },
      undefined,
      ['cutover-1'],
    ],
    ['a restore under way', { ...steady, restore: restore('Restoring') }, 'r-1', ['r-1']],
    ['a restore that completed', { ...steady, restore: restore('Complete') }, 'r-1', []],
    ['a restore that failed', { ...steady, restore: restore('Failed') }, 'r-1', []],
    [
      'a new request, not yet taken (its retry suffix dropped)',
      { ...steady, restore: restore('Complete') },
      'r-2.3',
      ['r-2'],
    ],
  ] as const)('%s', (_, status, annotation, expected) => {
    expect(protect(status as ObservabilityServiceStatus, annotation)).toEqual(expected);
  });
});
