/**
 * `observatory backup-verify`, pure: the scratch databases a verification restores into, the
 * comparison of what came back with what the manifest recorded, and the verdict left in the
 * termination message.
 */
import {
  type BackupPart,
  type BackupTableRecord,
  type BackupVerifySummary,
  backupVerifySummarySchema,
} from '../../contract/backup.ts';
import { TERMINATION_MESSAGE_MAX_BYTES } from './plan.ts';

/** PostgreSQL's identifier limit (bytes; the names here are ASCII). */
const PG_NAME_MAX = 63;
const SUFFIX = '_verify';

/**
 * One fixed scratch name per database, so a verification killed midway leaves databases the next
 * one finds and drops first. Never the live names: the suffix always survives the truncation.
 */
export function scratchNames(relational: string, analytics: string) {
  return {
    relational: `${relational.slice(0, PG_NAME_MAX - SUFFIX.length)}${SUFFIX}`,
    analytics: `${analytics}${SUFFIX}`,
  };
}

/** One table (or a whole part, without `table`) that is not what the backup recorded. */
export interface Difference {
  part: BackupPart;
  table?: string;
  detail: string;
}

/** A table as a verification found it: in the bucket (rows, sha256) or restored (rows). */
export interface FoundTable {
  table: string;
  rows: number;
  sha256?: string;
  /** Why the table could not be read as recorded (e.g. an object of the wrong size). */
  problem?: string;
}

/**
 * Every recorded table against what was found, in the manifest's order, then the tables found
 * that it does not record. A checksum is compared only where both sides have one.
 */
export function compareTables(
  part: BackupPart,
  recorded: readonly BackupTableRecord[],
  found: readonly FoundTable[],
  how: 'in the bucket' | 'restored',
): Difference[] {
  const byName = new Map(found.map((t) => [t.table, t]));
  const out: Difference[] = [];
  for (const r of recorded) {
    const f = byName.get(r.table);
    if (!f) out.push({ part, table: r.table, detail: `recorded with ${r.rows} rows, missing ${how}` });
    else if (f.problem) out.push({ part, table: r.table, detail: f.problem });
    else if (r.sha256 !== undefined && f.sha256 !== undefined && r.sha256 !== f.sha256)
      out.push({ part, table: r.table, detail: `its objects' sha256 is ${f.sha256}, recorded ${r.sha256}` });
    else if (f.rows !== r.rows)
      out.push({ part, table: r.table, detail: `${f.rows} rows ${how}, recorded ${r.rows}` });
  }
  const names = new Set(recorded.map((r) => r.table));
  for (const f of found)
    if (!names.has(f.table)) out.push({ part, table: f.table, detail: `${how} but not in the manifest` });
  return out;
}

export interface VerifyFigures {
  id: string;
  /** False when the manifest records no tables (taken before they were recorded). */
  comparable: boolean;
  tables: number;
  rows: BackupVerifySummary['rows'];
  differences: readonly Difference[];
}

const DETAIL_MAX = 600;

/** The verdict, within the termination message's limit (one difference named, the count exact). */
export function verifySummary(f: VerifyFigures): BackupVerifySummary {
  const first = f.differences[0];
  const summary = backupVerifySummarySchema.parse({
    id: f.id,
    result: first ? 'Differs' : f.comparable ? 'Verified' : 'RowsNotRecorded',
    tables: f.tables,
    rows: f.rows,
    differences: f.differences.length,
    ...(first
      ? {
          first: {
            part: first.part,
            ...(first.table !== undefined ? { table: first.table.slice(0, 200) } : {}),
            detail: first.detail.slice(0, DETAIL_MAX),
          },
        }
      : {}),
  });
  if (Buffer.byteLength(JSON.stringify(summary)) >= TERMINATION_MESSAGE_MAX_BYTES)
    throw new Error('the verification summary does not fit the termination message');
  return summary;
}

/** One line for people: the verdict and its figures. */
export function verifyText(s: BackupVerifySummary): string {
  const rows = Object.entries(s.rows)
    .map(([db, n]) => `${db} ${n} rows`)
    .join(', ');
  if (s.result === 'Differs')
    return `backup ${s.id} differs from its manifest (${s.differences} differences): ${s.first!.part}${s.first!.table ? ` table ${s.first!.table}` : ''}: ${s.first!.detail}`;
  if (s.result === 'RowsNotRecorded')
    return `backup ${s.id} restored (${rows}), but its manifest records no tables: rows cannot be compared`;
  return `backup ${s.id} verified: ${s.tables} tables compared, ${rows}`;
}
