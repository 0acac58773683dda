/** Which trace an observation is the root of, read from the events table (version 4 reads). */
import type { ClickHouseClient } from '@clickhouse/client';
import { traceOfVirtualRoot } from './rules.ts';

export async function traceRootedAt(
  analytics: ClickHouseClient,
  projectId: string,
  observationId: string,
): Promise<string | undefined> {
  const virtual = traceOfVirtualRoot(observationId);
  if (virtual !== undefined) return virtual;
  const rs = await analytics.query({
    query: `SELECT trace_id FROM events_core
            WHERE project_id = {projectId:String} AND span_id = {id:String} AND parent_span_id = '' LIMIT 1`,
    query_params: { projectId, id: observationId },
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ trace_id: string }>();
  return rows[0]?.trace_id;
}
