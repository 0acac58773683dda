/**
 * Tombstones: the durable record (PostgreSQL `trace_tombstones`) of what a deletion deleted, a
 * trace of a project or a whole project, with when and by whom. A deletion records it before any
 * row goes; every later writer leaves the record's traces out: ingestion and the ingestion log's
 * drain and replay (server/features/ingestion/write.ts), the backfill steps and the propagation (the guard
 * below), and a restore re-applies the record (server/features/backup/). docs/backup.md says how long a
 * tombstone is kept and why.
 *
 * The ordering argument, shared by every writer: a deletion commits its tombstone, then deletes the
 * rows. A writer reads the record before it writes and again after its write is acknowledged. A
 * tombstone committed before the first read is honoured; one committed after the second read is
 * followed by the deletion's own delete, which runs after the write and removes its rows; one
 * committed between the reads is seen by the second, and the writer deletes its rows again itself.
 */
import { type ClickHouseClient, TupleParam } from '@clickhouse/client';
import type pg from 'pg';
import { type Dialect, onCluster } from '../../platform/migrations/analytics/dialect.ts';
import {
  byProject,
  lateTombstones,
  PROJECT_TOMBSTONE,
  type Tombstone,
  tombstoneKey,
  tombstoneParams,
} from './sql.ts';
import { traceColumn, traceTables } from './tables.ts';

type Queryable = Pick<pg.Pool, 'query'>;

/** Who deleted: an API key (by its public key), a signed-in user, or a policy (server/features/audit/audit.ts). */
export type TombstoneActor = { publicKey: string } | { userId: string } | { policy: string };

/**
 * How far back a second read looks: a tombstone's time is its transaction's start, which may
 * precede a read that does not yet see it by the time the (one statement) transaction takes.
 */
const COMMIT_MARGIN_MS = 60_000;

/** Records the traces' tombstones (a deletion again refreshes the time and the actor). */
export async function recordTraceTombstones(
  db: Queryable,
  projectId: string,
  actor: TombstoneActor,
  traceIds: readonly string[],
): Promise<void> {
  if (traceIds.length === 0) return;
  await db.query(
    `INSERT INTO trace_tombstones (project_id, trace_id, api_key_id, user_id, policy)
     SELECT $1, t, (SELECT id FROM api_keys WHERE public_key = $3 AND project_id = $1), $4, $5
     FROM unnest($2::text[]) AS t
     ON CONFLICT (project_id, trace_id) DO UPDATE SET deleted_at = now(),
       api_key_id = excluded.api_key_id, user_id = excluded.user_id, policy = excluded.policy`,
    [
      projectId,
      [...new Set(traceIds)],
      'publicKey' in actor ? actor.publicKey : null,
      'userId' in actor ? actor.userId : null,
      'policy' in actor ? actor.policy : null,
    ],
  );
}

/** Records a deleted project's tombstone: every trace of it, whenever written. */
export async function recordProjectTombstone(db: Queryable, projectId: string): Promise<void> {
  await db.query(
    `INSERT INTO trace_tombstones (project_id, trace_id, policy) VALUES ($1, $2, 'project-deletion')
     ON CONFLICT (project_id, trace_id) DO NOTHING`,
    [projectId, PROJECT_TOMBSTONE],
  );
}

/** Every tombstone, or those recorded since `since`, and the time of the read. */
export async function readTombstones(
  db: Queryable,
  since?: Date,
): Promise<{ tombstones: Tombstone[]; asOf: Date }> {
  const { rows } = await db.query<{ as_of: Date; t: [string, string][] | null }>(
    `SELECT clock_timestamp() AS as_of,
       (SELECT array_agg(ARRAY[project_id, trace_id]) FROM trace_tombstones
        WHERE $1::timestamptz IS NULL OR deleted_at >= $1) AS t`,
    [since ?? null],
  );
  const row = rows[0]!;
  return {
    tombstones: (row.t ?? []).map(([projectId, traceId]) => ({ projectId, traceId })),
    asOf: row.as_of,
  };
}

/** A project's deleted traces, or `project` when the whole project is deleted. */
export async function projectTombstones(
  db: Queryable,
  projectId: string,
): Promise<{ project: boolean; traceIds: string[] }> {
  const { rows } = await db.query<{ trace_id: string }>(
    'SELECT trace_id FROM trace_tombstones WHERE project_id = $1',
    [projectId],
  );
  const ids = rows.map((r) => r.trace_id);
  return { project: ids.includes(PROJECT_TOMBSTONE), traceIds: ids };
}

/** What deleting again needs: the store and how its statements are written. */
export interface PurgeDeps {
  analytics: ClickHouseClient;
  release: '3' | '4';
  dialect: Dialect;
}

/**
 * Deletes again the rows of traces (or of a whole project) that a writer wrote after their
 * deletion, from every table a trace's rows may be in and from `extraTables` (a step's scratch
 * table). Rare, so always the waited-for mutation, which every MergeTree table takes.
 */
export async function purgeTraces(
  deps: PurgeDeps,
  projectId: string,
  target: { all: boolean; traceIds: readonly string[] },
  extraTables: readonly string[] = [],
): Promise<void> {
  const params = { project_id: projectId, trace_ids: [...target.traceIds] };
  const tables = [...traceTables(deps.release), ...extraTables];
  await Promise.all(
    tables.map((table) => {
      const where = target.all
        ? 'project_id = {project_id:String}'
        : `project_id = {project_id:String} AND ${traceColumn(table)} IN {trace_ids:Array(String)}`;
      return deps.analytics.command({
        query: `ALTER TABLE ${table}${onCluster(deps.dialect)} DELETE WHERE ${where} SETTINGS mutations_sync = 2`,
        query_params: params,
      });
    }),
  );
}

/**
 * The record as ingestion reads it (server/features/ingestion/write.ts), before and after it writes.
 */
export interface IngestionTombstones {
  /**
   * Which of these traces of the project are deleted (all of them when the project is), as of the
   * read's time; with `since`, only those deleted since then.
   */
  deletedAmong(
    projectId: string,
    traceIds: string[],
    since?: Date,
  ): Promise<{ deleted: ReadonlySet<string>; project: boolean; asOf: Date }>;
  /** Deletes again the rows of traces deleted while they were being written. */
  purge(projectId: string, traceIds: string[]): Promise<void>;
}

export function ingestionTombstones(deps: PurgeDeps & { pool: Queryable }): IngestionTombstones {
  const { pool } = deps;
  return {
    async deletedAmong(projectId, traceIds, since) {
      const { rows } = await pool.query<{ as_of: Date; ids: string[] | null }>(
        `SELECT clock_timestamp() AS as_of,
           (SELECT array_agg(trace_id) FROM trace_tombstones
            WHERE project_id = $1 AND (trace_id = '' OR trace_id = ANY($2))
              AND ($3::timestamptz IS NULL OR deleted_at >= $3)) AS ids`,
        [projectId, traceIds, since ? new Date(since.getTime() - COMMIT_MARGIN_MS) : null],
      );
      const ids = rows[0]!.ids ?? [];
      const project = ids.includes(PROJECT_TOMBSTONE);
      return { deleted: new Set(project ? traceIds : ids), project, asOf: rows[0]!.as_of };
    },
    purge: (projectId, traceIds) => purgeTraces(deps, projectId, { all: false, traceIds }),
  };
}

/**
 * The tombstones of a process that copies rows between analytics tables in statements (a backfill
 * step's chunks, the propagation's): each statement runs with every tombstone known as parameters
 * (`notTombstoned` in its SQL), and once it is acknowledged, the rows of tombstones recorded
 * meanwhile are deleted again (the ordering argument above). Statements may run side by side.
 */
export class TombstoneGuard {
  readonly #pool: Queryable;
  readonly #purge: PurgeDeps;
  readonly #extraTables: readonly string[];
  readonly #known = new Map<string, Tombstone>();
  #asOf: Date | undefined;

  constructor(pool: Queryable, purge: PurgeDeps, extraTables: readonly string[] = []) {
    this.#pool = pool;
    this.#purge = purge;
    this.#extraTables = extraTables;
  }

  /** The whole record once, then only what was recorded since the last read. */
  async #refresh(): Promise<void> {
    const since = this.#asOf && new Date(this.#asOf.getTime() - COMMIT_MARGIN_MS);
    const { tombstones, asOf } = await readTombstones(this.#pool, since);
    for (const t of tombstones) this.#known.set(tombstoneKey(t), t);
    if (!this.#asOf || asOf > this.#asOf) this.#asOf = asOf;
  }

  /** Runs one copying statement with the tombstones' parameters, then deletes what it brought back. */
  async run(statement: (params: Record<string, unknown>) => Promise<unknown>): Promise<void> {
    await this.#refresh();
    const ran = new Set(this.#known.keys());
    const params = tombstoneParams(this.#known.values());
    // The client sends a tuple only as a TupleParam (a plain array would be an Array).
    await statement({
      ...params,
      tombstoned_traces: params.tombstoned_traces.map((pair) => new TupleParam(pair)),
    });
    await this.#refresh();
    const late = lateTombstones(ran, this.#known.values());
    for (const [projectId, target] of byProject(late))
      await purgeTraces(this.#purge, projectId, target, this.#extraTables);
  }
}
