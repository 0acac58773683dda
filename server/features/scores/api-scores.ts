/**
 * `POST /api/public/scores` as the SDKs use it: one score (JS/TS SDKs' generated client) or an
 * array of scores (Python SDK 5.x, for every score including experiment evaluators'). Each score
 * is checked on its own, against its score config when it names one; the accepted ones are
 * written to the analytics `scores` table (every write mode keeps writing scores) and
 * acknowledged only once they are durable (in the ingestion log, or the store without one).
 */
import { z } from 'zod';
import { ISO_DATETIME_MESSAGE, parseIsoDateTime } from '../../kernel/iso-datetime.ts';
import { type AcceptDeps, acceptWrite } from '../ingestion/write.ts';
import { describeIssues, type ScoreBody, scoreBody } from '../write-model/bodies.ts';
import { LegacyChanges } from '../write-model/changes.ts';
import { type Attribution, type Row, scoreRow } from '../write-model/records.ts';
import type { IngestionStore } from '../write-model/store.ts';
import { chTime } from '../write-model/time.ts';
import { checkAgainstConfig, type ScoreConfig } from './configs.ts';

/** A timestamp with an explicit offset: a naive one would silently mean server-local time. */
const timestamp = z
  .string()
  .regex(/(Z|[+-]\d{2}:?\d{2})$/i, 'must be an ISO 8601 date-time with a UTC offset')
  .refine((s) => parseIsoDateTime(s) !== null, ISO_DATETIME_MESSAGE)
  .nullish();

export type ParsedScore =
  | { ok: true; body: ScoreBody; timestamp: string | null }
  | { ok: false; message: string };

/** Validates one score of the request: shape, then the endpoint's own rules on `source`. */
export function parseApiScore(item: unknown): ParsedScore {
  const parsed = scoreBody.safeParse(item);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  const ts = timestamp.safeParse((item as { timestamp?: unknown }).timestamp);
  if (!ts.success) return { ok: false, message: `timestamp: ${describeIssues(ts.error)}` };
  const body = parsed.data;
  if (body.source === 'EVAL')
    return { ok: false, message: 'source: EVAL is reserved for evaluators of the service' };
  if (body.source === 'ANNOTATION' && !body.configId && body.dataType !== 'CORRECTION') {
    return {
      ok: false,
      message: 'configId: ANNOTATION scores need a score config (unless dataType is CORRECTION)',
    };
  }
  return { ok: true, body, timestamp: ts.data ?? null };
}

/** The row of an accepted score; a config decides its data type and stored value and label. */
export function apiScoreRow(
  body: ScoreBody,
  at: string,
  config: ScoreConfig | undefined,
  rc: { projectId: string; now: number },
  attribution: Attribution,
): { ok: true; row: Row } | { ok: false; message: string } {
  const row = scoreRow(body, at, rc, attribution);
  if (!config) return { ok: true, row };
  const checked = checkAgainstConfig(body, config);
  if (!checked.ok) return { ok: false, message: `${checked.field}: ${checked.message}` };
  const { dataType, value, stringValue } = checked.resolved;
  return { ok: true, row: { ...row, data_type: dataType, value, string_value: stringValue } };
}

export interface ScoreWriteDeps extends AcceptDeps {
  projectId: string;
  attribution: Attribution;
  /** The project's score config with this id, if any. */
  findConfig: (id: string) => Promise<ScoreConfig | undefined>;
  /** The signed-in user who scored from the UI (the API has none). */
  authorUserId?: string;
  now?: number;
}

export interface ScoreWriteResult {
  ids: string[];
  errors: { index: number; message: string }[];
}

export async function writeApiScores(items: unknown[], deps: ScoreWriteDeps): Promise<ScoreWriteResult> {
  const now = deps.now ?? Date.now();
  const rc = { projectId: deps.projectId, now };
  const rows: Row[] = [];
  const errors: ScoreWriteResult['errors'] = [];
  const configs = new Map<string, Promise<ScoreConfig | undefined>>();
  for (const [index, item] of items.entries()) {
    const parsed = parseApiScore(item);
    if (!parsed.ok) {
      errors.push({ index, message: parsed.message });
      continue;
    }
    const { body } = parsed;
    let config: ScoreConfig | undefined;
    if (body.configId) {
      let pending = configs.get(body.configId);
      if (!pending) {
        pending = deps.findConfig(body.configId);
        configs.set(body.configId, pending);
      }
      config = await pending;
      if (!config) {
        errors.push({ index, message: `configId: score config ${body.configId} not found` });
        continue;
      }
    }
    const built = apiScoreRow(
      body,
      parsed.timestamp ?? new Date(now).toISOString(),
      config,
      rc,
      deps.attribution,
    );
    if (built.ok)
      rows.push(deps.authorUserId ? { ...built.row, author_user_id: deps.authorUserId } : built.row);
    else errors.push({ index, message: built.message });
  }
  await acceptWrite(
    {
      projectId: deps.projectId,
      receivedAt: now,
      attribution: deps.attribution,
      // Scores go to `scores` in every mode; nothing else is written.
      targets: { legacy: false, staging: false, events: false },
      virtualRoots: false,
      changes: new LegacyChanges(),
      scores: rows,
      events: [],
    },
    deps,
  );
  return { ids: rows.map((r) => String(r['id'])), errors };
}

/**
 * Deletes a score by writing its newest version with `is_deleted = 1`: the replacing merge keeps
 * that version, and every read (`FINAL`) drops it. False when the project has no such score.
 */
export async function deleteApiScore(
  store: IngestionStore,
  projectId: string,
  id: string,
  now = Date.now(),
): Promise<boolean> {
  const [current] = await store.fetchByIds('scores', projectId, [id]);
  if (!current) return false;
  await store.insert('scores', [
    { ...current, is_deleted: 1, updated_at: chTime(now), event_ts: chTime(now) },
  ]);
  return true;
}
