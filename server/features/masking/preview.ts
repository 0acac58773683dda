/**
 * A dry run of masking rules over a project's most recent observations: which would change, and
 * how they would read. It shows only the masked form of what changed, never the matched text.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { maskEventRow } from './mask-write.ts';
import type { Masker } from './masker.ts';

/** The table the project's observations are read from, as the write mode keeps them. */
export type PreviewSource = 'observations' | 'events_full';

export function previewQuery(source: PreviewSource): string {
  return source === 'observations'
    ? `SELECT id, trace_id, input, output, mapKeys(metadata) AS metadata_names, mapValues(metadata) AS metadata_values
       FROM observations FINAL WHERE project_id = {projectId:String} AND is_deleted = 0
       ORDER BY start_time DESC LIMIT {limit:UInt32}`
    : `SELECT span_id AS id, trace_id, input, output, metadata_names, metadata_values
       FROM events_full WHERE project_id = {projectId:String}
       ORDER BY start_time DESC LIMIT 1 BY span_id LIMIT {limit:UInt32}`;
}

interface PreviewRow {
  id: string;
  trace_id: string;
  input: string | null;
  output: string | null;
  metadata_names: string[];
  metadata_values: string[];
}

export interface PreviewedObservation {
  id: string;
  traceId: string;
  /** The masked form of each field that would change; metadata by key. */
  masked: { input?: string; output?: string; metadata?: Record<string, string> };
}

/** What `masker` would change in `rows`: only the observations and fields it changes. */
export function previewRows(masker: Masker, rows: readonly PreviewRow[]): PreviewedObservation[] {
  const out: PreviewedObservation[] = [];
  for (const r of rows) {
    const after = maskEventRow(masker, {
      input: r.input ?? '',
      output: r.output ?? '',
      metadata_values: r.metadata_values,
    });
    const masked: PreviewedObservation['masked'] = {};
    if (after['input'] !== (r.input ?? '')) masked.input = String(after['input']);
    if (after['output'] !== (r.output ?? '')) masked.output = String(after['output']);
    const values = after['metadata_values'] as string[];
    const changedKeys = r.metadata_names.filter((_, i) => values[i] !== r.metadata_values[i]);
    if (changedKeys.length)
      masked.metadata = Object.fromEntries(changedKeys.map((k) => [k, values[r.metadata_names.indexOf(k)]!]));
    if (Object.keys(masked).length) out.push({ id: r.id, traceId: r.trace_id, masked });
  }
  return out;
}

export async function previewMasking(
  analytics: ClickHouseClient,
  source: PreviewSource,
  projectId: string,
  limit: number,
  masker: Masker | undefined,
): Promise<{ scanned: number; observations: PreviewedObservation[] }> {
  const rs = await analytics.query({
    query: previewQuery(source),
    query_params: { projectId, limit },
    format: 'JSONEachRow',
  });
  const rows = await rs.json<PreviewRow>();
  return { scanned: rows.length, observations: masker ? previewRows(masker, rows) : [] };
}
