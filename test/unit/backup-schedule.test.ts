/** spec.backup.schedule's pure rules (operator/planner/backup-schedule.ts) by table. */
import { describe, expect, it } from 'vitest';
import {
  allowedAgeSeconds,
  latestDue,
  nextDue,
  scheduledBackupId,
} from '../../operator/planner/backup-schedule.ts';

const at = (iso: string) => new Date(iso);

describe('backup schedule', () => {
  it.each([
    ['0 3 * * *', '2026-03-01T12:00:00Z', '2026-03-01T03:00:00.000Z'],
    ['0 3 * * *', '2026-03-01T03:00:00Z', '2026-03-01T03:00:00.000Z'],
    ['0 3 * * *', '2026-03-01T02:59:59Z', '2026-02-28T03:00:00.000Z'],
    ['*/15 * * * *', '2026-03-01T12:14:00Z', '2026-03-01T12:00:00.000Z'],
  ])('latestDue(%s, %s) = %s', (cron, now, want) => {
    expect(latestDue(cron, at(now))?.toISOString()).toBe(want);
  });

  it('latestDue is undefined for an expression that never fires', () => {
    expect(latestDue('0 0 31 2 *', at('2026-03-01T00:00:00Z'))).toBeUndefined();
  });

  it.each([
    ['no windows: the next time', undefined, '2026-03-02T03:00:00.000Z'],
    ['inside a window: the next time', [{ cron: '0 2 * * *', duration: '4h' }], '2026-03-02T03:00:00.000Z'],
    [
      'outside: the next window opening',
      [{ cron: '0 22 * * *', duration: '2h' }],
      '2026-03-02T22:00:00.000Z',
    ],
  ])('nextDue with %s', (_, windows, want) => {
    expect(nextDue('0 3 * * *', windows, at('2026-03-01T12:00:00Z')).toISOString()).toBe(want);
  });

  it('one id per scheduled time, a valid backup id', () => {
    expect(scheduledBackupId(at('2026-03-01T03:00:00Z'))).toBe('scheduled-20260301t030000z');
    expect(scheduledBackupId(at('2026-03-01T03:00:30Z'))).toBe('scheduled-20260301t030030z');
  });

  it.each([
    ['daily', '0 3 * * *', undefined, 2 * 86_400 + 3600],
    ['hourly', '0 * * * *', undefined, 2 * 3600 + 3600],
    ['weekdays only: the weekend gap counts', '0 3 * * 1-5', undefined, 2 * 3 * 86_400 + 3600],
    [
      'daily, held to weekly windows',
      '0 3 * * *',
      [{ cron: '0 2 * * 6', duration: '4h' }],
      2 * 86_400 + 7 * 86_400 + 3600,
    ],
  ])('allowed age, %s', (_, cron, windows, want) => {
    expect(allowedAgeSeconds(cron, windows, at('2026-03-01T12:00:00Z'))).toBe(want);
  });
});
