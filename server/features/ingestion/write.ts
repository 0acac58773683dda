/**
 * What one accepted ingestion request writes, decided in full when it is accepted (ids, versions,
 * targets), so that writing it later, again, or together with other requests gives the
 * same rows: the unit the ingestion log stores and its drain applies. Prices are the catalog's
 * when it is applied, as the reference's worker prices what it takes off its queue.
 */
import type { WriteTargets } from '../../contract/write-modes.ts';
import { priceEventRow } from '../models/apply.ts';
import type { ModelCatalog } from '../models/catalog.ts';
import type { IngestionTombstones } from '../tombstones/record.ts';
import type { LegacyChanges } from '../write-model/changes.ts';
import type { EntityLocks } from '../write-model/entity-locks.ts';
import type { Attribution, Row } from '../write-model/records.ts';
import type { IngestionStore, SpanRef } from '../write-model/store.ts';
import { commitLegacyChanges } from './commit.ts';
import { fillGenAiContent } from './genai-fill.ts';
import { forEachInSlices } from './slices.ts';
import { traceIdsOf, withoutTraces } from './tombstone-filter.ts';

export interface IngestionWrite {
  projectId: string;
  /** When the web accepted it (ms): its rows' version time, and the log's order. */
  receivedAt: number;
  attribution: Attribution;
  targets: WriteTargets;
  /** Traces are represented in the events tables by a virtual root (batch), not their own root span (OTLP). */
  virtualRoots: boolean;
  changes: LegacyChanges;
  scores: Row[];
  /** Rows of `events_full` written directly; priced when they are applied. */
  events: Row[];
  /**
   * Spans whose GenAI log content is brought into their `events_full` row once `events` are in
   * (genai-fill.ts): the spans of the log events written, the generations written without content.
   */
  fills?: SpanRef[] | undefined;
}

/** The stores a write is applied with. */
export interface WriteDeps {
  store: IngestionStore;
  locks: EntityLocks;
  tombstones: IngestionTombstones;
  /** Prices observations the SDK sent no cost for; without it, only sent costs are stored. */
  models?: ModelCatalog | undefined;
}

/** Where accepted writes go before they are acknowledged: the ingestion log (server/features/ingestion/log/). */
export interface IngestionLog {
  /** Resolves once `write` is durable in the log (and, when the log waits for the store, applied). */
  record(write: IngestionWrite, deps: WriteDeps): Promise<void>;
}

export const isEmptyWrite = (w: IngestionWrite) =>
  w.changes.size === 0 && w.scores.length === 0 && w.events.length === 0;

/** The project's masking rules applied to a write's content (server/features/masking/). */
export interface WriteMasking {
  mask(write: IngestionWrite): Promise<IngestionWrite>;
}

/** What accepting a write needs beyond the stores. */
export interface AcceptDeps extends WriteDeps {
  /** Where accepted writes are made durable first; absent: straight into the store. */
  log?: IngestionLog | undefined;
  /** Absent: nothing is masked (processes that write no producer's content). */
  masking?: WriteMasking | undefined;
}

/**
 * Acknowledges a write, masked first: through the log when there is one, else straight into the
 * store.
 */
export async function acceptWrite(write: IngestionWrite, ctx: AcceptDeps): Promise<void> {
  if (isEmptyWrite(write)) return;
  const masked = ctx.masking ? await ctx.masking.mask(write) : write;
  return ctx.log ? ctx.log.record(masked, ctx) : applyWrites([masked], ctx);
}

/** What must be equal for writes to share one commit: the row context every merged row gets. */
const runKey = (w: IngestionWrite) => JSON.stringify([w.projectId, w.attribution, w.targets, w.virtualRoots]);

/**
 * The rows a write reads or changes: its traces (with those of its observations, scores and
 * events, whose rows follow their trace's), observations, scores and events. Two writes with no
 * key in common give the same rows in either order.
 */
function footprint(w: IngestionWrite): Set<string> {
  const keys = new Set<string>();
  for (const id of w.changes.traces.keys()) keys.add(`t:${id}`);
  for (const [id, list] of w.changes.observations) {
    keys.add(`o:${id}`);
    for (const c of list) keys.add(`t:${c.traceId}`);
  }
  for (const r of w.scores) {
    keys.add(`s:${String(r['id'])}`);
    if (r['trace_id'] != null) keys.add(`t:${String(r['trace_id'])}`);
  }
  // An event row is a span of its trace, which names it.
  for (const r of w.events) keys.add(`t:${String(r['trace_id'])}`);
  for (const s of w.fills ?? []) keys.add(`t:${s.traceId}`);
  return keys;
}

const overlaps = (a: Set<string>, b: Set<string>) => {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const k of small) if (large.has(k)) return true;
  return false;
};

interface Run {
  key: string;
  writes: IngestionWrite[];
  footprint: Set<string>;
}

/**
 * The writes cut into runs that each share one commit, applied in order. A write joins the latest
 * run of its kind unless a run after that one touches a row it touches: then it is applied after
 * that run. Producers sending side by side (an OTLP exporter and a batch SDK, two API keys) write
 * different traces, so a claim of their interleaved requests is a few commits, not one per request.
 */
export function runsOf(writes: IngestionWrite[]): IngestionWrite[][] {
  const runs: Run[] = [];
  for (const w of writes) {
    const key = runKey(w);
    const keys = footprint(w);
    let join: Run | undefined;
    for (let i = runs.length - 1; i >= 0; i--) {
      const run = runs[i]!;
      if (run.key === key) {
        join = run;
        break;
      }
      if (overlaps(run.footprint, keys)) break;
    }
    if (join) {
      join.writes.push(w);
      for (const k of keys) join.footprint.add(k);
    } else runs.push({ key, writes: [w], footprint: keys });
  }
  return runs.map((r) => r.writes);
}

/**
 * Applies writes as if each were committed after the one before it: each project's writes in
 * order, a run of alike writes in one commit (one read of their entities, one insert per table);
 * projects side by side. Every row is durable in the store when this resolves.
 */
export async function applyWrites(writes: IngestionWrite[], deps: WriteDeps): Promise<void> {
  const byProject = new Map<string, IngestionWrite[]>();
  for (const w of writes) {
    const list = byProject.get(w.projectId);
    if (list) list.push(w);
    else byProject.set(w.projectId, [w]);
  }
  await Promise.all(
    [...byProject].map(async ([projectId, list]) => {
      // One read of the tombstones per project before, one after (server/features/tombstones/record.ts).
      const traceIds = [...new Set(list.flatMap((w) => [...traceIdsOf(w)]))];
      const before = await deps.tombstones.deletedAmong(projectId, traceIds);
      if (before.project) return;
      const live = list.map((w) => withoutTraces(w, before.deleted)).filter((w) => !isEmptyWrite(w));
      for (const run of runsOf(live)) await applyRun(run, deps);
      const written = traceIds.filter((id) => !before.deleted.has(id));
      if (written.length === 0) return;
      const after = await deps.tombstones.deletedAmong(projectId, written, before.asOf);
      if (after.deleted.size > 0) await deps.tombstones.purge(projectId, [...after.deleted]);
    }),
  );
}

async function applyRun(run: IngestionWrite[], deps: WriteDeps): Promise<void> {
  const { projectId, attribution, targets, virtualRoots } = run[0]!;
  const changes = run
    .filter((w) => w.changes.size > 0)
    .map((w) => ({ changes: w.changes, receivedAt: w.receivedAt }));
  const scores = run.flatMap((w) => w.scores);
  if (changes.length > 0 || scores.length > 0) {
    await commitLegacyChanges(changes, scores, {
      projectId,
      attribution,
      store: deps.store,
      locks: deps.locks,
      targets,
      models: deps.models,
      now: Math.max(...run.map((w) => w.receivedAt)),
      virtualRoots,
    });
  }
  const events = run.flatMap((w) => w.events);
  if (events.length > 0) {
    // Priced here, as legacy rows are at their merge: in the drain, off the acknowledgement's path.
    if (deps.models) {
      const pricing = await deps.models.pricingFor(projectId);
      await forEachInSlices(events, (row) => priceEventRow(pricing, row));
    }
    await deps.store.insert('events_full', events);
  }
  const fills = run.flatMap((w) => w.fills ?? []);
  if (fills.length > 0) await fillGenAiContent(deps.store, projectId, fills, Date.now());
}
