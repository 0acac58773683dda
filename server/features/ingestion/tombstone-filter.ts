/**
 * Writes without the rows of deleted traces (pure): a late event of a deleted trace, from any SDK
 * path or from the ingestion log's drain or replay, must not bring the trace back.
 */
import { LegacyChanges } from '../write-model/changes.ts';
import type { Row } from '../write-model/records.ts';

/** What of a write (server/features/ingestion/write.ts) names traces. */
interface TraceRows {
  changes: LegacyChanges;
  scores: Row[];
  events: Row[];
  /** Spans whose row a log's GenAI content fills after the insert (server/features/ingestion/genai-fill.ts). */
  fills?: { traceId: string; spanId: string }[] | undefined;
}

const traceOf = (row: Record<string, unknown>) => {
  const id = row['trace_id'];
  return id == null || id === '' ? undefined : String(id);
};

/** The traces a write writes rows of: its traces, and those its observations, scores and events name. */
export function traceIdsOf(w: TraceRows): Set<string> {
  const ids = new Set<string>(w.changes.traces.keys());
  for (const list of w.changes.observations.values()) for (const c of list) ids.add(c.traceId);
  for (const r of [...w.scores, ...w.events]) {
    const id = traceOf(r);
    if (id !== undefined) ids.add(id);
  }
  for (const f of w.fills ?? []) ids.add(f.traceId);
  return ids;
}

/** The write without anything of the `deleted` traces. */
export function withoutTraces<W extends TraceRows>(w: W, deleted: ReadonlySet<string>): W {
  if (deleted.size === 0) return w;
  const changes = new LegacyChanges();
  for (const [id, list] of w.changes.traces) if (!deleted.has(id)) changes.traces.set(id, list);
  for (const [id, list] of w.changes.observations) {
    const kept = list.filter((c) => !deleted.has(c.traceId));
    if (kept.length > 0) changes.observations.set(id, kept);
  }
  const live = (r: Record<string, unknown>) => {
    const id = traceOf(r);
    return id === undefined || !deleted.has(id);
  };
  const out = { ...w, changes, scores: w.scores.filter(live), events: w.events.filter(live) };
  if (w.fills) out.fills = w.fills.filter((f) => !deleted.has(f.traceId));
  return out;
}
