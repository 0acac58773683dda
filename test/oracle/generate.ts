/**
 * fast-check arbitraries of history plans: a random mix of producers and updates interleaved with
 * a random timeline (release 3 -> legacy -> dual -> backfill -> events_only, rollbacks from legacy
 * or dual and a new upgrade, worker kills and restarts, backfill steps killed mid-run), with or
 * without the ingestion log and what befalls it (killed drainers, redeliveries, replays, sweeps).
 */
import fc from 'fast-check';
import {
  type BackfillPlan,
  type EpochPlan,
  type HistoryPlan,
  type Level,
  type LogEvent,
  PRODUCERS,
  type SpanType,
  type TrafficPlan,
  type TrafficSlot,
} from './history.ts';

const LEVELS: Level[] = ['DEFAULT', 'DEBUG', 'WARNING', 'ERROR'];
const TYPES: SpanType[] = ['SPAN', 'GENERATION', 'EVENT'];

const tracePlan: fc.Arbitrary<TrafficPlan> = fc.record({
  kind: fc.constant('trace' as const),
  producer: fc.constantFrom(...PRODUCERS),
  parents: fc.array(fc.option(fc.nat(4), { nil: null }), { maxLength: 3 }),
  types: fc.array(fc.constantFrom(...TYPES), { minLength: 1, maxLength: 3 }),
  levels: fc.array(fc.constantFrom(...LEVELS), { minLength: 1, maxLength: 2 }),
  withVersion: fc.boolean(),
  tagCount: fc.nat(2),
  isPublic: fc.boolean(),
  // Sub-millisecond part of OTLP start times, below half a millisecond so that rounding and
  // truncation to milliseconds agree.
  subMs: fc.integer({ min: 1, max: 499 }),
});

const trafficPlan: fc.Arbitrary<TrafficPlan> = fc.oneof(
  { weight: 5, arbitrary: tracePlan },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('trace-update' as const),
      target: fc.nat(),
      isPublic: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('obs-update' as const),
      target: fc.nat(),
      span: fc.nat(),
      level: fc.constantFrom(...LEVELS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('score' as const), target: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('experiment' as const), spans: fc.integer({ min: 1, max: 3 }) }),
  },
);

const logEvent: fc.Arbitrary<LogEvent> = fc.oneof(
  // After its claim: before, within or after the claim's write and checkpoint (a few tens of ms).
  fc.record({ kind: fc.constant('kill-drainer' as const), afterMs: fc.integer({ min: 0, max: 250 }) }),
  fc.record({ kind: fc.constant('redeliver' as const), file: fc.nat() }),
  fc.record({ kind: fc.constant('replay' as const), from: fc.nat() }),
  fc.record({ kind: fc.constant('sweep' as const), file: fc.nat() }),
);

const slot: fc.Arbitrary<TrafficSlot> = fc
  .tuple(
    fc.record(
      { traffic: trafficPlan, worker: fc.constantFrom<'start' | 'kill'>('start', 'kill') },
      { requiredKeys: ['traffic'] },
    ),
    // One slot in four; shrinks towards none.
    fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: logEvent }),
  )
  .map(([s, log]) => (log ? { ...s, log } : s));
const slots = (max: number) => fc.array(slot, { maxLength: max });

const backfillPlan: fc.Arbitrary<BackfillPlan> = fc.record({
  concurrent: fc.boolean(),
  // Per step 1-5: SIGKILL this many ms after the start (then run it to the end), or not at all.
  kills: fc.array(fc.option(fc.integer({ min: 50, max: 2_500 }), { nil: null, freq: 2 }), {
    minLength: 5,
    maxLength: 5,
  }),
});

const dualPlan = (withBackfill: boolean) =>
  fc.record({
    before: slots(3),
    backfill: withBackfill ? backfillPlan : fc.option(backfillPlan, { nil: null }),
    after: slots(3),
  });

const epochPlan = (last: boolean, cutover: boolean): fc.Arbitrary<EpochPlan> =>
  fc.record({
    legacy: fc.option(slots(3), { nil: null, freq: 4 }),
    // An epoch that rolls back may do so from legacy (no dual); the last one reaches dual.
    dual: last ? dualPlan(cutover) : fc.option(dualPlan(false), { nil: null, freq: 3 }),
  });

export const historyPlan: fc.Arbitrary<HistoryPlan> = fc
  .record({ rollbacks: fc.nat(1), cutover: fc.boolean() })
  .chain(({ rollbacks, cutover }) =>
    fc.record({
      // A third of the histories write the store directly, as without a log bucket.
      log: fc.option(fc.record({ waitForStore: fc.boolean() }), { nil: null, freq: 3 }),
      release3: slots(3),
      epochs: fc.tuple(
        ...Array.from({ length: rollbacks + 1 }, (_, i) => epochPlan(i === rollbacks, cutover)),
      ),
      eventsOnly: cutover ? slots(3) : fc.constant(null),
      // Last: the keys before it draw what they drew before deletions were part of a history.
      deletions: fc.array(
        fc.record({ after: fc.nat(), target: fc.nat(), late: fc.option(fc.nat(3), { nil: null }) }),
        { maxLength: 3 },
      ),
    }),
  );
