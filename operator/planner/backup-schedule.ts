/**
 * spec.backup.schedule, pure: when a scheduled backup is due, the id of each scheduled time, when
 * the next one comes (held to the next maintenance window when one applies), and the age past which
 * the latest successful backup is overdue. `now` is an input, never the clock.
 */
import { CronExpressionParser } from 'cron-parser';
import { type MaintenanceWindow, windowAt } from '../api/windows.ts';

const HOUR_SECONDS = 3600;
/** Scheduled times sampled for the longest gap (a cron's gaps repeat within its fields' periods). */
const GAP_SAMPLES = 64;

const parse = (cron: string, currentDate: Date) =>
  CronExpressionParser.parse(cron, { tz: 'UTC', currentDate });

/** The latest scheduled time at or before `now`, or undefined when the expression does not fire. */
export function latestDue(cron: string, now: Date): Date | undefined {
  try {
    // prev() is strictly before its reference: one millisecond later includes a time at `now`.
    return parse(cron, new Date(now.getTime() + 1))
      .prev()
      .toDate();
  } catch {
    return undefined;
  }
}

/** The first scheduled time after `now`, or when the next window opens if it falls outside one. */
export function nextDue(cron: string, windows: readonly MaintenanceWindow[] | undefined, now: Date): Date {
  const at = parse(cron, now).next().toDate();
  const w = windowAt(windows, at);
  return w.open ? at : w.opensAt;
}

/** One id per scheduled time, so a restarted operator finds the Job of that time: scheduled-20260301t030000z. */
export function scheduledBackupId(at: Date): string {
  return `scheduled-${at.toISOString().slice(0, 19).replace(/[-:]/g, '').toLowerCase()}z`;
}

function longestGapSeconds(cron: string, from: Date): number {
  const it = parse(cron, from);
  let prev = it.next().toDate().getTime();
  let gap = 0;
  for (let i = 0; i < GAP_SAMPLES; i++) {
    const t = it.next().toDate().getTime();
    gap = Math.max(gap, (t - prev) / 1000);
    prev = t;
  }
  return gap;
}

/**
 * The age past which the latest successful backup is overdue: a whole scheduled time was missed
 * (twice the schedule's longest gap), plus the longest wait for a window to open, plus an hour
 * for the backup itself.
 */
export function allowedAgeSeconds(
  cron: string,
  windows: readonly MaintenanceWindow[] | undefined,
  from: Date,
): number {
  const windowWait = Math.max(0, ...(windows ?? []).map((w) => longestGapSeconds(w.cron, from)));
  return Math.round(2 * longestGapSeconds(cron, from) + windowWait + HOUR_SECONDS);
}
