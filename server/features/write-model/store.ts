/** The analytics-store operations ingestion needs: a thin adapter over @clickhouse/client. */
import { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings as QuerySettings } from '@clickhouse/client';
import type { ClickHouseSettings } from '../../kernel/config/env.ts';
import { FROM_OTLP } from '../events/mapping.ts';
import { Coalescer, GroupCommit } from './group-commit.ts';
import type { Row } from './records.ts';
import {
  EVENTS_TABLES,
  type TraceEventAssignments,
  traceEventsUpdateStatement,
} from './trace-events-update.ts';

export interface IngestionStore {
  /**
   * Inserts rows; resolves only once the store has acknowledged the write. Rows that concurrent
   * requests insert into the same table may share one insert (group commit).
   */
  insert(table: string, rows: Row[]): Promise<void>;
  /** Current rows (after replacing merge) of `scores` for these ids. */
  fetchByIds(table: 'scores', projectId: string, ids: string[]): Promise<Row[]>;
  /**
   * Current rows of these traces and observations, read together in one statement: the
   * read-merge-write of a request needs both.
   */
  fetchEntities(projectId: string, traceIds: string[], observationIds: string[]): Promise<EntityRows>;
  /**
   * Which of these traces were made by OTLP spans (an observation carries their resource
   * attributes, the backfill's and the propagation's rule): their root is a span of their own.
   */
  otlpTraceIds(projectId: string, traceIds: string[]): Promise<string[]>;
  /**
   * Applies each trace's field assignments to its events in both events tables, durably; traces
   * without events are left alone.
   */
  updateTraceEvents(projectId: string, updates: [traceId: string, TraceEventAssignments][]): Promise<void>;
  /**
   * The current `events_full` rows of these spans and their events named `eventNames` (EVENT rows
   * whose parent is one of them), read after the caller's own rows were inserted (genai-fill.ts).
   */
  genAiSources(projectId: string, spans: SpanRef[], eventNames: readonly string[]): Promise<GenAiSources>;
}

/** Where a record belongs: the span it was emitted in. */
export interface SpanRef {
  traceId: string;
  spanId: string;
}

export interface GenAiSources {
  spans: Row[];
  records: Row[];
}

export interface EntityRows {
  traces: Row[];
  observations: Row[];
}

type EntityTable = keyof EntityRows;

/** One id a read-merge-write asks for, and its table. */
interface EntityRef {
  table: EntityTable;
  id: string;
}

/**
 * Both tables in one statement. Their columns differ, so each row travels as its own JSONEachRow
 * line (formatRow applies the statement's settings, as the JSONEachRow output would).
 */
const ENTITIES_QUERY = `SELECT 'traces' AS table, formatRowNoNewline('JSONEachRow', *) AS row FROM traces FINAL
WHERE project_id = {projectId:String} AND id IN {traceIds:Array(String)}
UNION ALL
SELECT 'observations' AS table, formatRowNoNewline('JSONEachRow', *) AS row FROM observations FINAL
WHERE project_id = {projectId:String} AND id IN {observationIds:Array(String)}`;

/** Latest version of each row (the replacing merge may not have run yet); deleted rows are left to the caller. */
const LATEST = 'ORDER BY event_ts DESC LIMIT 1 BY trace_id, span_id';
const GENAI_SPANS_QUERY = `SELECT * FROM events_full
WHERE project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)} AND span_id IN {spanIds:Array(String)}
${LATEST}`;
const GENAI_RECORDS_QUERY = `SELECT trace_id, span_id, parent_span_id, name, start_time, input, metadata_names, metadata_values, is_deleted
FROM events_full
WHERE project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}
  AND parent_span_id IN {spanIds:Array(String)} AND type = 'EVENT' AND name IN {names:Array(String)}
${LATEST}`;

/** Settings that make reads return numbers as JSON numbers, so rows can be written back as read. */
const READ_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
} as const;

/**
 * COLUMNAR_USE_LIGHTWEIGHT_UPDATE (lightweight `UPDATE` instead of a waited-for mutation) and
 * COLUMNAR_CLUSTER_ENABLED / COLUMNAR_CLUSTER_NAME (updates `ON CLUSTER`).
 */
export type StoreOptions = Pick<
  ClickHouseSettings,
  'useLightweightUpdate' | 'clusterEnabled' | 'clusterName'
>;

/** Rows per shared insert: about 50 MB of generations with a few KB of input and output. */
const GROUP_COMMIT_MAX_ROWS = 10_000;

/**
 * Longest wait of a shared statement for the callers the last one had (see group-commit.ts): the
 * spread of requests answered together coming back (decode, auth, entity locks) on a loaded
 * machine, still below the fixed cost of a statement it saves (a part, two with the events view).
 */
const GROUP_LINGER_MS = 250;

/**
 * Ids per read statement: a longer list (one large request, or many together) is read in several
 * statements of this size, so a statement stays small whatever a request carries.
 */
const GROUP_READ_MAX_IDS = 5_000;

/**
 * Every read by ids: `query` once per slice of GROUP_READ_MAX_IDS ids, with `params(slice)` sent as
 * multipart parameters in the body, not in the URL, which ClickHouse bounds (`http_max_uri_size`);
 * the slices' rows concatenated.
 */
async function readByIds<I, R>(
  client: ClickHouseClient,
  ids: I[],
  query: string,
  params: (slice: I[]) => Record<string, unknown>,
  settings?: QuerySettings,
): Promise<R[]> {
  const out: R[] = [];
  for (let at = 0; at < ids.length; at += GROUP_READ_MAX_IDS) {
    const rs = await client.query({
      query,
      query_params: params(ids.slice(at, at + GROUP_READ_MAX_IDS)),
      use_multipart_params: true,
      format: 'JSONEachRow',
      clickhouse_settings: settings,
    });
    out.push(...(await rs.json<R>()));
  }
  return out;
}

/** Each caller's share of a shared read: the results whose id the caller asked for. */
function shares<T>(callers: string[][], results: T[], idOf: (r: T) => string): T[][] {
  return callers.map((ids) => {
    const wanted = new Set(ids);
    return results.filter((r) => wanted.has(idOf(r)));
  });
}

export function clickhouseStore(client: ClickHouseClient, options: StoreOptions): IngestionStore {
  const inserts = new GroupCommit<Row>(
    async (table, rows) => {
      await client.insert({
        table,
        // A stream: the client encodes the rows as it sends them, a row at a time between other
        // work, instead of one block holding the event loop for every row of the statement.
        values: Readable.from(rows),
        format: 'JSONEachRow',
        // Synchronous insert: the promise resolves after the data is written to the table.
        clickhouse_settings: { async_insert: 0, date_time_input_format: 'best_effort' },
      });
    },
    { maxRows: GROUP_COMMIT_MAX_ROWS, lingerMs: GROUP_LINGER_MS },
  );
  // Reads by id of concurrent requests (each holding its entities' locks) share one query.
  const reads = new Coalescer<string, Row[]>(
    async (key, callers) => {
      const [table, projectId] = JSON.parse(key) as [string, string];
      const rows = await readByIds<string, Row>(
        client,
        [...new Set(callers.flat())],
        `SELECT * FROM ${table} FINAL WHERE project_id = {projectId:String} AND id IN {ids:Array(String)}`,
        (ids) => ({ projectId, ids }),
        READ_SETTINGS,
      );
      return shares(callers, rows, (r) => String(r['id']));
    },
    { maxRows: GROUP_READ_MAX_IDS, lingerMs: GROUP_LINGER_MS },
  );
  // The traces and observations of concurrent read-merge-writes share one query too.
  const entities = new Coalescer<EntityRef, EntityRows>(
    async (projectId, callers) => {
      const refs = new Map(callers.flat().map((r) => [`${r.table}/${r.id}`, r]));
      const idsOf = (slice: EntityRef[], table: EntityTable) =>
        slice.filter((r) => r.table === table).map((r) => r.id);
      const rows = await readByIds<EntityRef, { table: EntityTable; row: string }>(
        client,
        [...refs.values()],
        ENTITIES_QUERY,
        (slice) => ({
          projectId,
          traceIds: idsOf(slice, 'traces'),
          observationIds: idsOf(slice, 'observations'),
        }),
        READ_SETTINGS,
      );
      const found = rows.map((r) => ({
        table: r.table,
        row: JSON.parse(r.row) as Row,
      }));
      return callers.map((refs) => {
        const wanted = new Set(refs.map((r) => `${r.table}/${r.id}`));
        const mine = found.filter((f) => wanted.has(`${f.table}/${String(f.row['id'])}`));
        return {
          traces: mine.filter((f) => f.table === 'traces').map((f) => f.row),
          observations: mine.filter((f) => f.table === 'observations').map((f) => f.row),
        };
      });
    },
    { maxRows: GROUP_READ_MAX_IDS, lingerMs: GROUP_LINGER_MS },
  );
  const otlpTraces = new Coalescer<string, string[]>(
    async (projectId, callers) => {
      const rows = await readByIds<string, { trace_id: string }>(
        client,
        [...new Set(callers.flat())],
        `SELECT DISTINCT trace_id FROM observations
WHERE project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)} AND ${FROM_OTLP('observations')}`,
        (traceIds) => ({ projectId, traceIds }),
      );
      return shares(
        callers,
        rows.map((r) => r.trace_id),
        (id) => id,
      );
    },
    { maxRows: GROUP_READ_MAX_IDS, lingerMs: GROUP_LINGER_MS },
  );
  return {
    insert: (table, rows) => inserts.insert(table, rows),
    async fetchByIds(table, projectId, ids) {
      if (ids.length === 0) return [];
      return reads.submit(JSON.stringify([table, projectId]), ids);
    },
    async fetchEntities(projectId, traceIds, observationIds) {
      if (traceIds.length + observationIds.length === 0) return { traces: [], observations: [] };
      return entities.submit(projectId, [
        ...traceIds.map((id): EntityRef => ({ table: 'traces', id })),
        ...observationIds.map((id): EntityRef => ({ table: 'observations', id })),
      ]);
    },
    async otlpTraceIds(projectId, traceIds) {
      if (traceIds.length === 0) return [];
      return otlpTraces.submit(projectId, traceIds);
    },
    async genAiSources(projectId, spans, eventNames) {
      if (spans.length === 0) return { spans: [], records: [] };
      const params = (slice: SpanRef[]) => ({
        projectId,
        traceIds: [...new Set(slice.map((s) => s.traceId))],
        spanIds: [...new Set(slice.map((s) => s.spanId))],
        names: eventNames,
      });
      const wanted = new Set(spans.map((s) => `${s.traceId}/${s.spanId}`));
      const live = (r: Row) => Number(r['is_deleted']) === 0;
      const [spanRows, records] = await Promise.all([
        readByIds<SpanRef, Row>(client, spans, GENAI_SPANS_QUERY, params, READ_SETTINGS),
        readByIds<SpanRef, Row>(client, spans, GENAI_RECORDS_QUERY, params, READ_SETTINGS),
      ]);
      return {
        spans: spanRows.filter(
          (r) => live(r) && wanted.has(`${String(r['trace_id'])}/${String(r['span_id'])}`),
        ),
        records: records.filter(live),
      };
    },
    async updateTraceEvents(projectId, updates) {
      if (updates.length === 0) return;
      // Most dual traffic is staged: its traces have no events yet, and a mutation would only cost.
      // One read finds the traces that have some, however many the request changed.
      const withEvents = new Set(
        (
          await readByIds<string, { trace_id: string }>(
            client,
            updates.map(([traceId]) => traceId),
            'SELECT DISTINCT trace_id FROM events_full WHERE project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}',
            (traceIds) => ({ projectId, traceIds }),
          )
        ).map((r) => r.trace_id),
      );
      const form = options.useLightweightUpdate ? 'lightweight' : 'mutation';
      const dialect = { cluster: options.clusterEnabled, clusterName: options.clusterName };
      for (const [traceId, assignments] of updates) {
        if (!withEvents.has(traceId)) continue;
        for (const table of EVENTS_TABLES) {
          const { query, params } = traceEventsUpdateStatement(
            table,
            form,
            dialect,
            projectId,
            traceId,
            assignments,
          );
          await client.command({ query, query_params: params });
        }
      }
    },
  };
}
