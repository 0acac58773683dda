/**
 * Golden narratives (after Cluster API's rollout sequence testdata): the condition transitions
 * and Events of whole walks for fixed seeds, checked in so every behaviour change of the status
 * shows in review. UPDATE_GOLDEN=1 rewrites them; otherwise they must match exactly.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findFlicker, narrative, type StatusRecord } from '../fixtures/operator/condition-history.ts';
import { CALM, seededRng } from '../fixtures/operator/fake-cluster.ts';
import { calmRun, play, type Run } from './operator-walks.ts';

const schedule = (seed: number, n: number) => {
  const rng = seededRng(seed);
  return Array.from({ length: n }, () => Math.floor(rng() * 100));
};

const WALKS: Record<string, Run> = {
  'calm-manual-to-events-only': calmRun('toEventsOnly', { automatic: false, drop: true }),
  'flaky-probes-to-events-only': {
    seed: 11,
    scenario: 'toEventsOnly',
    automatic: true,
    drop: false,
    replicas: 2,
    chaos: { ...CALM, probeFlake: 0.25, reportOutage: 0.15 },
    schedule: schedule(11, 200),
  },
  'failing-jobs-via-legacy': {
    seed: 5,
    scenario: 'viaLegacy',
    automatic: false,
    drop: false,
    replicas: 1,
    chaos: { ...CALM, jobFailure: 0.2, cacheLag: 0.2, apiFailure: 0.1 },
    schedule: schedule(5, 250),
  },
  'rollback-from-dual': {
    seed: 3,
    scenario: 'rollbackFromDual',
    automatic: true,
    drop: false,
    replicas: 1,
    chaos: { ...CALM, jobFailure: 0.1 },
    schedule: schedule(3, 150),
  },
};

describe('status narratives of whole walks', () => {
  it.each(Object.keys(WALKS))('%s', (name) => {
    const c = play(WALKS[name]!);
    expect(c.isConverged()).toBe(true);
    expect(findFlicker(c.statuses)).toEqual([]);
    const text = `${[...narrative(c.statuses), 'Events:', ...c.log.map((l) => `  ${l}`)].join('\n')}\n`;
    const file = new URL(`./testdata/${name}.golden`, import.meta.url);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
    expect(text).toBe(readFileSync(file, 'utf8'));
  });
});

describe('the flicker check itself', () => {
  const at = (
    status: 'True' | 'False' | 'Unknown',
    world: string,
    reason = status === 'True' ? 'WorkersHealthy' : 'ProbeUnanswered',
  ): StatusRecord => ({
    status: {
      state: 'Dual',
      observedGeneration: 4,
      conditions: [
        {
          type: 'PropagationHealthy',
          status,
          reason,
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
    world,
  });
  const cases: [string, StatusRecord[], number][] = [
    [
      'a passed gate turns Unknown while nothing changed',
      [at('True', 'a'), at('True', 'a'), at('Unknown', 'a')],
      1,
    ],
    [
      'a passed gate turns Unknown after the probes failed in between',
      [at('True', 'a'), at('True', 'b'), at('Unknown', 'a')],
      0,
    ],
    [
      'a status goes True -> False -> True with the same world',
      [
        at('False', 'a', 'PropagationStuck'),
        at('True', 'a'),
        at('False', 'a', 'PropagationStuck'),
        at('True', 'a'),
      ],
      1,
    ],
    [
      'True -> False -> True across a changed world',
      [
        at('False', 'a', 'PropagationStuck'),
        at('True', 'a'),
        at('False', 'b', 'PropagationStuck'),
        at('True', 'a'),
      ],
      0,
    ],
  ];
  it.each(cases)('%s', (_name, records, problems) => {
    expect(findFlicker(records).filter((p) => /flickered|went Unknown/.test(p))).toHaveLength(problems);
  });
});
