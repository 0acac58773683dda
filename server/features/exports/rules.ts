/**
 * Scheduled exports to blob storage: the request shape, which write modes can serve each source,
 * the export windows (aligned UTC hours, days or ISO weeks) and the one object key each window is
 * written to, and the text file formats (Parquet files are written by the analytics store itself). Pure. A window's key follows from the export and the window
 * alone, so a window retried after a crash overwrites its own file instead of adding a second one.
 */
import { z } from 'zod';
import { behaviourOf, type ModeSettings } from '../../contract/write-modes.ts';
import { isoDateTime } from '../../kernel/iso-datetime.ts';

export const EXPORT_SOURCES = ['LEGACY_TRACES_OBSERVATIONS', 'ENRICHED_OBSERVATIONS', 'SCORES'] as const;
export type ExportSource = (typeof EXPORT_SOURCES)[number];
export const EXPORT_FORMATS = ['JSONL', 'CSV', 'PARQUET'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** What a file can be written as: the export formats, and the JSON array of the blob-storage integrations. */
export type FileFormat = ExportFormat | 'JSON';
export const EXPORT_FREQUENCIES = ['hourly', 'daily', 'weekly'] as const;
export type ExportFrequency = (typeof EXPORT_FREQUENCIES)[number];

export const createExportRequest = z.object({
  source: z.enum(EXPORT_SOURCES),
  format: z.enum(EXPORT_FORMATS),
  frequency: z.enum(EXPORT_FREQUENCIES),
  /**
   * Inside the project's folder of the export bucket; ends with `/` when given. Relative segments
   * only: no `.` or `..` (which would climb into another project's folder), no leading `/`,
   * backslash or control character.
   */
  prefix: z
    .string()
    .max(200)
    .regex(/^([A-Za-z0-9._-]+\/)*$/, 'must be path segments of A-Z a-z 0-9 . _ - each ending with /')
    .refine((p) => p.split('/').every((s) => s !== '.' && s !== '..'), 'must not hold a . or .. segment')
    .optional()
    .default(''),
  /** Start of the first window (floored to the frequency); default: the current window. */
  startAt: isoDateTime().optional(),
});

/** Why a deployment with `settings` cannot produce `source`, or undefined when it can. */
export function sourceRefusal(source: ExportSource, settings: ModeSettings): string | undefined {
  const b = behaviourOf(settings);
  if (source === 'LEGACY_TRACES_OBSERVATIONS' && settings.writeMode === 'events_only') {
    return 'the legacy traces and observations tables are no longer written after the cutover to events_only; export ENRICHED_OBSERVATIONS instead';
  }
  if (source === 'ENRICHED_OBSERVATIONS' && !(b.writesEventsTables && b.servesV4Reads)) {
    return 'enriched observations (events_full) are read only where the version 4 read path is served: events_only, or dual with the preview opt-in';
  }
  return undefined;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LENGTH: Record<ExportFrequency, number> = { hourly: HOUR, daily: DAY, weekly: 7 * DAY };
/** 1970-01-05 was a Monday: weekly windows start on Mondays, 00:00 UTC. */
const WEEK_ORIGIN = 4 * DAY;

/** The start of the window of `frequency` that holds `at` (epoch ms). */
export function windowStart(frequency: ExportFrequency, at: number): number {
  const origin = frequency === 'weekly' ? WEEK_ORIGIN : 0;
  return Math.floor((at - origin) / LENGTH[frequency]) * LENGTH[frequency] + origin;
}

export interface ExportWindow {
  start: number;
  end: number;
}

/** The windows from `checkpoint` on that have closed by `now`, oldest first, at most `limit`. */
export function dueWindows(
  frequency: ExportFrequency,
  checkpoint: number,
  now: number,
  limit: number,
): ExportWindow[] {
  const out: ExportWindow[] = [];
  for (let start = checkpoint; out.length < limit; start += LENGTH[frequency]) {
    const end = start + LENGTH[frequency];
    if (end > now) break;
    out.push({ start, end });
  }
  return out;
}

export const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace('.000Z', 'Z');

interface ExportPlace {
  /** The export storage's configured prefix. */
  storagePrefix: string;
  projectId: string;
  prefix: string;
  id: string;
}

/** The folder of one export's files: `<storage prefix><projectId>/<export prefix><exportId>/`. */
export const exportFolder = (e: ExportPlace) => `${e.storagePrefix}${e.projectId}/${e.prefix}${e.id}/`;

/** Each file format's name ending and the content type its files are stored with. */
const FILE_FORMATS: Record<FileFormat, { extension: string; contentType: string }> = {
  JSON: { extension: 'json', contentType: 'application/json' },
  JSONL: { extension: 'jsonl', contentType: 'application/x-ndjson' },
  CSV: { extension: 'csv', contentType: 'text/csv' },
  PARQUET: { extension: 'parquet', contentType: 'application/vnd.apache.parquet' },
};
export const extensionOf = (format: FileFormat) => FILE_FORMATS[format].extension;
export const contentTypeOf = (format: FileFormat) => FILE_FORMATS[format].contentType;

/** `<folder><source>/<start>_<end>.<ext>`, the times as compact UTC ISO 8601. */
export function windowKey(
  e: ExportPlace & { source: ExportSource; format: ExportFormat },
  w: ExportWindow,
): string {
  return `${exportFolder(e)}${e.source.toLowerCase()}/${stamp(w.start)}_${stamp(w.end)}.${extensionOf(e.format)}`;
}

const csvCell = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

/** Rows as a file: one JSON array, one JSON object per line, or CSV with a header of the first row's columns (RFC 4180). */
export function renderRows(format: Exclude<FileFormat, 'PARQUET'>, rows: Record<string, unknown>[]): string {
  if (format === 'JSON') return JSON.stringify(rows);
  if (format === 'JSONL') return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]!);
  return `${[columns.join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c])).join(','))].join('\r\n')}\r\n`;
}
