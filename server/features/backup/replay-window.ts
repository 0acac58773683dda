/**
 * The window of the ingestion log a restore replays into the restored analytics store: every write
 * the backup may lack, from the time its manifest recorded to now, and the part of that window past
 * the log's retention, whose drained files may already be deleted. Pure.
 */
import type { BackupManifest } from '../../contract/backup.ts';
import { INGESTION_LOG_ENV } from '../../contract/env.ts';

/**
 * Widens the window on both sides: acceptance times are the web Pods' clocks, the backup's start
 * the Job's. Replaying a write the backup holds already gives the same rows, so a wide margin
 * costs only time.
 */
export const REPLAY_MARGIN_MS = 5 * 60_000;

const HOUR_MS = 3_600_000;

export interface ReplayPlan {
  fromMs: number;
  toMs: number;
  /** The part of the window older than the log's retention: its drained files may be gone. */
  beyondRetention: { fromMs: number; toMs: number } | undefined;
}

export function replayPlan(
  manifest: Pick<BackupManifest, 'startedAt' | 'replayFrom'>,
  nowMs: number,
  retentionHours: number,
): ReplayPlan {
  const fromMs = Date.parse(manifest.replayFrom ?? manifest.startedAt) - REPLAY_MARGIN_MS;
  const toMs = nowMs + REPLAY_MARGIN_MS;
  const keptFrom = nowMs - retentionHours * HOUR_MS;
  return { fromMs, toMs, beyondRetention: fromMs < keptFrom ? { fromMs, toMs: keptFrom } : undefined };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The restore's warning for a window that reaches past the retention, naming the gap. */
export function retentionWarning(gap: { fromMs: number; toMs: number }, retentionHours: number): string {
  return `the backup is older than the ingestion log's retention (${retentionHours} h, ${INGESTION_LOG_ENV.retentionHours}): writes accepted from ${iso(gap.fromMs)} to ${iso(gap.toMs)} were replayed only where their files were still kept; the others are missing from the restored store`;
}
