/**
 * The window of the ingestion log a restore replays (server/features/backup/replay-window.ts): from the
 * backup's recorded start of possibly missing writes (its start when absent), widened by the margin
 * on both sides, to now; the part of it past the log's retention is named as a gap.
 */
import { describe, expect, it } from 'vitest';
import {
  REPLAY_MARGIN_MS,
  replayPlan,
  retentionWarning,
} from '../../server/features/backup/replay-window.ts';

const HOUR = 3_600_000;
const now = Date.parse('2026-03-10T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('the replay window of a restore', () => {
  it.each([
    {
      case: 'a backup of an hour ago, nothing pending then',
      manifest: { startedAt: iso(now - HOUR), replayFrom: iso(now - HOUR) },
      retention: 168,
      want: {
        fromMs: now - HOUR - REPLAY_MARGIN_MS,
        toMs: now + REPLAY_MARGIN_MS,
        beyondRetention: undefined,
      },
    },
    {
      case: 'writes pending in the log at backup time: from the oldest of them',
      manifest: { startedAt: iso(now - HOUR), replayFrom: iso(now - 3 * HOUR) },
      retention: 168,
      want: {
        fromMs: now - 3 * HOUR - REPLAY_MARGIN_MS,
        toMs: now + REPLAY_MARGIN_MS,
        beyondRetention: undefined,
      },
    },
    {
      case: 'a manifest from before replayFrom was recorded: from its start',
      manifest: { startedAt: iso(now - 2 * HOUR) },
      retention: 168,
      want: {
        fromMs: now - 2 * HOUR - REPLAY_MARGIN_MS,
        toMs: now + REPLAY_MARGIN_MS,
        beyondRetention: undefined,
      },
    },
    {
      case: 'a backup older than the retention: the gap up to what the log keeps',
      manifest: { startedAt: iso(now - 30 * HOUR), replayFrom: iso(now - 30 * HOUR) },
      retention: 25,
      want: {
        fromMs: now - 30 * HOUR - REPLAY_MARGIN_MS,
        toMs: now + REPLAY_MARGIN_MS,
        beyondRetention: { fromMs: now - 30 * HOUR - REPLAY_MARGIN_MS, toMs: now - 25 * HOUR },
      },
    },
    {
      case: 'only the margin past the retention: still named',
      manifest: { startedAt: iso(now - 25 * HOUR) },
      retention: 25,
      want: {
        fromMs: now - 25 * HOUR - REPLAY_MARGIN_MS,
        toMs: now + REPLAY_MARGIN_MS,
        beyondRetention: { fromMs: now - 25 * HOUR - REPLAY_MARGIN_MS, toMs: now - 25 * HOUR },
      },
    },
  ])('$case', ({ manifest, retention, want }) => {
    expect(replayPlan(manifest, now, retention)).toEqual(want);
  });

  it('the warning names the gap and the retention variable', () => {
    const w = retentionWarning({ fromMs: now - 30 * HOUR, toMs: now - 25 * HOUR }, 25);
    expect(w).toContain('2026-03-09T06:00:00.000Z to 2026-03-09T11:00:00.000Z');
    expect(w).toContain('25 h, SERVICE_INGESTION_LOG_RETENTION_HOURS');
    expect(w).toContain('missing from the restored store');
  });
});
