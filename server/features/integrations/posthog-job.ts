/**
 * The PostHog export of enriched observations: each enabled integration sends its due hourly
 * windows of `events_full`, oldest first, to PostHog's capture API (`POST <host>/batch/` with the
 * project API key and a batch of events), in batches. A batch answered 429 or 5xx (or not at all)
 * is sent again after a doubling wait, a bounded number of times; the window's checkpoint moves
 * only after every batch was accepted. A window cut short is sent again from its start: each
 * event carries the same UUID v5 every time, which PostHog deduplicates on.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { LlmSettings } from '../../kernel/config/env.ts';
import { postJson } from '../llm-connections/guarded-http.ts';
import { decryptSecret } from '../llm-connections/secrets.ts';
import {
  type AnalyticsObservation,
  backoffMs,
  type CaptureEvent,
  nextWindow,
  observationEvent,
  retryableStatus,
} from './rules.ts';
import { advanceCheckpoint, deliverEach, listPostHogIntegrations, type PostHogIntegration } from './store.ts';

const QUERY = `
SELECT span_id AS id, trace_id, name, trace_name, toString(start_time, 'UTC') AS started_at, toString(type) AS type,
  toString(level) AS level, version, release, toString(environment) AS environment, user_id, session_id, tags,
  provided_model_name,
  if(mapContains(cost_details, 'total'), toFloat64(cost_details['total']), NULL) AS total_cost,
  if(end_time IS NULL, NULL, dateDiff('millisecond', start_time, end_time) / 1000) AS latency,
  if(completion_start_time IS NULL, NULL, dateDiff('millisecond', start_time, completion_start_time) / 1000)
    AS time_to_first_token,
  if(mapContains(usage_details, 'input'), usage_details['input'], NULL) AS input_tokens,
  if(mapContains(usage_details, 'output'), usage_details['output'], NULL) AS output_tokens,
  if(mapContains(usage_details, 'total'), usage_details['total'], NULL) AS total_tokens,
  mapFromArrays(arrayReverse(metadata_names), arrayReverse(metadata_values))['$posthog_session_id']
    AS posthog_session_id
FROM events_full FINAL
WHERE project_id = {projectId:String} AND is_deleted = 0
  AND start_time >= parseDateTime64BestEffort({from:String}, 6) AND start_time < parseDateTime64BestEffort({to:String}, 6)
ORDER BY start_time, trace_id, span_id`;

const REQUEST_TIMEOUT_MS = 30_000;

export interface PostHogRunOptions {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  llm: LlmSettings;
  /** The UI's public URL, for the events' links back to the trace and user. */
  baseUrl: string;
  now?: () => number;
  windowsPerPass?: number;
  batchSize?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
}

export interface PostHogPassResult {
  windows: number;
  events: number;
  batches: number;
  failed: { projectId: string; error: string }[];
}

/** Sends one batch, retrying overload and server errors; throws with the last status otherwise. */
async function sendBatch(o: PostHogRunOptions, url: URL, apiKey: string, batch: CaptureEvent[]) {
  const attempts = o.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt += 1) {
    let problem: string;
    try {
      const res = await postJson(o.llm, url, {}, { api_key: apiKey, batch }, REQUEST_TIMEOUT_MS);
      if (res.status >= 200 && res.status < 300) return;
      // The answer's body is not repeated: it may echo what was sent.
      problem = `PostHog answered ${res.status} to POST ${url.pathname}`;
      if (!retryableStatus(res.status)) throw new Error(problem);
    } catch (err) {
      if ((err as Error).message.startsWith('PostHog answered')) throw err;
      problem = `PostHog unreachable: ${(err as Error).message}`;
      if ((err as Error).name === 'AddressRefused') throw new Error(problem);
    }
    if (attempt >= attempts) throw new Error(`${problem} (after ${attempts} attempts)`);
    await new Promise((r) => setTimeout(r, backoffMs(attempt, o.retryBaseMs ?? 1000)));
  }
}

async function runOne(o: PostHogRunOptions, i: PostHogIntegration, r: PostHogPassResult) {
  if (!o.llm.encryptionKey) throw new Error('the server has no encryption key to open the PostHog API key');
  const apiKey = decryptSecret(o.llm.encryptionKey, i.apiKeyEncrypted);
  const url = new URL('/batch/', i.host);
  const { rows } = await o.pool.query<{ name: string }>('SELECT name FROM projects WHERE id = $1', [
    i.projectId,
  ]);
  const project = { id: i.projectId, name: rows[0]?.name ?? '' };
  let checkpoint = i.checkpoint.getTime();
  for (let n = 0; n < (o.windowsPerPass ?? 24); n += 1) {
    const w = nextWindow('hourly', checkpoint, o.now?.() ?? Date.now());
    if (!w) return;
    const rs = await o.analytics.query({
      query: QUERY,
      format: 'JSONEachRow',
      query_params: {
        projectId: i.projectId,
        from: new Date(w.start).toISOString(),
        to: new Date(w.end).toISOString(),
      },
    });
    let batch: CaptureEvent[] = [];
    let sent = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      await sendBatch(o, url, apiKey, batch);
      sent += batch.length;
      r.batches += 1;
      batch = [];
    };
    for await (const chunk of rs.stream<AnalyticsObservation>()) {
      for (const row of chunk) {
        batch.push(observationEvent(row.json(), project, o.baseUrl));
        if (batch.length >= (o.batchSize ?? 500)) await flush();
      }
    }
    await flush();
    if (
      !(await advanceCheckpoint(
        o.pool,
        'posthog_integrations',
        i.projectId,
        new Date(w.start),
        new Date(w.end),
        sent,
      ))
    )
      return;
    checkpoint = w.end;
    r.windows += 1;
    r.events += sent;
  }
}

/** One pass over every enabled PostHog integration. */
export async function runPostHogPass(o: PostHogRunOptions): Promise<PostHogPassResult> {
  const r: PostHogPassResult = { windows: 0, events: 0, batches: 0, failed: [] };
  r.failed = await deliverEach(
    o.pool,
    'posthog_integrations',
    await listPostHogIntegrations(o.pool),
    (i) => i.projectId,
    (i) => runOne(o, i, r),
  );
  return r;
}
