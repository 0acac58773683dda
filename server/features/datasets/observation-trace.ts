/**
 * The trace an observation belongs to, for a dataset run item sent with an observation id alone:
 * read from the legacy `observations` table in the modes that write it (in `dual` it holds the
 * observations of SDKs whose spans are still staged), else from `events_core`.
 */
import type { ClickHouseClient } from '@clickhouse/client';

export async function traceOfObservation(
  analytics: ClickHouseClient,
  projectId: string,
  observationId: string,
  legacyTables: boolean,
): Promise<string | undefined> {
  const query = legacyTables
    ? 'SELECT trace_id FROM observations WHERE project_id = {projectId:String} AND id = {id:String} LIMIT 1'
    : 'SELECT trace_id FROM events_core WHERE project_id = {projectId:String} AND span_id = {id:String} LIMIT 1';
  const rs = await analytics.query({
    query,
    query_params: { projectId, id: observationId },
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ trace_id: string }>();
  return rows[0]?.trace_id || undefined;
}
