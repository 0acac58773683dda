/**
 * The version 3 experience of the UI's table and trace view (pure): a trace of the legacy
 * `traces` table is the root of its tree, its observations (legacy `observations`) hang below it,
 * and scores sit where the reference shows them (a trace's on the root, an observation's on it).
 * Rows come out in the shapes the version 4 pages use, so one page renders either read path.
 */
import { indexScores, scoresOfRow } from './row-scores.ts';
import { num, numberMap, orNull, parseMaybeJson, toIso } from './row-values.ts';
import { costSource } from './trace-totals.ts';
import { treeOrder } from './tree-order.ts';

type Row = Record<string, unknown>;

/** The stored text of a value: version 3 keeps input and output as JSON text, as version 4 does. */
const text = (v: unknown) => (v == null || v === '' ? null : String(v));

const metadataOf = (m: unknown) =>
  Object.fromEntries(
    Object.entries((m ?? {}) as Record<string, string>).map(([k, v]) => [k, parseMaybeJson(v)]),
  );

const seconds = (from: string | null, to: string | null) =>
  from && to ? (Date.parse(to) - Date.parse(from)) / 1000 : null;

/** A trace of the legacy list, with the aggregates of its observations (buildTraceAggregates). */
export function legacyTraceRow(trace: Row, agg: Row | undefined, scores: Row[]) {
  const id = String(trace['id']);
  const first = toIso(agg?.['first_start']);
  return {
    id,
    traceId: id,
    name: orNull(trace['name']) ?? '',
    type: 'TRACE',
    startTime: toIso(trace['timestamp'])!,
    endTime: toIso(agg?.['last_end']),
    latency: seconds(first, toIso(agg?.['last_end'])),
    model: null,
    usageDetails: {},
    totalCost: agg ? Number(agg['cost']) : null,
    userId: orNull(trace['user_id']),
    sessionId: orNull(trace['session_id']),
    tags: (trace['tags'] as string[] | undefined) ?? [],
    level: 'DEFAULT',
    environment: String(trace['environment'] ?? 'default'),
    isRootObservation: true,
    scores: scoresOfRow(indexScores(scores), id, '', true),
  };
}

/** A whole trace: the trace as the root, then its observations by start time. */
export function legacyTraceView(trace: Row, observations: Row[], scores: Row[]) {
  const index = indexScores(scores);
  const id = String(trace['id']);
  const obs = observations.map((o) => {
    const start = toIso(o['start_time'])!;
    const end = toIso(o['end_time']);
    return {
      id: String(o['id']),
      traceId: id,
      name: orNull(o['name']) ?? '',
      type: String(o['type']),
      startTime: start,
      endTime: end,
      latency: seconds(start, end),
      model: orNull(o['provided_model_name']),
      usageDetails: numberMap(o['usage_details']),
      totalCost: num(o['total_cost']),
      modelId: orNull(o['internal_model_id']),
      costDetails: numberMap(o['cost_details']),
      usagePricingTierName: orNull(o['usage_pricing_tier_name']),
      costSource: costSource(numberMap(o['cost_details']), numberMap(o['provided_cost_details'])),
      userId: orNull(trace['user_id']),
      sessionId: orNull(trace['session_id']),
      tags: [] as string[],
      level: String(o['level'] ?? 'DEFAULT'),
      environment: String(o['environment'] ?? 'default'),
      isRootObservation: false,
      scores: scoresOfRow(index, id, String(o['id']), false),
      // Top-level observations hang below the trace, the root of the tree.
      parentObservationId: orNull(o['parent_observation_id']) ?? id,
      input: text(o['input']),
      output: text(o['output']),
      metadata: metadataOf(o['metadata']),
      statusMessage: orNull(o['status_message']),
      completionStartTime: toIso(o['completion_start_time']),
    };
  });
  const start = toIso(trace['timestamp'])!;
  // ISO strings of one format: their text order is their time order.
  const last =
    obs
      .map((o) => o.endTime ?? o.startTime)
      .sort()
      .at(-1) ?? null;
  const first = [start, ...obs.map((o) => o.startTime)].sort()[0]!;
  const root = {
    ...legacyTraceRow(trace, undefined, scores),
    startTime: first,
    endTime: last,
    latency: seconds(first, last),
    totalCost: obs.reduce((s, o) => s + (o.totalCost ?? 0), 0),
    parentObservationId: null,
    input: text(trace['input']),
    output: text(trace['output']),
    metadata: metadataOf(trace['metadata']),
    statusMessage: null,
    completionStartTime: null,
  };
  return [
    root,
    ...treeOrder(obs, (o) => ({ id: o.id, startTime: o.startTime, parentId: o.parentObservationId })),
  ];
}
