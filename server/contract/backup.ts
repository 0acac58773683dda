/**
 * Backups of both databases, as the `observatory backup` and `observatory restore` Jobs and the
 * operator that runs them agree on: where a backup's objects live under the destination's prefix,
 * the manifest written last (its presence is what makes a backup complete), and the summary the
 * Job leaves in its container's termination message for the operator to record in status.
 */
import { z } from 'zod';
import { s3Names } from './env.ts';
import { RELEASES, WRITE_MODES } from './write-modes.ts';

/**
 * The backup destination's variables (`SERVICE_S3_BACKUP_BUCKET`, ...), read only by the backup and
 * restore Jobs; kept out of `S3_ENV`, whose buckets the web and worker serve.
 */
export const BACKUP_S3_ENV = s3Names('SERVICE_S3_BACKUP');

/** What a backup can cover; both by default. */
export const BACKUP_PARTS = ['analytics', 'relational'] as const;
export type BackupPart = (typeof BACKUP_PARTS)[number];

/** A backup id: also an object-key segment and a Kubernetes label value. */
export const BACKUP_ID_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';

/** Object keys of one backup, relative to the destination's prefix. */
export const backupKeys = (id: string) =>
  ({
    /** ClickHouse's own `BACKUP DATABASE ... TO S3(...)` writes its files under this folder. */
    analytics: `${id}/analytics/`,
    /** `pg_dump --format=custom`, streamed. */
    relational: `${id}/relational.dump`,
    /** Written last, after every part is read back and verified. */
    manifest: `${id}/manifest.json`,
  }) as const;

/**
 * One table as the backup holds it, counted exactly: relational rows counted in the transaction
 * whose exported snapshot pg_dump dumped; analytics rows summed from the `count.txt` of every
 * MergeTree part the store wrote to the bucket. `sha256` (analytics only: the dump is one object)
 * is over the table's own objects, as the part's, so a verification names the table corrupted.
 */
const tableRecord = z.object({
  /** `schema.table` for relational tables, the table's name for analytics ones. */
  table: z.string().min(1),
  rows: z.number().int().nonnegative(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});
export type BackupTableRecord = z.infer<typeof tableRecord>;

const partRecord = z.object({
  part: z.enum(BACKUP_PARTS),
  /** Objects and bytes read back from the bucket after writing. */
  objects: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  /** sha256 (hex) over the part's objects' keys, sizes and content, in key order. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Per table; absent in backups taken before tables were recorded (their rows cannot be compared). */
  tables: z.array(tableRecord).optional(),
});
export type BackupPartRecord = z.infer<typeof partRecord>;

/** What a complete backup holds and was taken from; `manifest.json`. */
export const backupManifestSchema = z.object({
  id: z.string().regex(new RegExp(BACKUP_ID_PATTERN)),
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
  /** The release and write mode the deployment ran when the backup was taken; a restore returns there. */
  release: z.enum(RELEASES),
  writeMode: z.enum(WRITE_MODES),
  /** Schema versions at backup time, so a restore can say what it brings back. */
  schema: z.object({ relational: z.number().int(), analytics: z.number().int() }),
  /**
   * The earliest acceptance time whose write may be missing from the backup: its start, or the
   * oldest write the ingestion log had not yet drained then. A restore replays the log from here.
   * Absent in backups taken before it was recorded (then the start is used).
   */
  replayFrom: z.iso.datetime().optional(),
  parts: z.array(partRecord).min(1),
});
export type BackupManifest = z.infer<typeof backupManifestSchema>;

/**
 * The Job's termination message (`/dev/termination-log`, at most 4096 bytes): the manifest without
 * per-part checksums. The operator records it in status; it reads nothing from the bucket.
 */
export const backupSummarySchema = backupManifestSchema.extend({
  parts: z.array(partRecord.omit({ sha256: true, tables: true })).min(1),
});
export type BackupSummary = z.infer<typeof backupSummarySchema>;

/**
 * The restore Job's termination message: the backup restored and, when the deployment has an
 * ingestion log, the replay of the writes accepted after it. The operator records it in
 * status.restore.
 */
export const restoreSummarySchema = z.object({
  id: z.string().regex(new RegExp(BACKUP_ID_PATTERN)),
  replay: z
    .object({
      from: z.iso.datetime(),
      to: z.iso.datetime(),
      files: z.number().int().nonnegative(),
      written: z.number().int().nonnegative(),
      unreadable: z.number().int().nonnegative(),
      /** What the replay could not bring back (e.g. writes past the log's retention), counted. */
      warnings: z.number().int().nonnegative(),
    })
    .optional(),
});
export type RestoreSummary = z.infer<typeof restoreSummarySchema>;

export const TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** The CLI's arguments: `observatory backup --id ID [--include analytics,relational]`, same for restore. */
export const BACKUP_CLI = {
  backup: 'backup',
  restore: 'restore',
  idFlag: '--id',
  includeFlag: '--include',
  /** `observatory backup-prune [--keep-last N] [--max-age DURATION] [--protect ID,...]`: retention. */
  prune: 'backup-prune',
  keepLastFlag: '--keep-last',
  maxAgeFlag: '--max-age',
  protectFlag: '--protect',
  /** `observatory backup-verify --id ID`: restores into scratch databases and compares with the manifest. */
  verify: 'backup-verify',
} as const;

/** Bounds of spec.backup.retention.keepLast. */
export const KEEP_LAST_LIMITS = { min: 1, max: 1000 } as const;

/** Ids named in a prune summary (the message must stay under 4096 bytes). */
export const PRUNE_SUMMARY_MAX_IDS = 40;

/**
 * What `observatory backup-prune` leaves in its termination message: the complete backups it kept,
 * the newest and oldest of them, and those it deleted (ids capped, the count exact).
 */
export const backupPruneSummarySchema = z.object({
  kept: z.number().int().nonnegative(),
  newest: z.string().regex(new RegExp(BACKUP_ID_PATTERN)).optional(),
  oldestKeptAt: z.iso.datetime().optional(),
  deletedCount: z.number().int().nonnegative(),
  deleted: z.array(z.string().regex(new RegExp(BACKUP_ID_PATTERN))).max(PRUNE_SUMMARY_MAX_IDS),
  /** Folders without a manifest (a backup running or unfinished): never touched by retention. */
  incomplete: z.number().int().nonnegative(),
});
export type BackupPruneSummary = z.infer<typeof backupPruneSummarySchema>;

/**
 * A verification's verdict: `Verified` (every table's rows and checksum as recorded), `Differs`
 * (the first differing table named), `RowsNotRecorded` (a manifest from before tables were
 * recorded: both parts restored, but there is nothing to compare rows with).
 */
export const VERIFY_RESULTS = ['Verified', 'Differs', 'RowsNotRecorded'] as const;

/** Bounds of spec.backup.verify.afterEveryBackups. */
export const VERIFY_EVERY_LIMITS = { min: 1, max: 1000 } as const;

/**
 * What `observatory backup-verify` leaves in its termination message (exit 0 whenever it reached a
 * verdict, which `result` carries; exit 1 when it could not verify): tables compared, rows restored
 * per database, and the first difference (the table or part, and what differs).
 */
export const backupVerifySummarySchema = z.object({
  id: z.string().regex(new RegExp(BACKUP_ID_PATTERN)),
  result: z.enum(VERIFY_RESULTS),
  tables: z.number().int().nonnegative(),
  rows: z.object({
    analytics: z.number().int().nonnegative().optional(),
    relational: z.number().int().nonnegative().optional(),
  }),
  differences: z.number().int().nonnegative(),
  first: z
    .object({
      part: z.enum(BACKUP_PARTS),
      /** The table, or absent when the difference is the part's (e.g. the dump does not restore). */
      table: z.string().max(200).optional(),
      detail: z.string().max(600),
    })
    .optional(),
});
export type BackupVerifySummary = z.infer<typeof backupVerifySummarySchema>;
