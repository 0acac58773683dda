/**
 * The analytics part's tables as the store wrote them to the bucket. The store's BACKUP
 * deduplicates identical files (`deduplicate_files`): an entry whose content another entry already
 * holds has no object of its own, and its `<data_file>` in the `.backup` index names the object that
 * holds it (often another table's, e.g. a `count.txt` of the same number). So a table's objects are
 * read through that index, never from its folder's listing, and its rows are the sum of its parts'
 * `count.txt` entries: exactly the rows the backup holds. All of it comes from the one read that
 * checksums the part.
 */
import { createHash } from 'node:crypto';
import type { BackupTableRecord } from '../../contract/backup.ts';
import type { ObjectDigest } from './plan.ts';

/** One file of the backup as its `.backup` index lists it; `object` is relative to the part's folder. */
export interface IndexEntry {
  name: string;
  size: number;
  object: string;
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

const field = (block: string, tag: string) => {
  const m = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(block);
  return m ? unescapeXml(m[1]!) : undefined;
};

/** The entries of a `.backup` index (ClickHouse's XML: `<contents><file>...</file>...</contents>`). */
export function parseBackupIndex(xml: string): IndexEntry[] {
  const out: IndexEntry[] = [];
  for (const m of xml.matchAll(/<file>([\s\S]*?)<\/file>/g)) {
    const name = field(m[1]!, 'name');
    const size = Number(field(m[1]!, 'size'));
    if (name === undefined || !Number.isSafeInteger(size)) throw new Error(`a .backup entry is not readable`);
    out.push({ name, size, object: field(m[1]!, 'data_file') ?? name });
  }
  return out;
}

/** The store escapes names in paths as `%XX` (escapeForFileName). */
const unescapeName = (s: string) => decodeURIComponent(s);

/** The table an entry belongs to: `data/<db>/<table>/...` or `metadata/<db>/<table>.sql`. */
export function tableOf(name: string): string | undefined {
  const data = /^data\/[^/]+\/([^/]+)\//.exec(name);
  if (data) return unescapeName(data[1]!);
  const meta = /^metadata\/[^/]+\/([^/]+)\.sql$/.exec(name);
  return meta ? unescapeName(meta[1]!) : undefined;
}

const EMPTY_SHA256 = createHash('sha256').digest('hex');

const isCount = (name: string) => /^data\/[^/]+\/[^/]+\/[^/]+\/count\.txt$/.test(name);

/** A view has a definition and no data: a verification compares its definition, restores none of it. */
export const isViewDefinition = (sql: string) => /^\s*(CREATE|ATTACH)\s+(MATERIALIZED\s+)?VIEW\b/i.test(sql);

export interface AnalyticsTable extends BackupTableRecord {
  sha256: string;
  /** A view (restored by no verification: it would read or write the live tables). */
  view: boolean;
  /** Set when an entry's object is missing or has another size: the table is not what was written. */
  problem?: string;
}

/** Kept while reading the part: row counts (a number, at most 20 bytes, and any object a deduplicated count may point to), definitions and the index. */
export const keepForTables = (key: string, size: number) =>
  size <= 32 || key.endsWith('.sql') || key.endsWith('/.backup');

/**
 * Each table's rows (sum of its parts' `count.txt`) and sha256 over its entries in name order (for
 * each, `name\nsize\n` and the sha256 of the object that holds it), from the objects as the part's
 * single read recorded them (`stored`, by key relative to the part's folder). An object missing or
 * of another size than its entry marks the table instead of failing: a verification names it.
 */
export function analyticsTables(
  entries: readonly IndexEntry[],
  stored: (object: string) => ObjectDigest | undefined,
): AnalyticsTable[] {
  const byTable = new Map<string, IndexEntry[]>();
  for (const e of entries) {
    const table = tableOf(e.name);
    if (table !== undefined) byTable.set(table, [...(byTable.get(table) ?? []), e]);
  }
  const out: AnalyticsTable[] = [];
  for (const [table, own] of [...byTable].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const hash = createHash('sha256');
    let rows = 0;
    let view = false;
    let problem: string | undefined;
    for (const e of [...own].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      // An empty file has no object.
      const o = e.size === 0 ? { size: 0, sha256: EMPTY_SHA256, content: Buffer.alloc(0) } : stored(e.object);
      hash.update(`${e.name}\n${e.size}\n${o?.sha256 ?? 'missing'}\n`);
      if (o?.size !== e.size) {
        problem ??= o
          ? `${e.name} has ${o.size} bytes, the backup's index lists ${e.size}`
          : `${e.name} has no object (${e.object})`;
        continue;
      }
      const text = o.content?.toString('utf8');
      if (isCount(e.name)) {
        const n = Number(text?.trim());
        if (!text?.trim() || !Number.isSafeInteger(n) || n < 0) problem ??= `${e.name} is not a row count`;
        else rows += n;
      }
      if (e.name.startsWith('metadata/') && text !== undefined) view = isViewDefinition(text);
    }
    out.push({ table, rows, sha256: hash.digest('hex'), view, ...(problem ? { problem } : {}) });
  }
  return out;
}
