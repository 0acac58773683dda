/**
 * Per-project integrations, pure: the reference's blob-storage integration request and response
 * shapes (`blob-storage-integrations.yml`), the windows an integration delivers (aligned to its
 * frequency, each due a lag after it closes, as the reference's 20-minute buffer), the sync
 * status it reports, the object key of each window and source, and the PostHog capture events of
 * enriched observations (the reference's `langfuse observation` event: deterministic UUID v5 per
 * observation, the user as distinct id with `$set`, else an anonymous event).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ModeSettings } from '../../contract/write-modes.ts';
import { isoDateTime, parseIsoDateTime } from '../../kernel/iso-datetime.ts';
import { type ExportSource, type ExportWindow, extensionOf, sourceRefusal, stamp } from '../exports/rules.ts';
import { FIELD_GROUPS as READ_FIELD_GROUPS } from '../reads/observations.ts';
import { chTimeToIso } from '../write-model/time.ts';

export const BLOB_TYPES = ['S3', 'S3_COMPATIBLE', 'AZURE_BLOB_STORAGE'] as const;
export const FILE_TYPES = ['JSON', 'CSV', 'JSONL', 'PARQUET'] as const;
export const EXPORT_MODES = ['FULL_HISTORY', 'FROM_TODAY', 'FROM_CUSTOM_DATE'] as const;
export const FREQUENCIES = ['every_20_minutes', 'hourly', 'daily', 'weekly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];
export const BLOB_SOURCES = [
  'LEGACY_TRACES_OBSERVATIONS',
  'OBSERVATIONS_V2',
  'LEGACY_TRACES_AND_ENRICHED_OBSERVATIONS',
] as const;
export type BlobSource = (typeof BLOB_SOURCES)[number];
/** The observation field groups of the reads, and the reference's export-only `tools`. */
export const FIELD_GROUPS = [...READ_FIELD_GROUPS, 'tools'] as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const LENGTH: Record<Frequency, number> = {
  every_20_minutes: 20 * MINUTE,
  hourly: HOUR,
  daily: DAY,
  weekly: 7 * DAY,
};
/** A window is delivered this long after it closes, so that late spans land in it first. */
export const DELIVERY_LAG_MS = 20 * MINUTE;
/** Weekly windows start on Mondays (1970-01-05), 00:00 UTC. */
const WEEK_ORIGIN = 4 * DAY;
/** The reference's custom start date may lie up to 27 hours ahead (time zones). */
const START_DATE_TOLERANCE_MS = 27 * HOUR;

const alignedStart = (f: Frequency, at: number) => {
  const origin = f === 'weekly' ? WEEK_ORIGIN : 0;
  return Math.floor((at - origin) / LENGTH[f]) * LENGTH[f] + origin;
};

/**
 * The next window to deliver from `checkpoint`, or undefined when none is due at `now`. It ends
 * at the next aligned boundary; from the epoch (a full history) one window catches up to the last
 * closed boundary instead of walking every empty window since 1970.
 */
export function nextWindow(f: Frequency, checkpoint: number, now: number): ExportWindow | undefined {
  const closed = alignedStart(f, now - DELIVERY_LAG_MS);
  if (checkpoint >= closed) return undefined;
  const end = checkpoint === 0 ? closed : Math.min(alignedStart(f, checkpoint) + LENGTH[f], closed);
  return { start: checkpoint, end };
}

/** When the window after `checkpoint` becomes due. */
export const nextSyncAt = (f: Frequency, checkpoint: number) =>
  alignedStart(f, checkpoint) + LENGTH[f] + DELIVERY_LAG_MS;

/** The first checkpoint of a new integration. */
export function initialCheckpoint(
  mode: (typeof EXPORT_MODES)[number],
  startDate: number | null,
  now: number,
) {
  if (mode === 'FULL_HISTORY') return 0;
  if (mode === 'FROM_CUSTOM_DATE' && startDate !== null) return startDate;
  return Math.floor(now / DAY) * DAY;
}

/** The internal export sources behind an integration's source; scores go with every one of them. */
export const SOURCES_OF: Record<BlobSource, ExportSource[]> = {
  LEGACY_TRACES_OBSERVATIONS: ['LEGACY_TRACES_OBSERVATIONS', 'SCORES'],
  OBSERVATIONS_V2: ['ENRICHED_OBSERVATIONS', 'SCORES'],
  LEGACY_TRACES_AND_ENRICHED_OBSERVATIONS: ['LEGACY_TRACES_OBSERVATIONS', 'ENRICHED_OBSERVATIONS', 'SCORES'],
};

/** Why this deployment cannot serve `source`, or undefined. */
export const blobSourceRefusal = (source: BlobSource, settings: ModeSettings) =>
  SOURCES_OF[source].map((s) => sourceRefusal(s, settings)).find((r) => r !== undefined);

/** The reference's default: the legacy tables where they are written, else the enriched observations. */
export const defaultBlobSource = (settings: ModeSettings): BlobSource =>
  blobSourceRefusal('LEGACY_TRACES_OBSERVATIONS', settings)
    ? 'OBSERVATIONS_V2'
    : 'LEGACY_TRACES_OBSERVATIONS';

const FOLDER: Record<ExportSource, string> = {
  LEGACY_TRACES_OBSERVATIONS: 'traces_observations',
  ENRICHED_OBSERVATIONS: 'observations_v2',
  SCORES: 'scores',
};

/** `<prefix><projectId>/<source>/<start>_<end>.<ext>[.gz]`: one key per window and source, rewritten on a retry. */
export function integrationKey(
  i: { prefix: string; projectId: string; fileType: (typeof FILE_TYPES)[number]; compressed: boolean },
  source: ExportSource,
  w: ExportWindow,
): string {
  const gz = i.compressed && i.fileType !== 'PARQUET' ? '.gz' : '';
  return `${i.prefix}${i.projectId}/${FOLDER[source]}/${stamp(w.start)}_${stamp(w.end)}.${extensionOf(i.fileType)}${gz}`;
}

/** Object key segments: relative, no `.`/`..`, ending with `/` (the reference requires the slash). */
const keyPrefix = z
  .string()
  .max(200)
  .regex(/^([A-Za-z0-9._-]+\/)*$/, 'must be path segments of A-Z a-z 0-9 . _ - each ending with /')
  .refine((p) => p.split('/').every((s) => s !== '.' && s !== '..'), 'must not hold a . or .. segment');

export const upsertBlobRequest = z
  .object({
    projectId: z.string().min(1),
    type: z.enum(BLOB_TYPES),
    bucketName: z.string().min(1).max(255),
    endpoint: z.url().nullish(),
    region: z.string().min(1).max(100),
    accessKeyId: z.string().min(1).max(500).nullish(),
    secretAccessKey: z.string().min(1).max(2000).nullish(),
    prefix: keyPrefix.nullish(),
    exportFrequency: z.enum(FREQUENCIES),
    enabled: z.boolean(),
    forcePathStyle: z.boolean(),
    fileType: z.enum(FILE_TYPES),
    exportMode: z.enum(EXPORT_MODES),
    exportStartDate: isoDateTime().nullish(),
    compressed: z.boolean().nullish(),
    exportSource: z.enum(BLOB_SOURCES).nullish(),
    exportFieldGroups: z.array(z.enum(FIELD_GROUPS)).nullish(),
  })
  .superRefine((b, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (b.type === 'AZURE_BLOB_STORAGE')
      issue('type', 'AZURE_BLOB_STORAGE is not supported by this deployment: use S3 or S3_COMPATIBLE');
    if (b.type === 'S3_COMPATIBLE' && !b.endpoint) issue('endpoint', 'is required for S3_COMPATIBLE');
    if (!b.accessKeyId !== !b.secretAccessKey)
      issue('secretAccessKey', 'accessKeyId and secretAccessKey are given together or not at all');
    if (b.exportMode === 'FROM_CUSTOM_DATE' && !b.exportStartDate)
      issue('exportStartDate', 'is required when exportMode is FROM_CUSTOM_DATE');
    if (b.exportFieldGroups && !b.exportSource)
      issue('exportSource', 'is required when exportFieldGroups is given');
    // Every column is exported: a narrower selection would be accepted and not honoured.
    if (
      b.exportFieldGroups &&
      b.exportFieldGroups.length > 0 &&
      b.exportFieldGroups.length < FIELD_GROUPS.length
    )
      issue('exportFieldGroups', 'this deployment exports every field group: omit it, send [] or all groups');
  });
export type UpsertBlobRequest = z.output<typeof upsertBlobRequest>;

/** Why `exportStartDate` is refused at `now`, or undefined. */
export function startDateProblem(b: UpsertBlobRequest, now: number): string | undefined {
  if (!b.exportStartDate) return undefined;
  return parseIsoDateTime(b.exportStartDate)! > now + START_DATE_TOLERANCE_MS
    ? 'must not be in the future (27 hours of tolerance)'
    : undefined;
}

export const SYNC_STATUSES = ['idle', 'running', 'queued', 'up_to_date', 'disabled', 'error'] as const;

/** The reference's sync status (running is not tracked: a pass delivers a window in one go). */
export function syncStatus(
  i: {
    enabled: boolean;
    lastError: string | null;
    lastSyncAt: number | null;
    checkpoint: number;
    frequency: Frequency;
  },
  now: number,
): (typeof SYNC_STATUSES)[number] {
  if (!i.enabled) return 'disabled';
  if (i.lastError !== null) return 'error';
  const due = nextWindow(i.frequency, i.checkpoint, now) !== undefined;
  if (i.lastSyncAt === null) return due ? 'queued' : 'idle';
  return due ? 'queued' : 'up_to_date';
}

export const upsertPostHogRequest = z.object({
  projectId: z.string().min(1),
  /** The reference's field names (its settings page): the PostHog host and the project API key. */
  posthogHostname: z.url().refine((u) => /^https?:\/\//.test(u), 'must be an http or https URL'),
  posthogProjectApiKey: z.string().min(1).max(500),
  enabled: z.boolean(),
});

/** An enriched observation as the analytics store returns it for PostHog (sources of the properties). */
export interface AnalyticsObservation {
  id: string;
  trace_id: string;
  name: string;
  trace_name: string;
  /** `start_time` as the store prints it (UTC). */
  started_at: string;
  type: string;
  level: string;
  version: string;
  release: string;
  environment: string;
  user_id: string;
  session_id: string;
  tags: string[];
  provided_model_name: string;
  total_cost: string | number | null;
  latency: number | null;
  time_to_first_token: number | null;
  input_tokens: string | number | null;
  output_tokens: string | number | null;
  total_tokens: string | number | null;
  posthog_session_id: string;
}

/** One event of PostHog's capture API (`POST /batch/`). */
export interface CaptureEvent {
  event: string;
  distinct_id: string;
  timestamp: string;
  uuid: string;
  properties: Record<string, unknown>;
}

const POSTHOG_UUID_NAMESPACE = '0f6c91df-d035-4813-b838-9741ba38ef0b';

/** RFC 4122 version 5 (SHA-1, name-based) UUID. */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const numberOrNull = (v: string | number | null) => (v === null || v === '' ? null : Number(v));
const blankToNull = (v: string) => (v === '' ? null : v);
/** The store's `YYYY-MM-DD hh:mm:ss.ffffff` (UTC) as ISO 8601, to the millisecond. */
const isoOf = (t: string) => chTimeToIso(t.slice(0, 23));

/** The reference's `langfuse observation` event of one enriched observation. */
export function observationEvent(
  o: AnalyticsObservation,
  project: { id: string; name: string },
  baseUrl: string,
): CaptureEvent {
  const uuid = uuidV5(`${project.id}-${o.id}`, POSTHOG_UUID_NAMESPACE);
  const userId = blankToNull(o.user_id);
  const userUrl = userId ? `${baseUrl}/project/${project.id}/users/${encodeURIComponent(userId)}` : undefined;
  return {
    event: 'langfuse observation',
    distinct_id: userId ?? uuid,
    timestamp: isoOf(o.started_at),
    uuid,
    properties: {
      langfuse_observation_name: o.name,
      langfuse_trace_name: blankToNull(o.trace_name),
      langfuse_trace_id: o.trace_id,
      langfuse_url: `${baseUrl}/project/${project.id}/traces/${encodeURIComponent(o.trace_id)}?observation=${encodeURIComponent(o.id)}`,
      ...(userUrl ? { langfuse_user_url: userUrl } : {}),
      langfuse_id: o.id,
      langfuse_cost_usd: numberOrNull(o.total_cost),
      langfuse_input_units: numberOrNull(o.input_tokens),
      langfuse_output_units: numberOrNull(o.output_tokens),
      langfuse_total_units: numberOrNull(o.total_tokens),
      langfuse_session_id: blankToNull(o.session_id),
      langfuse_project_id: project.id,
      langfuse_project_name: project.name,
      langfuse_user_id: userId,
      langfuse_latency: o.latency,
      langfuse_time_to_first_token: o.time_to_first_token,
      langfuse_release: blankToNull(o.release),
      langfuse_version: blankToNull(o.version),
      langfuse_model: blankToNull(o.provided_model_name),
      langfuse_level: o.level,
      langfuse_type: o.type,
      langfuse_tags: o.tags,
      langfuse_environment: o.environment,
      langfuse_event_version: '1.0.0',
      $session_id: blankToNull(o.posthog_session_id),
      // Identified users get their profile link; others are anonymous events (cheaper in PostHog).
      ...(userUrl ? { $set: { langfuse_user_url: userUrl } } : { $process_person_profile: false }),
    },
  };
}

/** Whether a failed capture request is worth another attempt: overload, rate limit, server error. */
export const retryableStatus = (status: number) => status === 429 || status >= 500;

/** The wait before attempt `attempt` (1-based retries): doubling from `baseMs`, at most 30 s. */
export const backoffMs = (attempt: number, baseMs: number) => Math.min(baseMs * 2 ** (attempt - 1), 30_000);
