/** How the observations table shows values, by tables. */
import { describe, expect, it } from 'vitest';
import {
  formatCost,
  formatLatency,
  formatScore,
  formatSeconds,
  formatTime,
  formatTokens,
  rangeBounds,
} from '../../server/app/ui/src/shared/format.ts';
import { routeOf } from '../../server/app/ui/src/shared/router.ts';

describe('table formatting', () => {
  it.each([
    [null, ''],
    [0, '0ms'],
    [0.0504, '50ms'],
    [0.9994, '999ms'],
    [1.5, '1.50s'],
    [59.994, '59.99s'],
    [185, '3m 05s'],
  ])('latency %s -> %s', (s, text) => expect(formatLatency(s)).toBe(text));

  it.each([
    ['0s', '0s'],
    ['1s', '1s'],
    ['90s', '1m30s'],
    ['3600s', '1h'],
    ['5400s', '1h30m'],
    ['90061s', '1d1h1m1s'],
    ['later', 'later'],
  ])('duration %s -> %s', (text, shown) => expect(formatSeconds(text)).toBe(shown));

  it.each([
    [null, ''],
    [0, '$0'],
    [0.03, '$0.03'],
    [12.345, '$12.35'],
    [0.000123, '$0.000123'],
    [0.0012, '$0.0012'],
  ])('cost %s -> %s', (usd, text) => expect(formatCost(usd)).toBe(text));

  it.each([
    [{}, ''],
    [{ input: 10, output: 5, total: 15 }, '10 → 5 (Σ 15)'],
    [{ input: 10, output: 5 }, '10 → 5 (Σ 15)'],
    [{ input: 3, input_cached: 2, output: 1 }, '5 → 1 (Σ 6)'],
  ])('tokens %j -> %s', (usage, text) => expect(formatTokens(usage)).toBe(text));

  it.each([
    ['2026-11-23T15:20:26.123Z', '2026-11-23 15:20:26.123'],
    ['2026-11-23T15:20:26Z', '2026-11-23 15:20:26'],
    [null, ''],
  ])('time %s -> %s', (iso, text) => expect(formatTime(iso)).toBe(text));

  it.each([
    [0.9, '0.90'],
    [3, '3'],
    [true, 'true'],
    ['polite', 'polite'],
  ])('score %s -> %s', (v, text) => expect(formatScore(v)).toBe(text));

  it('time ranges end now; all time has no bound', () => {
    const now = Date.parse('2026-11-23T12:00:00.000Z');
    expect(rangeBounds('1h', now)).toEqual({ fromStartTime: '2026-11-23T11:00:00.000Z' });
    expect(rangeBounds('7d', now)).toEqual({ fromStartTime: '2026-11-16T12:00:00.000Z' });
    expect(rangeBounds('all', now)).toEqual({});
  });

  it.each([
    ['/', { page: 'projects' }],
    ['/login', { page: 'login' }],
    ['/project/p%201/observations', { page: 'observations', projectId: 'p 1' }],
    ['/project/abc', { page: 'observations', projectId: 'abc' }],
    ['/project/p%201/sessions', { page: 'sessions', projectId: 'p 1' }],
    ['/project/abc/users/', { page: 'users', projectId: 'abc' }],
    ['/migration', { page: 'migration' }],
    ['/account', { page: 'account' }],
    ['/project/abc/datasets', { page: 'datasets', projectId: 'abc' }],
    ['/project/abc/models', { page: 'models', projectId: 'abc' }],
    ['/project/abc/datasets/d%2F1', { page: 'dataset', projectId: 'abc', datasetId: 'd/1' }],
    ['/project/abc/sessions/x', { page: 'notFound' }],
    ['/elsewhere', { page: 'notFound' }],
  ])('route %s', (path, route) => expect(routeOf(path)).toEqual(route));
});
