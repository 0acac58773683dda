/** Maintenance windows (operator/api/windows.ts): is `now` inside one, and when does the next open. */
import { describe, expect, it } from 'vitest';
import { type MaintenanceWindow, windowAt, windowProblem } from '../../operator/api/windows.ts';
import { validate } from '../../operator/validation.ts';

const SAT_2AM_4H = { cron: '0 2 * * 6', duration: '4h' };
const NIGHTLY_1H = { cron: '30 23 * * *', duration: '1h' };
const at = (iso: string) => new Date(iso);

describe('windowAt', () => {
  // 2026-03-07 is a Saturday.
  const table: [string, MaintenanceWindow[] | undefined, string, string][] = [
    ['no windows: always open', undefined, '2026-03-04T12:00:00Z', 'open'],
    ['an empty list: always open', [], '2026-03-04T12:00:00Z', 'open'],
    ['before the Saturday window', [SAT_2AM_4H], '2026-03-07T01:59:59Z', 'opens 2026-03-07T02:00:00.000Z'],
    ['at its first second', [SAT_2AM_4H], '2026-03-07T02:00:00Z', 'closes 2026-03-07T06:00:00.000Z'],
    ['inside it', [SAT_2AM_4H], '2026-03-07T05:59:59Z', 'closes 2026-03-07T06:00:00.000Z'],
    ['at its end (exclusive)', [SAT_2AM_4H], '2026-03-07T06:00:00Z', 'opens 2026-03-14T02:00:00.000Z'],
    ['midweek', [SAT_2AM_4H], '2026-03-04T12:00:00Z', 'opens 2026-03-07T02:00:00.000Z'],
    ['across midnight, before', [NIGHTLY_1H], '2026-03-04T23:29:00Z', 'opens 2026-03-04T23:30:00.000Z'],
    ['across midnight, after it', [NIGHTLY_1H], '2026-03-05T00:15:00Z', 'closes 2026-03-05T00:30:00.000Z'],
    [
      'the earliest of two next openings',
      [SAT_2AM_4H, NIGHTLY_1H],
      '2026-03-04T12:00:00Z',
      'opens 2026-03-04T23:30:00.000Z',
    ],
    [
      'inside either of two',
      [SAT_2AM_4H, NIGHTLY_1H],
      '2026-03-07T03:00:00Z',
      'closes 2026-03-07T06:00:00.000Z',
    ],
    [
      'overlapping windows: the later close',
      [NIGHTLY_1H, { cron: '0 0 * * *', duration: '2h' }],
      '2026-03-05T00:10:00Z',
      'closes 2026-03-05T02:00:00.000Z',
    ],
    [
      'longer than its period: always open',
      [{ cron: '0 * * * *', duration: '2h' }],
      '2026-03-04T12:34:00Z',
      'closes 2026-03-04T14:00:00.000Z',
    ],
    [
      'with seconds',
      [{ cron: '30 0 2 * * *', duration: '90s' }],
      '2026-03-04T02:01:59Z',
      'closes 2026-03-04T02:02:00.000Z',
    ],
    [
      'an unusable window is ignored',
      [{ cron: '0 0 31 2 *', duration: '1h' }],
      '2026-03-04T12:00:00Z',
      'open',
    ],
  ];
  it.each(table)('%s', (_, windows, now, want) => {
    const w = windowAt(windows, at(now));
    const got = !w.open
      ? `opens ${w.opensAt.toISOString()}`
      : w.closesAt
        ? `closes ${w.closesAt.toISOString()}`
        : 'open';
    expect(got).toBe(want);
  });
});

describe('windowProblem and the reconciler validation', () => {
  it.each([
    [SAT_2AM_4H, undefined],
    [{ cron: '*/15 1-5 * * 1-5', duration: '1h30m' }, undefined],
    [{ cron: '61 * * * *', duration: '1h' }, 'cron'],
    [{ cron: 'bogus x y z w', duration: '1h' }, 'cron'],
    [{ cron: '0 0 31 2 *', duration: '1h' }, 'cron'],
    [{ cron: '0 2 * * 6', duration: '0s' }, 'duration'],
    [{ cron: '0 2 * * 6', duration: '8d' }, 'duration'],
    [{ cron: '0 2 * * 6', duration: '4 hours' }, 'duration'],
  ])('%o -> %s', (w, field) => {
    expect(windowProblem(w)?.field).toBe(field);
  });

  it('names the window and field that is wrong', () => {
    const spec = {
      release: '4' as const,
      image: 'x',
      writeMode: 'Dual' as const,
      datastores: {
        postgres: { urlSecretRef: { name: 's', key: 'k' } },
        clickhouse: { urlSecretRef: { name: 's', key: 'k' } },
        redis: { urlSecretRef: { name: 's', key: 'k' } },
      },
      maintenanceWindows: [SAT_2AM_4H, { cron: '0 25 * * *', duration: '1h' }],
    };
    expect(validate({ spec }).map((v) => `${v.reason}@${v.field}`)).toEqual([
      'InvalidMaintenanceWindow@spec.maintenanceWindows[1].cron',
    ]);
  });
});
