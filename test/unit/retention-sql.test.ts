import { describe, expect, it } from 'vitest';
import {
  expiredTracelessScoresQuery,
  expiredTracesQuery,
} from '../../server/features/deletion/retention-sql.ts';

const CUTOFF = new Date('2026-10-01T12:00:00.123Z');

describe('retention reads', () => {
  it.each([
    { release: '3' as const, tables: ['traces', 'observations'] },
    { release: '4' as const, tables: ['traces', 'observations', 'events_core'] },
  ])('release $release: a trace expires when nothing of it in $tables is newer', ({ release, tables }) => {
    const s = expiredTracesQuery(release, "p'1", CUTOFF, 1000);
    expect([...s.query.matchAll(/FROM (\w+) WHERE/g)].map((m) => m[1])).toEqual(tables);
    expect(s.query).toContain('HAVING max(t) < {cutoff:DateTime64(6)}');
    expect(s.query).not.toContain("p'1");
    expect(s.params).toEqual({ project_id: "p'1", cutoff: '2026-10-01 12:00:00.123', limit: 1000 });
  });

  it('scores without a trace expire by their own time, bounded', () => {
    const s = expiredTracelessScoresQuery('p1', CUTOFF, 10);
    expect(s.query).toMatch(/trace_id IS NULL OR trace_id = ''/);
    expect(s.query).toContain('LIMIT {limit:UInt32}');
    expect(s.params).toEqual({ project_id: 'p1', cutoff: '2026-10-01 12:00:00.123', limit: 10 });
  });
});
