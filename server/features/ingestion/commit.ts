/**
 * The legacy write of traces and observations: each request's changes, grouped by entity, merged
 * onto the stored rows under the entities' locks and written to the legacy tables (and to staging
 * in dual write). Batch ingestion, the legacy endpoints and OTLP in legacy and dual modes share it.
 */

import type { WriteTargets } from '../../contract/write-modes.ts';
import type { ProjectPricing } from '../models/apply.ts';
import { priceLegacyRow } from '../models/apply.ts';
import type { ModelCatalog } from '../models/catalog.ts';
import type { Change, LegacyChanges } from '../write-model/changes.ts';
import { type EntityLocks, entityLockKeys } from '../write-model/entity-locks.ts';
import {
  type Attribution,
  applyObservation,
  applyTrace,
  emptyObservationRow,
  emptyTraceRow,
  mergedVersion,
  movedRootTombstone,
  type Row,
  type RowContext,
  stagedObservation,
  stagedTraceRoot,
} from '../write-model/records.ts';
import type { IngestionStore } from '../write-model/store.ts';
import { type TraceEventAssignments, traceEventAssignments } from '../write-model/trace-events-update.ts';

const changeOrder = (a: Change<unknown>, b: Change<unknown>) =>
  Number(a.isUpdate) - Number(b.isUpdate) || Date.parse(a.at) - Date.parse(b.at);

/** One request's changes and when it was accepted: an entity it creates is created then. */
export interface RequestChanges {
  changes: LegacyChanges;
  receivedAt: number;
}

export interface CommitContext {
  projectId: string;
  attribution: Attribution;
  store: IngestionStore;
  locks: EntityLocks;
  targets: WriteTargets;
  models?: ModelCatalog | undefined;
  /** The newest request's time: the merged rows' version is at least this. */
  now: number;
  /**
   * The traces are represented in the events tables by a virtual root `t-<traceId>` (batch
   * ingestion), not by a root span of their own (OTLP), so staging carries the trace as one.
   */
  virtualRoots: boolean;
}

/**
 * Merges and writes the changes of one request or of several, applied in their order as if each
 * were committed after the one before it (the ingestion log's drain commits many requests in one
 * go); resolves once every target table acknowledged its rows. The read-merge-write of each trace
 * and observation holds its entity lock, so concurrent commits changing one entity merge onto each
 * other's writes instead of overwriting them.
 */
export async function commitLegacyChanges(
  requests: RequestChanges[],
  scores: Row[],
  ctx: CommitContext,
): Promise<void> {
  const traceIds = new Set(requests.flatMap((r) => [...r.changes.traces.keys()]));
  const observationIds = new Set(requests.flatMap((r) => [...r.changes.observations.keys()]));
  const touched = ctx.targets.legacy && traceIds.size + observationIds.size > 0;
  const locked = entityLockKeys(ctx.projectId, touched ? traceIds : [], touched ? observationIds : []);
  // Before the locks: holding them may take the only PostgreSQL connection (the embedded one).
  const pricing =
    ctx.models && ctx.targets.legacy && observationIds.size > 0
      ? await ctx.models.pricingFor(ctx.projectId)
      : undefined;
  await ctx.locks.hold(locked, () =>
    mergeAndWrite(touched ? requests : [], [...traceIds], [...observationIds], scores, ctx, pricing),
  );
}

async function mergeAndWrite(
  requests: RequestChanges[],
  traceIds: string[],
  observationIds: string[],
  scores: Row[],
  ctx: CommitContext,
  pricing: ProjectPricing | undefined,
): Promise<void> {
  let rc: RowContext = { projectId: ctx.projectId, now: ctx.now };
  const traces = new Map<string, Row>();
  const observations = new Map<string, Row>();
  const tombstones: Row[] = [];
  const traceEventUpdates: [string, TraceEventAssignments][] = [];
  // An OTLP trace's root is its own root span: a batch update of it gets no virtual root beside it.
  let ownRoot = new Set<string>();
  if (requests.length > 0) {
    const [stored, otlpTraces] = await Promise.all([
      ctx.store.fetchEntities(ctx.projectId, traceIds, observationIds),
      ctx.virtualRoots && ctx.targets.staging ? ctx.store.otlpTraceIds(ctx.projectId, traceIds) : [],
    ]);
    const { traces: storedTraces, observations: storedObservations } = stored;
    ownRoot = new Set(otlpTraces);
    const merged = [...storedTraces, ...storedObservations];
    rc = { ...rc, now: mergedVersion(ctx.now, merged) };
    const storedTrace = new Map(storedTraces.map((r) => [String(r['id']), r]));
    const storedObservation = new Map(storedObservations.map((r) => [String(r['id']), r]));
    // Each request's changes of an entity apply onto what the requests before it made of it.
    for (const { changes, receivedAt } of requests) {
      // Created when the request was accepted, whenever it is written (a drain, a replay).
      const created: RowContext = { projectId: ctx.projectId, now: receivedAt };
      for (const [id, list] of changes.traces) {
        list.sort(changeOrder);
        let row =
          traces.get(id) ??
          storedTrace.get(id) ??
          emptyTraceRow(created, id, list[0]!.patch.timestamp ?? list[0]!.at);
        for (const c of list) row = applyTrace(row, c.patch, rc);
        traces.set(id, row);
      }
      for (const [id, list] of changes.observations) {
        list.sort(changeOrder);
        const first = list[0]!;
        let row =
          observations.get(id) ??
          storedObservation.get(id) ??
          emptyObservationRow(created, id, first.traceId, first.type, first.patch.startTime ?? first.at);
        for (const c of list)
          row = applyObservation(row, c.isUpdate ? c.patch : { ...c.patch, type: c.type }, rc);
        observations.set(id, row);
      }
    }
    for (const [id, row] of traces) {
      const stored = storedTrace.get(id);
      if (ctx.targets.staging && stored) {
        const assignments = traceEventAssignments(stored, row);
        if (assignments.set.length > 0) traceEventUpdates.push([id, assignments]);
      }
      const before = stored?.['timestamp'];
      if (ctx.virtualRoots && !ownRoot.has(id) && before !== undefined && before !== row['timestamp'])
        tombstones.push(movedRootTombstone(ctx.projectId, id, String(before), rc.now));
    }
    if (pricing) for (const row of observations.values()) priceLegacyRow(pricing, row);
  }
  // Legacy tables first, then staging: a retry after a partial failure rewrites the same rows.
  await Promise.all([
    ctx.store.insert('traces', [...traces.values()]),
    ctx.store.insert('observations', [...observations.values()]),
    ctx.store.insert('scores', scores),
  ]);
  if (ctx.targets.staging) {
    // Staged now, whenever the request was accepted: the propagation takes staging partitions
    // oldest first and does not come back to one it passed.
    const staged: RowContext = { projectId: ctx.projectId, now: Math.max(rc.now, Date.now()) };
    await ctx.store.insert('observations_batch_staging', [
      ...(ctx.virtualRoots
        ? [...traces.values()]
            .filter((t) => !ownRoot.has(String(t['id'])))
            .map((t) => stagedTraceRoot(t, staged, ctx.attribution))
        : []),
      ...[...observations.values()].map((o) => stagedObservation(o, staged, ctx.attribution)),
    ]);
  }
  if (ctx.targets.staging) await ctx.store.insert('events_full', tombstones);
  // Events of these traces already in the events tables (written directly) take the new fields.
  await ctx.store.updateTraceEvents(ctx.projectId, traceEventUpdates);
}
