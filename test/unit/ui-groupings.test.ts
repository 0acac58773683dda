import { describe, expect, it } from 'vitest';
import { buildGroupingList, groupingCursor, mapGroupingRow } from '../../server/features/reads/groupings.ts';
import { buildLegacyGroupingList } from '../../server/features/reads/legacy-groupings.ts';
import { encodeCursor } from '../../server/features/reads/sql.ts';

const KEYS = {
  v4: { session: ['session_id', 'user_id'], user: ['user_id', 'session_id'] },
  v3: {
    session: ["ifNull(session_id, '')", "ifNull(user_id, '')"],
    user: ["ifNull(user_id, '')", "ifNull(session_id, '')"],
  },
} as const;

/** Both read paths of the lists: one request, one cursor, one row shape; their own tables. */
describe.each([
  ['buildGroupingList (v4, events_core)', buildGroupingList, KEYS.v4, 'start_time'],
  ['buildLegacyGroupingList (v3, legacy traces)', buildLegacyGroupingList, KEYS.v3, 'timestamp'],
] as const)('%s', (_, build, keys, time) => {
  it.each(['session', 'user'] as const)(
    'groups %s rows by their key and collects the other ids',
    (grouping) => {
      const [key, other] = keys[grouping];
      const q = build({ projectId: 'p1', grouping, limit: 10 });
      expect(q.sql).toContain(`${key} AS key, min(${time}) AS first_seen, max(${time}) AS last_seen`);
      expect(q.sql).toContain(`${key} != ''`);
      expect(q.sql).toContain(`groupUniqArrayIf(${other}, ${other} != '')`);
      expect(q.sql).not.toContain('HAVING');
      expect(q.params).toEqual({ p0: 'p1', p1: 11 });
    },
  );

  it.each([
    [{ fromStartTime: '2026-01-01T00:00:00Z' }, [`${time} >=`], { p1: '2026-01-01 00:00:00.000000' }],
    [{ toStartTime: '2026-01-02T00:00:00+01:00' }, [`${time} <`], { p1: '2026-01-01 23:00:00.000000' }],
    [
      { cursor: encodeCursor({ t: '2026-01-01 00:00:01.000000', k: 's-9' }) },
      ['HAVING (last_seen, key) <'],
      { p1: '2026-01-01 00:00:01.000000', p2: 's-9' },
    ],
  ])('binds %o, never splices it', (extra, fragments, params) => {
    const q = build({ projectId: 'p1', grouping: 'session', limit: 5, ...extra });
    for (const f of fragments) expect(q.sql).toContain(f);
    expect(q.params).toMatchObject(params);
    for (const v of Object.values(params)) expect(q.sql).not.toContain(v);
  });

  it.each(['bm9wZQ', encodeCursor({ t: 1, k: 'x' }), encodeCursor({ t: 'x' })])(
    'refuses the cursor %s, naming the field',
    (cursor) => {
      expect(() => build({ projectId: 'p', grouping: 'user', limit: 5, cursor })).toThrow(/^cursor:/);
    },
  );
});

describe('buildLegacyGroupingList', () => {
  it('reads only the legacy tables, and joins observations to the page’s traces only', () => {
    const q = buildLegacyGroupingList({ projectId: 'p1', grouping: 'session', limit: 10 });
    const tables = [...q.sql.matchAll(/(?:FROM|JOIN) (\w+)/g)].map((m) => m[1]);
    expect(new Set(tables)).toEqual(new Set(['traces', 'page_groups', 'observations', 'page_traces']));
    expect(q.sql).not.toMatch(/events_|_staging/);
    expect(q.sql).toContain('INNER JOIN page_traces AS t ON t.id = o.trace_id');
    expect(q.sql).toContain('AND session_id IN (SELECT key FROM page_groups)');
    expect(q.sql).toMatch(/ORDER BY last_seen DESC, key DESC\s*$/);
  });
});

describe('mapGroupingRow and groupingCursor', () => {
  const row = {
    key: 's-1',
    first_seen: '2026-01-01 00:00:00.123456',
    last_seen: '2026-01-01 00:00:05.5',
    trace_count: '2',
    observation_count: 4,
    related: ['u-1', 'u-2'],
    input_tokens: 3,
    output_tokens: 4,
    total_tokens: 7,
    total_cost: 0.5,
  };

  it.each([
    ['session', 'userIds'],
    ['user', 'sessionIds'],
  ] as const)('maps a %s row, naming the related ids %s', (grouping, relatedKey) => {
    expect(mapGroupingRow(grouping, row)).toEqual({
      id: 's-1',
      firstSeen: '2026-01-01T00:00:00.123Z',
      lastSeen: '2026-01-01T00:00:05.500Z',
      traceCount: 2,
      observationCount: 4,
      [relatedKey]: ['u-1', 'u-2'],
      inputTokens: 3,
      outputTokens: 4,
      totalTokens: 7,
      totalCost: 0.5,
    });
  });

  it.each([
    [1, 1, undefined],
    [2, 1, encodeCursor({ t: '2026-01-01 00:00:05.5', k: 's-1' })],
  ])('with %i rows fetched for a page of %i, the cursor is %s', (n, limit, want) => {
    expect(
      groupingCursor(
        Array.from({ length: n }, () => row),
        limit,
      ),
    ).toBe(want);
  });
});
