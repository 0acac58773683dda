/** The retention rule (server/features/backup/retention.ts) by table: which complete backups a prune deletes. */
import { describe, expect, it } from 'vitest';
import { applyRetention, type RetentionRule } from '../../server/features/backup/retention.ts';

const NOW = new Date('2026-03-10T00:00:00Z');
const DAY = 86_400_000;
const at = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();
/** Given oldest first on purpose: the rule sorts by finishedAt itself. */
const BACKUPS = [
  { id: 'e', finishedAt: at(10) },
  { id: 'd', finishedAt: at(3) },
  { id: 'c', finishedAt: at(2) },
  { id: 'b', finishedAt: at(1) },
  { id: 'a', finishedAt: at(0.5) },
];

describe('backup retention', () => {
  const table: [string, RetentionRule, string[], string[]][] = [
    ['keep the last 2', { keepLast: 2 }, [], ['c', 'd', 'e']],
    ['keep 2 days', { maxAgeMs: 2 * DAY }, [], ['c', 'd', 'e']],
    ['keep 2.5 days', { maxAgeMs: 2.5 * DAY }, [], ['d', 'e']],
    ['both: the union of what each keeps', { keepLast: 4, maxAgeMs: DAY }, [], ['e']],
    ['both: the union, the other way round', { keepLast: 1, maxAgeMs: 4 * DAY }, [], ['e']],
    ['a protected backup is kept whatever its age', { keepLast: 1 }, ['e', 'c'], ['b', 'd']],
    ['the newest is kept even when every backup is too old', { maxAgeMs: 1000 }, [], ['b', 'c', 'd', 'e']],
    ['no rule keeps everything', {}, [], []],
    ['keepLast above the count keeps everything', { keepLast: 50 }, [], []],
  ];
  it.each(table)('%s', (_, rule, protect, expired) => {
    const d = applyRetention(BACKUPS, rule, NOW, new Set(protect));
    expect(d.expired.map((b) => b.id).sort()).toEqual(expired);
    expect(d.kept.map((b) => b.id)).toEqual(['a', 'b', 'c', 'd', 'e'].filter((id) => !expired.includes(id)));
  });

  it('orders backups finished at the same time by id, so every prune decides alike', () => {
    const same = [
      { id: 'x1', finishedAt: at(5) },
      { id: 'x2', finishedAt: at(5) },
    ];
    expect(applyRetention(same, { keepLast: 1 }, NOW, new Set()).expired.map((b) => b.id)).toEqual(['x1']);
  });
});
