import { describe, expect, it } from 'vitest';
import { V4_DEFAULTS } from '../../server/contract/write-modes.ts';
import {
  dueWindows,
  renderRows,
  sourceRefusal,
  windowKey,
  windowStart,
} from '../../server/features/exports/rules.ts';

const at = (iso: string) => Date.parse(iso);

describe('export windows', () => {
  it.each([
    ['hourly', '2026-11-23T15:42:10.5Z', '2026-11-23T15:00:00Z'],
    ['daily', '2026-11-23T15:42:10Z', '2026-11-23T00:00:00Z'],
    // 2026-11-23 is a Monday, and weekly windows start on Mondays.
    ['weekly', '2026-11-23T15:42:10Z', '2026-11-23T00:00:00Z'],
    ['weekly', '2026-11-22T23:59:59Z', '2026-11-16T00:00:00Z'],
  ] as const)('a %s window holding %s starts at %s', (frequency, time, start) => {
    expect(windowStart(frequency, at(time))).toBe(at(start));
  });

  it('are the closed ones from the checkpoint on, oldest first, bounded', () => {
    const from = at('2026-11-23T10:00:00Z');
    const hour = 3_600_000;
    expect(dueWindows('hourly', from, at('2026-11-23T12:30:00Z'), 10)).toEqual([
      { start: from, end: from + hour },
      { start: from + hour, end: from + 2 * hour },
    ]);
    expect(dueWindows('hourly', from, at('2026-11-23T12:30:00Z'), 1)).toHaveLength(1);
    expect(dueWindows('daily', from, at('2026-11-23T12:30:00Z'), 10)).toEqual([]);
  });

  it('each have one key, fixed by the export and the window', () => {
    const e = {
      storagePrefix: 'exports/',
      projectId: 'p1',
      prefix: 'team/',
      id: 'e1',
      source: 'SCORES',
      format: 'CSV',
    } as const;
    const w = { start: at('2026-11-23T10:00:00Z'), end: at('2026-11-23T11:00:00Z') };
    expect(windowKey(e, w)).toBe('exports/p1/team/e1/scores/20261123T100000Z_20261123T110000Z.csv');
    expect(windowKey({ ...e, format: 'JSONL', source: 'ENRICHED_OBSERVATIONS' }, w)).toBe(
      'exports/p1/team/e1/enriched_observations/20261123T100000Z_20261123T110000Z.jsonl',
    );
    expect(windowKey({ ...e, format: 'PARQUET' }, w)).toBe(
      'exports/p1/team/e1/scores/20261123T100000Z_20261123T110000Z.parquet',
    );
  });
});

describe('export files', () => {
  const rows = [
    { id: 'a', value: 1, comment: 'plain', metadata: null },
    { id: 'b', value: 2.5, comment: 'has "quotes", a comma\nand a newline', metadata: { k: 'v' } },
  ];
  it('JSONL: one object per line', () => {
    expect(
      renderRows('JSONL', rows)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ).toEqual(rows);
  });
  it('CSV: a header and RFC 4180 quoting', () => {
    expect(renderRows('CSV', rows)).toBe(
      'id,value,comment,metadata\r\na,1,plain,\r\nb,2.5,"has ""quotes"", a comma\nand a newline","{""k"":""v""}"\r\n',
    );
    expect(renderRows('CSV', [])).toBe('');
  });
});

describe('which deployments produce which source', () => {
  const settings = (writeMode: 'legacy' | 'dual' | 'events_only', allowPreviewOptIn = true) => ({
    ...V4_DEFAULTS,
    release: '4' as const,
    writeMode,
    allowPreviewOptIn,
  });
  it.each([
    ['LEGACY_TRACES_OBSERVATIONS', settings('legacy'), true],
    ['LEGACY_TRACES_OBSERVATIONS', settings('dual'), true],
    ['LEGACY_TRACES_OBSERVATIONS', settings('events_only'), false],
    ['ENRICHED_OBSERVATIONS', settings('legacy'), false],
    ['ENRICHED_OBSERVATIONS', settings('dual'), true],
    ['ENRICHED_OBSERVATIONS', settings('dual', false), false],
    ['ENRICHED_OBSERVATIONS', settings('events_only'), true],
    ['SCORES', settings('legacy'), true],
    ['SCORES', settings('events_only'), true],
  ] as const)('%s in %o: %s', (source, s, served) => {
    expect(sourceRefusal(source, s) === undefined).toBe(served);
  });
});
