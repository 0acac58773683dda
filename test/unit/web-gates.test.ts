/** Which deployments serve which gate: the spec's per-mode endpoint rules as a table. */
import { describe, expect, it } from 'vitest';
import { type ModeSettings, RELEASE_3_SETTINGS, V4_DEFAULTS } from '../../server/contract/write-modes.ts';
import { type Gate, refusalOf } from '../../server/platform/http/gates.ts';

const v4 = (over: Partial<ModeSettings>): ModeSettings => ({ release: '4', ...V4_DEFAULTS, ...over });
const DEPLOYMENTS: Record<string, ModeSettings> = {
  legacy: v4({ writeMode: 'legacy', nativeOtelBehaviour: 'dual_write', enableHistoricBackfill: false }),
  dual: v4({ writeMode: 'dual', nativeOtelBehaviour: 'dual_write' }),
  'dual without preview': v4({ writeMode: 'dual', allowPreviewOptIn: false }),
  events_only: v4({}),
  'release 3': { release: '3', ...RELEASE_3_SETTINGS },
};

// [gate, deployment, served]
const TABLE: [Gate, string, boolean][] = [
  ...Object.keys(DEPLOYMENTS).map((d): [Gate, string, boolean] => ['always', d, true]),
  ['deprecated', 'legacy', true],
  ['deprecated', 'dual', true],
  ['deprecated', 'dual without preview', true],
  ['deprecated', 'events_only', false],
  ['deprecated', 'release 3', true],
  ['v4-reads', 'legacy', false],
  ['v4-reads', 'dual', true],
  ['v4-reads', 'dual without preview', false],
  ['v4-reads', 'events_only', true],
  ['v4-reads', 'release 3', false],
  ['metrics-v2', 'legacy', false],
  ['metrics-v2', 'dual', true],
  ['metrics-v2', 'dual without preview', false],
  ['metrics-v2', 'events_only', true],
  ['metrics-v2', 'release 3', false],
  ['release-4', 'legacy', true],
  ['release-4', 'dual', true],
  ['release-4', 'dual without preview', true],
  ['release-4', 'events_only', true],
  ['release-4', 'release 3', false],
];

describe('refusalOf', () => {
  it.each(TABLE)('%s in %s: served %s', (gate, d, served) => {
    const refusal = refusalOf(gate, DEPLOYMENTS[d]!);
    if (served) expect(refusal).toBeUndefined();
    else expect(refusal).toMatch(/not available|only available/);
  });
});
