/** `kubectl observatory backup now|list` and `restore --id`: parsing and the list's view. */
import { describe, expect, it } from 'vitest';
import type { ObservabilityService } from '../../operator/api/v1alpha1.ts';
import { parseArgs, UsageError } from '../../operator/kubectl/args.ts';
import { backupListView, renderBackupList } from '../../operator/kubectl/backup-list.ts';
import { BACKUP_SPEC, base } from './operator-walks.ts';

const o: ObservabilityService = {
  apiVersion: 'observatory.dev/v1alpha1',
  kind: 'ObservabilityService',
  metadata: { name: 'obs', namespace: 'ns', uid: 'u', generation: 2 },
  spec: { ...base, backup: { ...BACKUP_SPEC, schedule: '0 3 * * *', retention: { keepLast: 7 } } },
  status: {
    backups: [
      {
        id: 'scheduled-20260302t030000z',
        trigger: 'Scheduled',
        result: 'Complete',
        job: 'obs-backup-1',
        objects: 13,
        bytes: 6144,
        finishedAt: '2026-03-02T03:04:00.000Z',
        release: '4',
        writeMode: 'Dual',
      },
      {
        id: 'manual-20260301-120000',
        trigger: 'Requested',
        result: 'Failed',
        job: 'obs-backup-0',
        message: 'killed',
      },
    ],
    backupSchedule: {
      since: '2026-03-01T00:00:00.000Z',
      nextScheduleTime: '2026-03-03T03:00:00.000Z',
      lastSuccessful: { id: 'scheduled-20260302t030000z', finishedAt: '2026-03-02T03:04:00.000Z' },
      kept: 5,
    },
  },
};

describe('kubectl observatory backup and restore', () => {
  it.each([
    [['backup'], { kind: 'backup', action: 'now', output: 'text' }],
    [['backup', 'obs'], { kind: 'backup', action: 'now', name: 'obs', output: 'text' }],
    [['backup', 'now', 'obs'], { kind: 'backup', action: 'now', name: 'obs', output: 'text' }],
    [['backup', 'list', '-o', 'json'], { kind: 'backup', action: 'list', output: 'json' }],
    [['restore', 'b-1', 'obs'], { kind: 'restore', backupId: 'b-1', name: 'obs' }],
    [['restore', '--id', 'b-1', 'obs'], { kind: 'restore', backupId: 'b-1', name: 'obs' }],
    [['restore', '--id=b-1'], { kind: 'restore', backupId: 'b-1' }],
  ])('parses %j', (argv, command) => {
    expect(parseArgs(argv).command).toEqual(command);
  });

  it.each([
    [['backup', 'now', '-o', 'json'], /does not take --output/],
    [['restore', '--id', 'b-1', 'obs', 'extra'], /unexpected "extra"/],
    [['status', '--id', 'x'], /status does not take --id/],
    [['restore', '--id', 'Bad_ID'], /BACKUP_ID must be a backup id/],
  ])('refuses %j', (argv, why) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(why);
  });

  it('list: the schedule line and one row per backup, newest first; -o json is status as it is', () => {
    expect(renderBackupList(o)).toBe(
      [
        'schedule "0 3 * * *" (UTC): next 2026-03-03T03:00:00.000Z; latest successful scheduled-20260302t030000z at 2026-03-02T03:04:00.000Z; 5 kept by retention',
        'ID                          TRIGGER    RESULT    FINISHED                  RELEASE/MODE  OBJECTS  BYTES',
        'scheduled-20260302t030000z  Scheduled  Complete  2026-03-02T03:04:00.000Z  4/Dual        13       6144',
        'manual-20260301-120000      Requested  Failed    -                         -             -        -',
        '',
      ].join('\n'),
    );
    expect(backupListView(o)).toEqual({
      backups: o.status!.backups,
      schedule: o.status!.backupSchedule,
      verification: null,
    });
  });

  it('list: with spec.backup.verify, the latest verdict under the schedule line', () => {
    const verified = {
      ...o,
      spec: { ...o.spec, backup: { ...o.spec.backup!, verify: { afterEveryBackups: 2 } } },
      status: {
        ...o.status,
        backupVerification: {
          since: '2026-03-01T00:00:00.000Z',
          last: {
            id: 'scheduled-20260302t030000z',
            result: 'Differs' as const,
            finishedAt: '2026-03-02T03:20:00.000Z',
            tables: 31,
            message: 'analytics table traces: 12 rows restored, recorded 40',
          },
        },
      },
    };
    expect(renderBackupList(verified).split('\n')[1]).toBe(
      'latest verification: backup scheduled-20260302t030000z Differs at 2026-03-02T03:20:00.000Z, 31 tables: analytics table traces: 12 rows restored, recorded 40',
    );
    expect(renderBackupList({ ...verified, status: { ...o.status } }).split('\n')[1]).toBe(
      'no verification finished yet (spec.backup.verify)',
    );
  });
});
