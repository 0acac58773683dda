/**
 * The events tables' side of GenAI log content. A span and the log events of its model call may
 * arrive in either order, in different requests, on different processes. Each write first inserts
 * what it brings (the span's row, or the records as EVENT rows under their span) and only then
 * reads the other side: whichever write comes second sees both and writes the span's row again with
 * the content (both may: the content is a function of the stored records, so they write the same).
 */
import { parseJsonish } from '../otel/attributes.ts';
import { GENAI_CONTENT_EVENTS, type GenAiRecord, genAiContent } from '../otel/genai-log-content.ts';
import { isoToMicros } from '../otel/time.ts';
import { mergedVersion, type Row } from '../write-model/records.ts';
import type { IngestionStore, SpanRef } from '../write-model/store.ts';
import { chTime } from '../write-model/time.ts';

/** A stored EVENT row (name, start_time, input, metadata) read back as the record it was made from. */
export function recordOfEventRow(row: Row): GenAiRecord {
  const names = (row['metadata_names'] as string[] | undefined) ?? [];
  const values = (row['metadata_values'] as string[] | undefined) ?? [];
  const at = names.indexOf('attributes');
  const attributes = at >= 0 ? parseJsonish(values[at]) : undefined;
  const input = String(row['input'] ?? '');
  const micros = isoToMicros(String(row['start_time'] ?? '')) ?? 0n;
  return {
    name: String(row['name'] ?? ''),
    timeUnixNano: String(micros * 1000n),
    body: input === '' ? null : (parseJsonish(input) ?? input),
    attributes:
      typeof attributes === 'object' && attributes !== null ? (attributes as GenAiRecord['attributes']) : {},
  };
}

/**
 * The span rows to write again: each span row with the content of its stored GenAI records, when
 * that changes it. The new row's version is newer than the stored one, so it replaces it.
 */
export function filledRows(spans: Row[], records: Row[], now: number): Row[] {
  const bySpan = new Map<string, Row[]>();
  for (const r of records) {
    const key = `${String(r['trace_id'])}/${String(r['parent_span_id'])}`;
    bySpan.set(key, [...(bySpan.get(key) ?? []), r]);
  }
  const out: Row[] = [];
  for (const span of spans) {
    const content = genAiContent(
      (bySpan.get(`${String(span['trace_id'])}/${String(span['span_id'])}`) ?? []).map(recordOfEventRow),
    );
    if (!content) continue;
    const next: Row = { ...span };
    if (content.input !== null) next['input'] = content.input;
    if (content.output !== null) next['output'] = content.output;
    if (content.toolCalls.length > 0) {
      next['tool_calls'] = content.toolCalls;
      next['tool_call_names'] = content.toolCallNames;
    }
    const changed = ['input', 'output', 'tool_calls'].some(
      (k) => JSON.stringify(next[k]) !== JSON.stringify(span[k]),
    );
    if (!changed) continue;
    const version = chTime(mergedVersion(now, [span]), 6);
    out.push({ ...next, event_ts: version, updated_at: version });
  }
  return out;
}

/** Reads the spans and their GenAI records and writes back the spans their content changes. */
export async function fillGenAiContent(
  store: IngestionStore,
  projectId: string,
  spans: SpanRef[],
  now: number,
): Promise<void> {
  if (spans.length === 0) return;
  const sources = await store.genAiSources(projectId, spans, GENAI_CONTENT_EVENTS);
  const rows = filledRows(sources.spans, sources.records, now);
  if (rows.length > 0) await store.insert('events_full', rows);
}
