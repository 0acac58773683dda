/**
 * Masks what an accepted write carries from the producer (inputs, outputs, metadata, tool calls,
 * score comments) before it goes anywhere: the ingestion log, the tables, and so every export and
 * backup made of them. Every ingestion path (batch and legacy endpoints, OTLP over HTTP and gRPC,
 * the scores API) reaches the store through one IngestionWrite, so masking it covers them all.
 */

import type { IngestionWrite } from '../ingestion/write.ts';
import { LegacyChanges } from '../write-model/changes.ts';
import type { Row } from '../write-model/records.ts';
import type { Masker } from './masker.ts';

/** The producer's content in a body of the batch API (traces and observations). */
const BODY_FIELDS = ['input', 'output', 'metadata'] as const;
/** Texts of an `events_full` row (JSON or plain). */
const EVENT_TEXTS = ['input', 'output', 'experiment_item_expected_output'] as const;
/** Lists of texts of an `events_full` row. */
const EVENT_TEXT_LISTS = [
  'metadata_values',
  'experiment_metadata_values',
  'experiment_item_metadata_values',
  'tool_calls',
] as const;

function maskBody<P extends object>(m: Masker, patch: P): P {
  const out: Record<string, unknown> = { ...(patch as Record<string, unknown>) };
  for (const f of BODY_FIELDS) if (out[f] != null) out[f] = m.value(out[f]);
  return out as P;
}

/** A stored map of texts (metadata serialized per key) with each value masked. */
function maskTextMap(m: Masker, map: unknown): unknown {
  if (!map || typeof map !== 'object' || Array.isArray(map)) return map;
  return Object.fromEntries(
    Object.entries(map).map(([k, v]) => [k, typeof v === 'string' ? m.jsonText(v) : m.value(v)]),
  );
}

export function maskEventRow(m: Masker, row: Row): Row {
  const out: Row = { ...row };
  for (const f of EVENT_TEXTS) {
    const v = out[f];
    if (typeof v === 'string' && v !== '') out[f] = m.jsonText(v);
  }
  for (const f of EVENT_TEXT_LISTS) {
    const v = out[f];
    if (Array.isArray(v)) out[f] = v.map((x) => (typeof x === 'string' ? m.jsonText(x) : m.value(x)));
  }
  out['tool_definitions'] = maskTextMap(m, out['tool_definitions']);
  return out;
}

function maskScore(m: Masker, row: Row): Row {
  const out: Row = { ...row, metadata: maskTextMap(m, row['metadata']) };
  if (typeof out['comment'] === 'string') out['comment'] = m.text(out['comment']);
  return out;
}

/** The write with its content masked; the write itself is left as it was. */
export function maskWrite(m: Masker, w: IngestionWrite): IngestionWrite {
  const changes = new LegacyChanges();
  for (const [id, list] of w.changes.traces)
    changes.traces.set(
      id,
      list.map((c) => ({ ...c, patch: maskBody(m, c.patch) })),
    );
  for (const [id, list] of w.changes.observations)
    changes.observations.set(
      id,
      list.map((c) => ({ ...c, patch: maskBody(m, c.patch) })),
    );
  return {
    ...w,
    changes,
    scores: w.scores.map((r) => maskScore(m, r)),
    events: w.events.map((r) => maskEventRow(m, r)),
  };
}
