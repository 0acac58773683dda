import { describe, expect, it } from 'vitest';
import { DURATION_PATTERN, formatDuration, parseDuration } from '../../server/contract/duration.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('the duration grammar', () => {
  it.each([
    ['90s', 90 * S],
    ['15m', 15 * M],
    ['24h', 24 * H],
    ['7d', 7 * D],
    ['1h30m', H + 30 * M],
    ['1d12h', D + 12 * H],
    ['2h15m30s', 2 * H + 15 * M + 30 * S],
    ['0s', 0],
    ['30m30m', 60 * M],
    ['999999s', 999_999 * S],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    '',
    '15',
    'm',
    '1.5h',
    '1h 30m',
    ' 1h',
    '1h ',
    '-5m',
    '1w',
    '1ms',
    '15M',
    '1000000s',
    'PT1H',
    '1h30',
  ])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('accepts exactly what the pattern (the CRD validation) accepts', () => {
    const pattern = new RegExp(DURATION_PATTERN);
    for (const text of ['90s', '1h30m', '1.5h', '1h 30m', '', '7d', '1w', '1000000s', '30m30m'])
      expect(parseDuration(text) !== undefined).toBe(pattern.test(text));
  });

  it.each([
    [0, '0s'],
    [999, '1s'],
    [45 * M, '45m'],
    [H + 30 * M, '1h30m'],
    [2 * D + 3 * H + 4 * M, '2d3h'],
  ])('formats %d ms as %s, which parses back within its precision', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBeDefined();
  });
});
