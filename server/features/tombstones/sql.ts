/**
 * Tombstones in the analytics statements that copy rows from one table into another (the backfill
 * steps, the dual-write propagation): pure builders. A statement carries the tombstones it must
 * honour as query parameters, so a copy never writes a deleted trace's rows, and what is new since
 * a statement was built is found by comparing two reads of the record (`lateTombstones`).
 */

/** A deleted trace of a project; `traceId` '' stands for every trace of a deleted project. */
export interface Tombstone {
  projectId: string;
  traceId: string;
}

export const PROJECT_TOMBSTONE = '';

export const tombstoneKey = (t: Tombstone) => `${t.projectId}\u0000${t.traceId}`;

/**
 * A condition rows of live traces meet, over the columns naming a row's project and trace; its
 * parameters come from `tombstoneParams`.
 */
export function notTombstoned(projectColumn: string, traceColumn: string): string {
  return `NOT ((${projectColumn}, ${traceColumn}) IN {tombstoned_traces:Array(Tuple(String, String))})
  AND ${projectColumn} NOT IN {tombstoned_projects:Array(String)}`;
}

/** The parameters of `notTombstoned` for these tombstones. */
export function tombstoneParams(tombstones: Iterable<Tombstone>): {
  tombstoned_traces: [string, string][];
  tombstoned_projects: string[];
} {
  const traces: [string, string][] = [];
  const projects: string[] = [];
  for (const t of tombstones) {
    if (t.traceId === PROJECT_TOMBSTONE) projects.push(t.projectId);
    else traces.push([t.projectId, t.traceId]);
  }
  return { tombstoned_traces: traces, tombstoned_projects: projects };
}

/** The tombstones in `now` that a statement built with `ran` did not honour. */
export function lateTombstones(ran: ReadonlySet<string>, now: Iterable<Tombstone>): Tombstone[] {
  return [...now].filter((t) => !ran.has(tombstoneKey(t)));
}

/** Late tombstones by project: the traces to delete again, or every trace (`all`) of a deleted project. */
export function byProject(
  tombstones: readonly Tombstone[],
): Map<string, { all: boolean; traceIds: string[] }> {
  const out = new Map<string, { all: boolean; traceIds: string[] }>();
  for (const t of tombstones) {
    const entry = out.get(t.projectId) ?? { all: false, traceIds: [] };
    if (t.traceId === PROJECT_TOMBSTONE) entry.all = true;
    else entry.traceIds.push(t.traceId);
    out.set(t.projectId, entry);
  }
  return out;
}
