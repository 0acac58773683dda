/**
 * Batch ingestion: validates each event on its own, answers every event in the 207 envelope, and
 * acknowledges only what the analytics store has durably written. Which tables are written follows
 * the write mode (server/contract/write-modes.ts).
 */
import { randomUUID } from 'node:crypto';
import { batchTargets, behaviourOf, type ModeSettings, type WriteTargets } from '../contract/write-modes.ts';
import { type ProjectPricing, priceLegacyRow } from '../models/apply.ts';
import type { ModelCatalog } from '../models/catalog.ts';
import { type EntityLocks, entityLockKeys } from './entity-locks.ts';
import {
  type Attribution,
  applyObservation,
  applyTrace,
  emptyObservationRow,
  emptyTraceRow,
  mergedVersion,
  movedRootTombstone,
  type ObservationPatch,
  type Row,
  type RowContext,
  scoreRow,
  stagedObservation,
  stagedTraceRoot,
} from './records.ts';
import {
  describeIssues,
  type IngestionEvent,
  ingestionEvent,
  OBSERVATION_CREATE_TYPES,
  OBSERVATION_UPDATE_TYPES,
  type ObservationType,
  type TraceBody,
} from './schemas.ts';
import { isRefusedInEventsOnly, refusalReason } from './sdk-versions.ts';
import type { IngestionStore } from './store.ts';
import { type TraceEventAssignments, traceEventAssignments } from './trace-events-update.ts';

export interface EventSuccess {
  id: string;
  status: 201;
}
export interface EventError {
  id: string;
  status: 400;
  message: string;
  error?: string;
}
export interface BatchResult {
  successes: EventSuccess[];
  errors: EventError[];
}

export interface BatchContext {
  projectId: string;
  settings: ModeSettings;
  attribution: Attribution;
  store: IngestionStore;
  locks: EntityLocks;
  /** Prices observations the SDK sent no cost for; without it, only sent costs are stored. */
  models?: ModelCatalog | undefined;
  now?: number;
}

/** What an operator of a refused producer is told (the spec leaves the wording to us). */
export const EVENTS_ONLY_REFUSAL =
  'This deployment runs write mode events_only: batch ingestion accepts only score-create events. ' +
  'Upgrade the producer to an OpenTelemetry-based SDK (JS/TS SDK 5.4+ or Python SDK 4.7+, or OTLP with ' +
  'the header x-service-ingestion-version: 4), or have the service operator run write mode dual until ' +
  'every producer has moved.';

type ObservationEvent = Exclude<IngestionEvent, { type: 'trace-create' | 'score-create' | 'sdk-log' }>;

function observationTypeOf(e: ObservationEvent): ObservationType {
  if (e.type === 'observation-create' || e.type === 'observation-update') return e.body.type;
  return (
    (OBSERVATION_CREATE_TYPES as Record<string, ObservationType>)[e.type] ??
    (OBSERVATION_UPDATE_TYPES as Record<string, ObservationType>)[e.type]!
  );
}

function idOf(item: unknown): string {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length > 0 ? id : 'unknown';
}

/** One change to a trace or an observation, applied in order onto the stored row. */
interface Change<P> {
  patch: P;
  at: string;
  isUpdate: boolean;
}
type ObservationChange = Change<ObservationPatch> & { traceId: string; type: ObservationType };

/**
 * The trace and observation changes of one request, grouped by entity. Committing merges each
 * entity's changes (creates first, then updates, each by time) onto its stored row and writes the
 * result to the legacy tables, and to staging in dual write.
 */
export class LegacyChanges {
  readonly traces = new Map<string, Change<TraceBody>[]>();
  readonly observations = new Map<string, ObservationChange[]>();

  addTrace(id: string, patch: TraceBody, at: string): void {
    const list = this.traces.get(id) ?? [];
    list.push({ patch, at, isUpdate: false });
    this.traces.set(id, list);
  }

  addObservation(id: string, change: ObservationChange): void {
    const list = this.observations.get(id) ?? [];
    list.push(change);
    this.observations.set(id, list);
  }

  get size(): number {
    return this.traces.size + this.observations.size;
  }
}

const changeOrder = (a: Change<unknown>, b: Change<unknown>) =>
  Number(a.isUpdate) - Number(b.isUpdate) || Date.parse(a.at) - Date.parse(b.at);

export interface CommitContext {
  projectId: string;
  attribution: Attribution;
  store: IngestionStore;
  locks: EntityLocks;
  targets: WriteTargets;
  models?: ModelCatalog | undefined;
  now: number;
  /**
   * The traces are represented in the events tables by a virtual root `t-<traceId>` (batch
   * ingestion), not by a root span of their own (OTLP), so staging carries the trace as one.
   */
  virtualRoots: boolean;
}

/**
 * Merges and writes the changes; resolves once every target table acknowledged its rows. The
 * read-merge-write of each trace and observation holds its entity lock, so concurrent requests
 * changing one entity merge onto each other's writes instead of overwriting them.
 */
export async function commitLegacyChanges(
  changes: LegacyChanges,
  scores: Row[],
  ctx: CommitContext,
): Promise<void> {
  const keys =
    ctx.targets.legacy && changes.size > 0
      ? entityLockKeys(ctx.projectId, changes.traces.keys(), changes.observations.keys())
      : [];
  // Before the locks: holding them may take the only PostgreSQL connection (the embedded one).
  const pricing =
    ctx.models && ctx.targets.legacy && changes.observations.size > 0
      ? await ctx.models.pricingFor(ctx.projectId)
      : undefined;
  await ctx.locks.hold(keys, () => mergeAndWrite(changes, scores, ctx, pricing));
}

async function mergeAndWrite(
  changes: LegacyChanges,
  scores: Row[],
  ctx: CommitContext,
  pricing: ProjectPricing | undefined,
): Promise<void> {
  let rc: RowContext = { projectId: ctx.projectId, now: ctx.now };
  const traces: Row[] = [];
  const observations: Row[] = [];
  const tombstones: Row[] = [];
  const traceEventUpdates: [string, TraceEventAssignments][] = [];
  // An OTLP trace's root is its own root span: a batch update of it gets no virtual root beside it.
  let ownRoot = new Set<string>();
  if (ctx.targets.legacy && changes.size > 0) {
    const traceIds = [...changes.traces.keys()];
    const [stored, otlpTraces] = await Promise.all([
      ctx.store.fetchEntities(ctx.projectId, traceIds, [...changes.observations.keys()]),
      ctx.virtualRoots && ctx.targets.staging ? ctx.store.otlpTraceIds(ctx.projectId, traceIds) : [],
    ]);
    const { traces: storedTraces, observations: storedObservations } = stored;
    ownRoot = new Set(otlpTraces);
    rc = { ...rc, now: mergedVersion(ctx.now, [...storedTraces, ...storedObservations]) };
    const storedTrace = new Map(storedTraces.map((r) => [String(r['id']), r]));
    const storedObservation = new Map(storedObservations.map((r) => [String(r['id']), r]));
    for (const [id, list] of changes.traces) {
      list.sort(changeOrder);
      let row = storedTrace.get(id) ?? emptyTraceRow(rc, id, list[0]!.patch.timestamp ?? list[0]!.at);
      for (const c of list) row = applyTrace(row, c.patch, rc);
      traces.push(row);
      const stored = storedTrace.get(id);
      if (ctx.targets.staging && stored) {
        const assignments = traceEventAssignments(stored, row);
        if (assignments.set.length > 0) traceEventUpdates.push([id, assignments]);
      }
      const before = stored?.['timestamp'];
      if (ctx.virtualRoots && !ownRoot.has(id) && before !== undefined && before !== row['timestamp'])
        tombstones.push(movedRootTombstone(ctx.projectId, id, String(before), rc.now));
    }
    for (const [id, list] of changes.observations) {
      list.sort(changeOrder);
      const first = list[0]!;
      let row =
        storedObservation.get(id) ??
        emptyObservationRow(rc, id, first.traceId, first.type, first.patch.startTime ?? first.at);
      for (const c of list)
        row = applyObservation(row, c.isUpdate ? c.patch : { ...c.patch, type: c.type }, rc);
      observations.push(row);
    }
    if (pricing) for (const row of observations) priceLegacyRow(pricing, row);
  }
  // Legacy tables first, then staging: a retry after a partial failure rewrites the same rows.
  await Promise.all([
    ctx.store.insert('traces', traces),
    ctx.store.insert('observations', observations),
    ctx.store.insert('scores', scores),
  ]);
  if (ctx.targets.staging) {
    await ctx.store.insert('observations_batch_staging', [
      ...(ctx.virtualRoots
        ? traces
            .filter((t) => !ownRoot.has(String(t['id'])))
            .map((t) => stagedTraceRoot(t, rc, ctx.attribution))
        : []),
      ...observations.map((o) => stagedObservation(o, rc, ctx.attribution)),
    ]);
  }
  if (ctx.targets.staging) await ctx.store.insert('events_full', tombstones);
  // Events of these traces already in the events tables (written directly) take the new fields.
  await ctx.store.updateTraceEvents(ctx.projectId, traceEventUpdates);
}

export async function processBatch(items: unknown[], ctx: BatchContext): Promise<BatchResult> {
  const result: BatchResult = { successes: [], errors: [] };
  const now = ctx.now ?? Date.now();
  const rc: RowContext = { projectId: ctx.projectId, now };
  const behaviour = behaviourOf(ctx.settings);
  const accepted: IngestionEvent[] = [];
  // An SDK the spec rejects in events_only (Python v2 or older, JS/TS v3 or older) is told so by name.
  const refusal = isRefusedInEventsOnly(ctx.attribution)
    ? refusalReason(ctx.attribution)
    : EVENTS_ONLY_REFUSAL;

  for (const item of items) {
    const parsed = ingestionEvent.safeParse(item);
    if (!parsed.success) {
      result.errors.push({
        id: idOf(item),
        status: 400,
        message: 'Invalid request data',
        error: describeIssues(parsed.error),
      });
    } else if (behaviour.batchAcceptsOnlyScores && parsed.data.type !== 'score-create') {
      result.errors.push({
        id: parsed.data.id,
        status: 400,
        message: 'Event type not accepted',
        error: refusal,
      });
    } else {
      accepted.push(parsed.data);
    }
  }

  const scores: Row[] = [];
  const changes = new LegacyChanges();
  for (const e of accepted) {
    if (e.type === 'score-create') scores.push(scoreRow(e.body, e.timestamp, rc, ctx.attribution));
    else if (e.type === 'trace-create') changes.addTrace(e.body.id ?? randomUUID(), e.body, e.timestamp);
    else if (e.type !== 'sdk-log') {
      // An observation without a trace gets one, as the reference SDKs expect.
      let traceId = e.body.traceId;
      if (!traceId) {
        traceId = randomUUID();
        changes.addTrace(traceId, { id: traceId, timestamp: e.body.startTime ?? e.timestamp }, e.timestamp);
      }
      changes.addObservation(e.body.id, {
        patch: e.body,
        at: e.timestamp,
        isUpdate: e.type.endsWith('-update'),
        traceId,
        type: observationTypeOf(e),
      });
    }
  }

  await commitLegacyChanges(changes, scores, {
    projectId: ctx.projectId,
    attribution: ctx.attribution,
    store: ctx.store,
    locks: ctx.locks,
    targets: batchTargets(ctx.settings),
    models: ctx.models,
    now,
    virtualRoots: true,
  });
  for (const e of accepted) result.successes.push({ id: e.id, status: 201 });
  return result;
}
