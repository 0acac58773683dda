import { describe, expect, it } from 'vitest';
import { regressions, type StepCheckpoint } from '../fixtures/scenario/operator-upgrade.ts';

const step = (name: string, done: number, finished = false): StepCheckpoint => ({
  name,
  done,
  total: 10,
  finished,
});

describe('backfill checkpoints between two readings', () => {
  it.each([
    ['progress', [step('s1', 3)], [step('s1', 5)], []],
    ['no change', [step('s1', 10, true)], [step('s1', 10, true)], []],
    ['a step that started over', [step('s1', 6)], [step('s1', 0)], ['s1 went from 6 to 0 chunks done']],
    [
      'a finished step unfinished again',
      [step('s1', 10, true)],
      [step('s1', 10)],
      ['s1 finished, then unfinished again'],
    ],
    ['a step gone', [step('s1', 1)], [], ['s1 disappeared']],
    ['a new step', [], [step('s2', 0)], []],
  ] as const)('%s', (_, before, after, expected) => {
    expect(regressions([...before], [...after])).toEqual(expected);
  });
});
