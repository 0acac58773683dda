/**
 * Whole migrations played against the simulated world: the specs a user applies one after the
 * other, a random schedule of reconciles, controller ticks, operator restarts and user actions,
 * then a cooperative world until it converges. Shared by the sequence tests and the golden
 * narratives.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { CALM, type Chaos, FakeCluster, seededRng } from '../fixtures/operator/fake-cluster.ts';

export const base: ObservabilityServiceSpec = {
  release: '3',
  image: 'observatory:dev',
  datastores: {
    postgres: { urlSecretRef: { name: 'db', key: 'url' } },
    clickhouse: { urlSecretRef: { name: 'ch', key: 'url' } },
    redis: { urlSecretRef: { name: 'redis', key: 'url' } },
  },
  // Short enough that finished Jobs vanish mid-walk (a tick is up to two minutes): the planner
  // must go on from the results it recorded in status.jobs.
  jobs: { ttlSecondsAfterFinished: 600 },
};

/** Where the operator's backups go (spec.backup), credentials from a Secret. */
export const BACKUP_SPEC: NonNullable<ObservabilityServiceSpec['backup']> = {
  destination: {
    bucket: 'observatory-backups',
    prefix: 'obs/',
    endpoint: 'http://s3.example:7070',
    forcePathStyle: true,
    accessKeyIdSecretRef: { name: 's3', key: 'access-key-id' },
    secretAccessKeySecretRef: { name: 's3', key: 'secret-access-key' },
  },
};

export type Scenario =
  | 'toEventsOnly'
  | 'viaLegacy'
  | 'retentionWindow'
  | 'rollbackFromDual'
  | 'rollbackFromLegacy'
  | 'stayDual';

/** The specs the user applies one after the other. */
export function path(
  s: Scenario,
  o: { automatic: boolean; drop: boolean; replicas: number; backups?: boolean },
): ((x: ObservabilityServiceSpec) => ObservabilityServiceSpec)[] {
  const v4 = (x: ObservabilityServiceSpec): ObservabilityServiceSpec => ({
    ...x,
    release: '4',
    // With spec.backup the operator takes the backup itself.
    ...(o.backups ? {} : { upgrade: { backupConfirmed: true } }),
    worker: { ...x.worker, replicas: o.replicas },
    cutover: { approval: o.automatic ? 'Automatic' : 'Manual' },
  });
  const dual = (x: ObservabilityServiceSpec): ObservabilityServiceSpec => ({
    ...v4(x),
    writeMode: 'Dual',
    backfill: { enabled: true, dropScratchTables: o.drop },
  });
  const eventsOnly = (x: ObservabilityServiceSpec): ObservabilityServiceSpec => ({
    ...x,
    writeMode: 'EventsOnly',
  });
  const legacy = (x: ObservabilityServiceSpec): ObservabilityServiceSpec => ({
    ...v4(x),
    writeMode: 'Legacy',
  });
  const release3 = (x: ObservabilityServiceSpec): ObservabilityServiceSpec => {
    const { writeMode: _w, backfill: _b, ...rest } = x;
    return { ...rest, release: '3' };
  };
  switch (s) {
    case 'toEventsOnly':
      return [dual, eventsOnly];
    case 'viaLegacy':
      return [legacy, dual, eventsOnly];
    case 'retentionWindow':
      return [
        (x) => ({
          ...v4(x),
          writeMode: 'Dual',
          backfill: { enabled: false },
          cutover: { ...v4(x).cutover, retentionWindow: '2h' },
        }),
        eventsOnly,
      ];
    case 'rollbackFromDual':
      return [dual, release3];
    case 'rollbackFromLegacy':
      return [legacy, release3];
    case 'stayDual':
      return [dual];
  }
}

export interface Run {
  seed: number;
  scenario: Scenario;
  automatic: boolean;
  drop: boolean;
  replicas: number;
  chaos: Chaos;
  /** Reconcile/tick/user interleaving: one entry per simulation step. */
  schedule: number[];
  /** Hold disruptive work for a maintenance window (10 minutes every hour, closed at the start). */
  windows?: boolean;
  /** spec.backup is set: the operator backs up before the release move and the cutover. */
  backups?: boolean;
  /** The workers are autoscaled on a backlog whose age the schedule moves at random. */
  autoscaling?: boolean;
  /** The user hibernates and wakes the deployment at random (woken before the world cooperates). */
  hibernate?: boolean;
}

/**
 * A walk where nothing goes wrong and only the user's changes happen: seed 7, automatic cutover,
 * two workers, the scratch tables kept, unless `extra` says otherwise.
 */
export const calmRun = (scenario: Scenario, extra: Partial<Run> = {}): Run => ({
  seed: 7,
  scenario,
  automatic: true,
  drop: false,
  replicas: 2,
  chaos: CALM,
  schedule: [],
  ...extra,
});

/** The ingestion log and the worker autoscaler of the autoscaled walks. */
export const AUTOSCALED: Pick<ObservabilityServiceSpec, 'blobStorage' | 'worker'> = {
  blobStorage: { ingestionLog: { bucket: 'observatory-log', waitForStore: false } },
  worker: {
    autoscaling: {
      enabled: true,
      minReplicas: 1,
      maxReplicas: 4,
      targetBacklogAgeSeconds: 30,
      scaleDownStabilizationSeconds: 300,
    },
  },
};

export const WALK_WINDOWS = [{ cron: '30 * * * *', duration: '10m' }];

export const chaosArb = fc.record({
  jobFailure: fc.double({ min: 0, max: 0.3, noNaN: true }),
  apiFailure: fc.double({ min: 0, max: 0.2, noNaN: true }),
  probeFlake: fc.double({ min: 0, max: 0.3, noNaN: true }),
  reportOutage: fc.double({ min: 0, max: 0.3, noNaN: true }),
  cacheLag: fc.double({ min: 0, max: 0.5, noNaN: true }),
});

export const runArb: fc.Arbitrary<Run> = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  scenario: fc.constantFrom<Scenario>(
    'toEventsOnly',
    'viaLegacy',
    'retentionWindow',
    'rollbackFromDual',
    'rollbackFromLegacy',
    'stayDual',
  ),
  automatic: fc.boolean(),
  drop: fc.boolean(),
  replicas: fc.integer({ min: 1, max: 3 }),
  chaos: chaosArb,
  schedule: fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 150, maxLength: 400 }),
  windows: fc.boolean(),
  backups: fc.boolean(),
});

/** Plays the run; returns the cluster for assertions. */
export function play(r: Run): FakeCluster {
  const rng = seededRng(r.seed);
  const spec = {
    ...base,
    ...(r.windows ? { maintenanceWindows: WALK_WINDOWS } : {}),
    ...(r.backups ? { backup: BACKUP_SPEC } : {}),
    ...(r.autoscaling ? AUTOSCALED : {}),
  };
  const c = new FakeCluster(structuredClone(spec), rng, r.chaos);
  const specs = path(r.scenario, r);
  let next = 0;
  c.incompatibleProducers = rng() < 0.5 ? 2 : 0;
  const step = (roll: number, cooperative: boolean) => {
    // A burst, a drain or a store outage moves the backlog's age between reconciles.
    if (r.autoscaling && rng() < 0.1) c.backlogAgeSeconds = rng() < 0.5 ? 0 : Math.floor(rng() * 600);
    if (roll < 40) c.reconcile();
    else if (roll < 75) c.tick();
    else if (roll < 80) c.restartOperator();
    else if (roll < 86) {
      // The user moves on to the next spec of the path, whether or not the last one was reached.
      const change = specs[next];
      if (change && (cooperative || rng() < 0.5)) {
        c.updateSpec(change);
        next++;
      }
    } else if (roll < 91) {
      if (c.retryIfStalled() === false && rng() < 0.3) c.approveCurrentGeneration();
    } else if (roll < 94) c.incompatibleProducers = 0;
    else if (r.hibernate && roll >= 97) {
      // The user asks for it whatever the state; mid-cutover the operator refuses it (Stalled).
      const hibernate = !c.live.spec.hibernate;
      c.updateSpec((s) => ({ ...s, hibernate }));
    } else c.tick();
    expect(c.violations).toEqual([]);
  };
  for (const roll of r.schedule) step(roll, false);

  // The world cooperates from here on: it must converge.
  c.chaos = { jobFailure: 0, apiFailure: 0, probeFlake: 0, reportOutage: 0, cacheLag: 0 };
  c.incompatibleProducers = 0;
  c.backlogAgeSeconds = 0;
  if (c.live.spec.hibernate) c.updateSpec((s) => ({ ...s, hibernate: false }));
  for (const change of specs.slice(next)) c.updateSpec(change);
  for (let i = 0; i < 600 && !c.isConverged(); i++) {
    c.retryIfStalled();
    if (c.live.status?.conditions?.some((x) => x.reason === 'AwaitingApproval' && x.status === 'False'))
      c.approveCurrentGeneration();
    c.reconcile();
    c.tick();
    c.tick();
    expect(c.violations).toEqual([]);
  }
  return c;
}
