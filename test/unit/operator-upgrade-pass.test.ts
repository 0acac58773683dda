/** The pass rules of an image upgrade within release 4: what counts as one, and one change at a time. */
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../operator/api/effective.ts';
import type {
  MigrationState,
  ObservabilityServiceSpec,
  ObservabilityServiceStatus,
} from '../../operator/api/v1alpha1.ts';
import { isImageUpgrade, passOf, type Target } from '../../operator/planner/pass.ts';
import type { StepInput } from '../../operator/planner/step.ts';

const SINCE = '2026-03-01T11:00:00.000Z';
const spec = (writeMode: ObservabilityServiceSpec['writeMode'], image: string): ObservabilityServiceSpec => ({
  release: writeMode ? '4' : '3',
  image,
  ...(writeMode ? { writeMode } : {}),
  datastores: {
    postgres: { urlSecretRef: { name: 's', key: 'pg' } },
    clickhouse: { urlSecretRef: { name: 's', key: 'ch' } },
    redis: { urlSecretRef: { name: 's', key: 'redis' } },
  },
});
const target = (state: MigrationState, image: string): Target => ({ state, since: SINCE, image });

/** Image a running in `state`, with the pass `target` recorded when given. */
const running = (state: MigrationState, pass?: Target): ObservabilityServiceStatus => ({
  state,
  deployedImage: 'a',
  ...(pass ? { target: pass } : {}),
});

describe('isImageUpgrade', () => {
  const cases: [name: string, status: ObservabilityServiceStatus, pass: Target, upgrade: boolean][] = [
    ['a new image in the running release 4 state', running('Dual'), target('Dual', 'b'), true],
    ['a new image in EventsOnly', running('EventsOnly'), target('EventsOnly', 'b'), true],
    ['the same image (a settings rollout)', running('Dual'), target('Dual', 'a'), false],
    ['a mode move', running('Legacy'), target('Dual', 'b'), false],
    ['a new image in release 3', running('Release3'), target('Release3', 'b'), false],
    ['the first deployment', {}, target('Dual', 'b'), false],
  ];
  for (const [name, status, pass, upgrade] of cases)
    it(`${upgrade ? 'is' : 'is not'} ${name}`, () => expect(isImageUpgrade(status, pass)).toBe(upgrade));
});

describe('passOf: a new image within release 4 goes before a mode move', () => {
  const input = (s: ObservabilityServiceSpec, status: ObservabilityServiceStatus) =>
    ({ spec: withDefaults(s), status }) as StepInput;
  const migrating = { ...target('Dual', 'b'), schemaStarted: true };
  it.each<[string, ObservabilityServiceSpec, ObservabilityServiceStatus, MigrationState, Target?]>([
    [
      'Legacy asking Dual on a new image: the image first, in Legacy',
      spec('Dual', 'b'),
      running('Legacy'),
      'Legacy',
    ],
    ['Legacy asking Dual on the running image: the move', spec('Dual', 'a'), running('Legacy'), 'Dual'],
    [
      'a rollback to release 3 on a new image: the rollback',
      spec(undefined, 'b'),
      running('Dual'),
      'Release3',
    ],
    [
      'the cutover in progress: it finishes first, on its image',
      spec('EventsOnly', 'b'),
      running('Dual', target('EventsOnly', 'a')),
      'EventsOnly',
      target('EventsOnly', 'a'),
    ],
    [
      'an upgrade in EventsOnly not yet migrating gives way to another image',
      spec('EventsOnly', 'c'),
      running('EventsOnly', target('EventsOnly', 'b')),
      'EventsOnly',
    ],
    ['an upgrade migrating finishes first', spec('Dual', 'c'), running('Dual', migrating), 'Dual', migrating],
  ])('%s', (_, s, status, want, pass) => {
    const view = passOf(input(s, status));
    expect(view.want).toBe(want);
    expect(view.pass).toEqual(pass);
  });
});
