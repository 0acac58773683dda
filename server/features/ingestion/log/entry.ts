/**
 * The ingestion log's files: where accepted writes are stored (the requests of a project committed
 * together share one file) and in what form. Keys sort by
 * time, then project: `<prefix>ingestion-log/v1/<yyyy-mm-dd>/<hh>/<projectId>/<ms>-<id>.json.gz`, so
 * one hour of every project, or of one project, is one listing (the sweeper's and the replay's).
 */
import { promisify } from 'node:util';
import { constants, gunzip, gzip } from 'node:zlib';
import { z } from 'zod';
import type { TraceBody } from '../../write-model/bodies.ts';
import { type Change, LegacyChanges, type ObservationChange } from '../../write-model/changes.ts';
import type { Row } from '../../write-model/records.ts';
import type { IngestionWrite } from '../write.ts';

export const LOG_ROOT = 'ingestion-log/v1/';
const MS_DIGITS = 13;

export interface LogKey {
  projectId: string;
  receivedAt: number;
  id: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The folder of one UTC hour (`<root>yyyy-mm-dd/hh/`), optionally of one project in it. */
export function hourFolder(prefix: string, hourStartMs: number, projectId?: string): string {
  const d = new Date(hourStartMs);
  const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const base = `${prefix}${LOG_ROOT}${day}/${pad(d.getUTCHours())}/`;
  return projectId === undefined ? base : `${base}${encodeURIComponent(projectId)}/`;
}

export function logKey(prefix: string, k: LogKey): string {
  return `${hourFolder(prefix, k.receivedAt, k.projectId)}${pad(k.receivedAt, MS_DIGITS)}-${k.id}.json.gz`;
}

/** What a key names, or undefined for a key that is not a log file. */
export function parseLogKey(prefix: string, key: string): LogKey | undefined {
  if (!key.startsWith(`${prefix}${LOG_ROOT}`)) return undefined;
  // `.json`: files written before they were compressed.
  const m = /\/\d{4}-\d{2}-\d{2}\/\d{2}\/([^/]+)\/(\d{13})-([0-9a-f-]{36})\.json(?:\.gz)?$/.exec(key);
  if (!m) return undefined;
  return { projectId: decodeURIComponent(m[1]!), receivedAt: Number(m[2]), id: m[3]! };
}

/** The start of every UTC hour that overlaps [fromMs, toMs), oldest first. */
export function hoursBetween(fromMs: number, toMs: number): number[] {
  const hour = 3_600_000;
  const out: number[] = [];
  for (let t = Math.floor(fromMs / hour) * hour; t < toMs; t += hour) out.push(t);
  return out;
}

/**
 * A row or a patch: an object, taken as it is. Checking each field would cost the drain more than
 * the insert (rows carry whole inputs and outputs); a wrong field fails that file's write, alone.
 */
const row = z.custom<Row>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
  error: 'must be an object',
});
const change = z.object({ patch: row, at: z.string(), isUpdate: z.boolean() });
const logged = z.object({
  projectId: z.string().min(1),
  receivedAt: z.number().int().nonnegative(),
  attribution: z.object({ apiKey: z.string(), sdkName: z.string(), sdkVersion: z.string() }),
  targets: z.object({ legacy: z.boolean(), staging: z.boolean(), events: z.boolean() }),
  virtualRoots: z.boolean(),
  traces: z.array(z.tuple([z.string(), z.array(change)])),
  observations: z.array(
    z.tuple([z.string(), z.array(change.extend({ traceId: z.string(), type: z.string() }))]),
  ),
  scores: z.array(row),
  events: z.array(row),
  fills: z.array(z.object({ traceId: z.string(), spanId: z.string() })).optional(),
});
/** Version 1 held one write (files logged before requests were committed together); 2 holds several. */
const logFile = z.discriminatedUnion('v', [
  logged.extend({ v: z.literal(1) }),
  z.object({ v: z.literal(2), writes: z.array(logged).min(1) }),
]);

const loggedOf = (w: IngestionWrite) => ({
  projectId: w.projectId,
  receivedAt: w.receivedAt,
  attribution: w.attribution,
  targets: w.targets,
  virtualRoots: w.virtualRoots,
  traces: [...w.changes.traces],
  observations: [...w.changes.observations],
  scores: w.scores,
  events: w.events,
  ...(w.fills && w.fills.length > 0 ? { fills: w.fills } : {}),
});

/** A file's body: the writes of the requests committed together, as JSON (a patch's absent fields stay absent). */
export function encodeLogFile(writes: readonly IngestionWrite[]): string {
  return JSON.stringify({ v: 2, writes: writes.map(loggedOf) });
}

function writeOf(e: z.infer<typeof logged>): IngestionWrite {
  const changes = new LegacyChanges();
  for (const [id, list] of e.traces) changes.traces.set(id, list as Change<TraceBody>[]);
  for (const [id, list] of e.observations) changes.observations.set(id, list as ObservationChange[]);
  return {
    projectId: e.projectId,
    receivedAt: e.receivedAt,
    attribution: e.attribution,
    targets: e.targets,
    virtualRoots: e.virtualRoots,
    changes,
    scores: e.scores,
    events: e.events,
    fills: e.fills,
  };
}

/** The writes a file holds, in the order logged; throws, naming the first bad field, on a file that is not one. */
export function decodeLogFile(body: string): IngestionWrite[] {
  const parsed = logFile.safeParse(JSON.parse(body));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`not an ingestion log file: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const f = parsed.data;
  return f.v === 1 ? [writeOf(f)] : f.writes.map(writeOf);
}

const gzipped = promisify(gzip);
const gunzipped = promisify(gunzip);
/**
 * Inflated at most this much per step: a file is a few MB of JSON, and zlib's default 16 KiB steps
 * cost a callback and a copy each, about half the CPU of inflating a file (measured: 1.6-3x less with 1 MiB).
 */
const INFLATE_CHUNK_BYTES = 1 << 20;
/** The first bytes of every gzip member; JSON text cannot start with them. */
const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * A file's stored bytes: its JSON gzipped at the fastest level, about a sixth of the text. Sending
 * and storing the text cost the web, blob storage and the drain more than compressing it does,
 * and gzip is what operators' tools read (`zcat`). Compressed on libuv's threads, off the event loop.
 */
export async function packLogFile(writes: readonly IngestionWrite[]): Promise<Buffer> {
  return gzipped(encodeLogFile(writes), { level: constants.Z_BEST_SPEED });
}

/** The writes a stored file holds, gzipped or (files written before compression) not. */
export async function readLogFile(body: Buffer): Promise<IngestionWrite[]> {
  const gz = body[0] === GZIP_MAGIC[0] && body[1] === GZIP_MAGIC[1];
  return decodeLogFile(
    (gz ? await gunzipped(body, { chunkSize: INFLATE_CHUNK_BYTES }) : body).toString('utf8'),
  );
}
