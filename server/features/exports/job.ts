/**
 * The worker's export job: every pass, each export writes its closed windows, oldest first, one
 * object per window, and moves its checkpoint past a window only after that window's object was
 * stored. A worker killed mid-window leaves the checkpoint at that window, and the next pass
 * writes the same window to the same key again: no window is skipped, none lands in two files. An
 * export whose source this deployment cannot produce writes nothing and records why.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { ModeSettings } from '../../contract/write-modes.ts';
import type { BlobStore } from '../../platform/blobs/store.ts';
import { contentTypeOf, dueWindows, sourceRefusal, windowKey } from './rules.ts';
import { windowFile } from './sources.ts';
import { advanceCheckpoint, type ExportConfig, listExports, recordSkip } from './store.ts';

export interface ExportRunOptions {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  blobs: BlobStore;
  /** Prepended to every key: the export storage's configured prefix. */
  storagePrefix: string;
  settings: ModeSettings;
  now?: () => number;
  /** Windows one export writes per pass, so that one long backlog does not hold the others. */
  windowsPerPass?: number;
}

export interface ExportPassResult {
  windowsWritten: number;
  rowsWritten: number;
  skipped: { exportId: string; reason: string }[];
}

async function runOne(o: ExportRunOptions, e: ExportConfig, result: ExportPassResult): Promise<void> {
  // Recorded on every pass, due window or not, so the export tells at once why it stopped.
  const refusal = sourceRefusal(e.source, o.settings);
  if (refusal !== undefined) {
    await recordSkip(o.pool, e.id, refusal);
    result.skipped.push({ exportId: e.id, reason: refusal });
    return;
  }
  const now = o.now?.() ?? Date.now();
  const windows = dueWindows(e.frequency, e.checkpoint.getTime(), now, o.windowsPerPass ?? 24);
  for (const w of windows) {
    const file = await windowFile(o.analytics, o.pool, e.source, e.format, e.projectId, w);
    const key = windowKey({ ...e, storagePrefix: o.storagePrefix }, w);
    await o.blobs.put(key, file.body, contentTypeOf(e.format));
    // Another worker finished this window first: it wrote the same key, and its checkpoint stands.
    if (!(await advanceCheckpoint(o.pool, e.id, new Date(w.start), new Date(w.end), file.rows))) return;
    result.windowsWritten += 1;
    result.rowsWritten += file.rows;
  }
}

/** One pass over every export of every project. */
export async function runExportPass(o: ExportRunOptions): Promise<ExportPassResult> {
  const result: ExportPassResult = { windowsWritten: 0, rowsWritten: 0, skipped: [] };
  for (const e of await listExports(o.pool)) await runOne(o, e, result);
  return result;
}
