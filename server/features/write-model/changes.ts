/**
 * A request's trace and observation changes, as every write path hands them to the legacy commit
 * (server/features/ingestion/commit.ts) and to the log.
 */
import type { ObservationType, TraceBody } from './bodies.ts';
import type { ObservationPatch } from './records.ts';

/** One change to a trace or an observation, applied in order onto the stored row. */
export interface Change<P> {
  patch: P;
  at: string;
  isUpdate: boolean;
}
export type ObservationChange = Change<ObservationPatch> & { traceId: string; type: ObservationType };

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
