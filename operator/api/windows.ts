/**
 * Maintenance windows (`spec.maintenanceWindows`): each a cron expression for when a window opens
 * (UTC) and a duration for how long it stays open. Pure: `now` is an input, never the clock.
 */
import { CronExpressionParser } from 'cron-parser';
import { parseDuration } from '../../server/contract/duration.ts';

export interface MaintenanceWindow {
  cron: string;
  duration: string;
}

/** Longest window: a week (a longer one is no restriction worth writing down). */
export const MAX_WINDOW_MS = 7 * 86_400_000;

/** The latest start strictly before `before`, or undefined when there is none. */
function previousStart(cron: string, before: Date): Date | undefined {
  try {
    return CronExpressionParser.parse(cron, { tz: 'UTC', currentDate: before }).prev().toDate();
  } catch {
    return undefined;
  }
}

/** Why a cron expression (UTC) is unusable, or undefined when it fires. */
export function cronProblem(cron: string): string | undefined {
  try {
    // Parsing alone accepts expressions that never fire (31 February); asking for the next start does not.
    CronExpressionParser.parse(cron, { tz: 'UTC', currentDate: new Date(0) }).next();
    return undefined;
  } catch (err) {
    return `not a cron expression (${(err as Error).message})`;
  }
}

/** Why a window is unusable, or undefined when it parses. */
export function windowProblem(
  w: MaintenanceWindow,
): { field: 'cron' | 'duration'; message: string } | undefined {
  const cron = cronProblem(w.cron);
  if (cron) return { field: 'cron', message: cron };
  const ms = parseDuration(w.duration);
  if (ms === undefined || ms <= 0 || ms > MAX_WINDOW_MS)
    return { field: 'duration', message: 'must be a duration above 0s and at most 7d (e.g. 4h or 1h30m)' };
  return undefined;
}

export type WindowState =
  | { open: true /** Undefined when no window is configured (always open). */; closesAt?: Date }
  | { open: false; opensAt: Date };

/**
 * Whether `now` is inside a window: a window opened at the latest start at or before `now` and is
 * open until that start plus its duration. No windows: always open. Unusable windows are ignored
 * (validation refuses them first).
 */
export function windowAt(windows: readonly MaintenanceWindow[] | undefined, now: Date): WindowState {
  if (!windows || windows.length === 0) return { open: true };
  let closesAt: Date | undefined;
  let opensAt: Date | undefined;
  for (const w of windows) {
    if (windowProblem(w)) continue;
    const ms = parseDuration(w.duration)!;
    // prev() is strictly before its reference time: one millisecond later includes a start at `now`.
    const after = new Date(now.getTime() + 1);
    const start = previousStart(w.cron, after);
    if (start && start.getTime() + ms > now.getTime()) {
      const end = new Date(start.getTime() + ms);
      if (!closesAt || end > closesAt) closesAt = end;
      continue;
    }
    const next = CronExpressionParser.parse(w.cron, { tz: 'UTC', currentDate: now }).next().toDate();
    if (!opensAt || next < opensAt) opensAt = next;
  }
  if (closesAt) return { open: true, closesAt };
  return opensAt ? { open: false, opensAt } : { open: true };
}
