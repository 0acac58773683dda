/**
 * The rows of one export window per source, read from the analytics store: the legacy `traces`
 * and `observations` (one row per trace and per observation, the same columns, `kind` telling
 * them apart), the enriched observations of `events_full`, or the scores. A window holds the rows
 * whose time (trace timestamp, observation start, score timestamp) lies in [start, end).
 *
 * JSONL and CSV are rendered here from the rows; Parquet is the analytics store's own `FORMAT
 * Parquet` output of the same query (typed columns, no Parquet library in this process).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { projectTombstones } from '../tombstones/record.ts';
import { type ExportSource, type ExportWindow, type FileFormat, renderRows } from './rules.ts';

/** The window's rows of live traces (a row without a trace, a score of a session, is live). */
const within = (time: string, trace: string) => `project_id = {projectId:String}
  AND ${time} >= parseDateTime64BestEffort({from:String}, 6) AND ${time} < parseDateTime64BestEffort({to:String}, 6)
  AND ifNull(${trace}, '') NOT IN {deletedTraces:Array(String)}`;

const QUERIES: Record<ExportSource, string> = {
  LEGACY_TRACES_OBSERVATIONS: `
SELECT * FROM (
  SELECT 'trace' AS kind, id, id AS trace_id, 'TRACE' AS type, name, timestamp AS start_time,
    CAST(NULL, 'Nullable(DateTime64(3))') AS end_time, CAST(NULL, 'Nullable(String)') AS parent_observation_id,
    user_id, session_id, input, output, toJSONString(metadata) AS metadata
  FROM traces FINAL WHERE ${within('timestamp', 'id')} AND is_deleted = 0
  UNION ALL
  SELECT 'observation' AS kind, id, trace_id, toString(type) AS type, name, start_time, end_time, parent_observation_id,
    CAST(NULL, 'Nullable(String)') AS user_id, CAST(NULL, 'Nullable(String)') AS session_id, input, output,
    toJSONString(metadata) AS metadata
  FROM observations FINAL WHERE ${within('start_time', 'trace_id')} AND is_deleted = 0
) ORDER BY start_time, kind DESC, id`,
  ENRICHED_OBSERVATIONS: `
SELECT span_id AS id, trace_id, parent_span_id, toString(type) AS type, name, start_time, end_time, trace_name,
  user_id, session_id, level, provided_model_name, input, output,
  toJSONString(CAST((metadata_names, metadata_values), 'Map(String, String)')) AS metadata
FROM events_full FINAL WHERE ${within('start_time', 'trace_id')} AND is_deleted = 0
ORDER BY start_time, trace_id, span_id`,
  SCORES: `
SELECT id, timestamp, trace_id, observation_id, name, value, string_value, data_type, source, comment
FROM scores FINAL WHERE ${within('timestamp', 'trace_id')} AND is_deleted = 0
ORDER BY timestamp, id`,
};

const paramsOf = (projectId: string, w: ExportWindow, deletedTraces: string[]) => ({
  projectId,
  from: new Date(w.start).toISOString(),
  to: new Date(w.end).toISOString(),
  deletedTraces,
});

async function windowRows(
  analytics: ClickHouseClient,
  source: ExportSource,
  projectId: string,
  w: ExportWindow,
  deletedTraces: string[],
): Promise<Record<string, unknown>[]> {
  const rs = await analytics.query({
    query: QUERIES[source],
    format: 'JSONEachRow',
    query_params: paramsOf(projectId, w, deletedTraces),
  });
  return rs.json<Record<string, unknown>>();
}

async function windowParquet(
  analytics: ClickHouseClient,
  source: ExportSource,
  projectId: string,
  w: ExportWindow,
  deletedTraces: string[],
): Promise<ExportFile> {
  const query_params = paramsOf(projectId, w, deletedTraces);
  // `exec` hands over the response bytes as they are; `query` would split them into lines.
  const { stream } = await analytics.exec({ query: `${QUERIES[source]}\nFORMAT Parquet`, query_params });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  // The row count only feeds the export's statistics; the file is what the query returned.
  const rs = await analytics.query({
    query: `SELECT count() AS n FROM (${QUERIES[source]})`,
    format: 'JSONEachRow',
    query_params,
  });
  const [counted] = await rs.json<{ n: string }>();
  return { body: Buffer.concat(chunks), rows: Number(counted?.n ?? 0) };
}

export interface ExportFile {
  body: Buffer | string;
  rows: number;
}

/**
 * The file of one export window in `format`, and how many rows it holds: no row of a trace whose
 * deletion was recorded (server/features/tombstones/) before the window is read, also while the deletion
 * is still deleting its rows. One recorded while the window is read is as a deletion after it.
 */
export async function windowFile(
  analytics: ClickHouseClient,
  pool: Pick<pg.Pool, 'query'>,
  source: ExportSource,
  format: FileFormat,
  projectId: string,
  w: ExportWindow,
): Promise<ExportFile> {
  const deleted = await projectTombstones(pool, projectId);
  if (deleted.project) return { body: '', rows: 0 };
  if (format === 'PARQUET') return windowParquet(analytics, source, projectId, w, deleted.traceIds);
  const rows = await windowRows(analytics, source, projectId, w, deleted.traceIds);
  return { body: renderRows(format, rows), rows: rows.length };
}
