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

describe('isImageUpgrade', () => {
  const cases: { name: string; status: ObservabilityServiceStatus; pass: Target; upgrade: boolean }[] = [
    {
      name: 'a new image in the running release 4 state',
      status: { state: 'Dual', deployedImage: 'a' },
      pass: target('Dual', 'b'),
      upgrade: true,
    },
    {
      name: 'a new image in EventsOnly',
      status: { state: 'EventsOnly', deployedImage: 'a' },
      pass: target('EventsOnly', 'b'),
      upgrade: true,
    },
    {
      name: 'the same image (a settings rollout)',
      status: { state: 'Dual', deployedImage: 'a' },
      pass: target('Dual', 'a'),
      upgrade: false,
    },
    {
      name: 'a mode move',
      status: { state: 'Legacy', deployedImage: 'a' },
      pass: target('Dual', 'b'),
      upgrade: false,
    },
    {
      name: 'a new image in release 3',
      status: { state: 'Release3', deployedImage: 'a' },
      pass: target('Release3', 'b'),
      upgrade: false,
    },
    { name: 'the first deployment', status: {}, pass: target('Dual', 'b'), upgrade: false },
  ];
  for (const c of cases)
    it(`${c.upgrade ? 'is' : 'is not'} ${c.name}`, () =>
      expect(isImageUpgrade(c.status, c.pass)).toBe(c.upgrade));
});

describe('passOf: a new image within release 4 goes before a mode move', () => {
  const input = (s: ObservabilityServiceSpec, status: ObservabilityServiceStatus) =>
    ({ spec: withDefaults(s), status }) as StepInput;
  const cases: {
    name: string;
    spec: ObservabilityServiceSpec;
    status: ObservabilityServiceStatus;
    want: MigrationState;
    pass?: Target;
  }[] = [
    {
      name: 'Legacy asking Dual on a new image: the image first, in Legacy',
      spec: spec('Dual', 'b'),
      status: { state: 'Legacy', deployedImage: 'a' },
      want: 'Legacy',
    },
    {
      name: 'Legacy asking Dual on the running image: the move',
      spec: spec('Dual', 'a'),
      status: { state: 'Legacy', deployedImage: 'a' },
      want: 'Dual',
    },
    {
      name: 'a rollback to release 3 on a new image: the rollback',
      spec: spec(undefined, 'b'),
      status: { state: 'Dual', deployedImage: 'a' },
      want: 'Release3',
    },
    {
      name: 'the cutover in progress: it finishes first, on its image',
      spec: spec('EventsOnly', 'b'),
      status: { state: 'Dual', deployedImage: 'a', target: target('EventsOnly', 'a') },
      want: 'EventsOnly',
      pass: target('EventsOnly', 'a'),
    },
    {
      name: 'an upgrade in EventsOnly not yet migrating gives way to another image',
      spec: spec('EventsOnly', 'c'),
      status: { state: 'EventsOnly', deployedImage: 'a', target: target('EventsOnly', 'b') },
      want: 'EventsOnly',
    },
    {
      name: 'an upgrade migrating finishes first',
      spec: spec('Dual', 'c'),
      status: { state: 'Dual', deployedImage: 'a', target: { ...target('Dual', 'b'), schemaStarted: true } },
      want: 'Dual',
      pass: { ...target('Dual', 'b'), schemaStarted: true },
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const view = passOf(input(c.spec, c.status));
      expect(view.want).toBe(c.want);
      expect(view.pass).toEqual(c.pass);
    });
});
