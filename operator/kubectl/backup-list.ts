/**
 * `kubectl observatory backup list`: status.backups, the schedule and the latest verification, as
 * a table or JSON. Pure.
 */
import type { ObservabilityService } from '../api/v1alpha1.ts';

export function backupListView(o: ObservabilityService) {
  return {
    backups: o.status?.backups ?? [],
    schedule: o.status?.backupSchedule ?? null,
    verification: o.status?.backupVerification ?? null,
  };
}

const columns = (cells: string[][]): string =>
  cells
    .map((row) =>
      row
        .map((c, i) => (i === row.length - 1 ? c : c.padEnd(Math.max(...cells.map((r) => r[i]!.length)) + 2)))
        .join(''),
    )
    .join('\n');

export function renderBackupList(o: ObservabilityService): string {
  const { backups, schedule, verification } = backupListView(o);
  const lines: string[] = [];
  const cron = o.spec.backup?.schedule;
  if (cron && schedule)
    lines.push(
      `schedule "${cron}" (UTC): next ${schedule.nextScheduleTime ?? 'unknown'}; latest successful ${schedule.lastSuccessful ? `${schedule.lastSuccessful.id} at ${schedule.lastSuccessful.finishedAt}` : 'none yet'}; ${schedule.kept !== undefined ? `${schedule.kept} kept by retention` : 'retention not run yet'}`,
    );
  else
    lines.push(o.spec.backup ? 'no schedule (spec.backup.schedule)' : 'no spec.backup: no backups are taken');
  const last = verification?.last;
  if (o.spec.backup?.verify)
    lines.push(
      last
        ? `latest verification: backup ${last.id} ${last.result} at ${last.finishedAt}${last.tables !== undefined ? `, ${last.tables} tables` : ''}${last.message ? `: ${last.message}` : ''}`
        : 'no verification finished yet (spec.backup.verify)',
    );
  if (backups.length === 0) return `${lines.join('\n')}\nno backup recorded\n`;
  const rows = backups.map((b) => [
    b.id,
    b.trigger,
    b.result,
    b.finishedAt ?? b.startedAt ?? '-',
    b.release ? `${b.release}/${b.writeMode ?? '-'}` : '-',
    String(b.objects ?? '-'),
    String(b.bytes ?? '-'),
  ]);
  lines.push(columns([['ID', 'TRIGGER', 'RESULT', 'FINISHED', 'RELEASE/MODE', 'OBJECTS', 'BYTES'], ...rows]));
  return `${lines.join('\n')}\n`;
}
