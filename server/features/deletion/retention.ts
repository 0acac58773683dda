/**
 * Per-project data retention, applied by the worker: a project with `retention_days` > 0 loses
 * every trace with nothing newer than that many days (its rows in every table, comments, media;
 * through the same deletion as the API) and its older scores without a trace, in bounded batches,
 * each audited with the retention policy as the actor. A replica claims a project's pass in
 * PostgreSQL (SKIP LOCKED), so two workers never run the same project at once; a pass cut short
 * (a kill, a restart, its batch bound) leaves the project due again, and every step is idempotent.
 */
import { audit } from '../audit/audit.ts';
import { expiredTracelessScoresQuery, expiredTracesQuery } from './retention-sql.ts';
import { scoreDeleteStatement } from './trace-deletion-sql.ts';
import { deleteTraces, type TraceDeletionDeps } from './traces.ts';

/** Ids per deletion: the bulk trace deletion API's own bound. */
export const RETENTION_BATCH = 1000;
/** A project's pass stops after this many batches and is due again at the next tick. */
const BATCHES_PER_PASS = 50;
/** How often a finished project is looked at again. */
const PROJECT_PASS_EVERY_MS = 60 * 60 * 1000;
/** Projects claimed per tick. */
const CLAIM = 20;

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionReport {
  projects: number;
  traces: number;
  scores: number;
}

interface DueProject {
  id: string;
  retention_days: number;
}

/** Projects whose pass is due, claimed by this replica until the next pass is due. */
async function claimDueProjects(deps: TraceDeletionDeps, now: Date): Promise<DueProject[]> {
  const { rows } = await deps.pool.query<DueProject>(
    `UPDATE projects SET retention_applied_at = $1
     WHERE id IN (
       SELECT id FROM projects
       WHERE retention_days > 0 AND deleted_at IS NULL
         AND (retention_applied_at IS NULL OR retention_applied_at <= $1::timestamptz - $2 * interval '1 millisecond')
       ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED)
     RETURNING id, retention_days`,
    [now, PROJECT_PASS_EVERY_MS, CLAIM],
  );
  return rows;
}

async function idsOf(deps: TraceDeletionDeps, s: { query: string; params: Record<string, unknown> }) {
  const rs = await deps.analytics.query({ query: s.query, query_params: s.params, format: 'JSONEachRow' });
  return (await rs.json<Record<string, string>>()).map((r) => Object.values(r)[0] as string);
}

/** Deletes what one project's retention lets expire as of `now`; false when its batch bound stopped it. */
export async function applyRetention(
  deps: TraceDeletionDeps,
  projectId: string,
  days: number,
  now: Date,
  report: RetentionReport,
): Promise<boolean> {
  const cutoff = new Date(now.getTime() - days * DAY_MS);
  const actor = { policy: 'retention' } as const;
  for (let batch = 0; batch < BATCHES_PER_PASS; batch++) {
    const traces = await idsOf(deps, expiredTracesQuery(deps.release, projectId, cutoff, RETENTION_BATCH));
    if (traces.length > 0) {
      await deleteTraces(deps, projectId, actor, traces);
      report.traces += traces.length;
      continue;
    }
    const scores = await idsOf(deps, expiredTracelessScoresQuery(projectId, cutoff, RETENTION_BATCH));
    if (scores.length === 0) return true;
    await audit(deps.pool, { projectId, actor, resourceType: 'score', resourceIds: scores });
    const s = scoreDeleteStatement(deps.form, deps.dialect, projectId, scores);
    await deps.analytics.command({ query: s.query, query_params: s.params });
    report.scores += scores.length;
  }
  return false;
}

/** One tick: every due project's pass; a project not seen through is due again at the next tick. */
export async function runRetentionPass(
  deps: TraceDeletionDeps,
  now: Date = new Date(),
  stopping: () => boolean = () => false,
): Promise<RetentionReport> {
  const report: RetentionReport = { projects: 0, traces: 0, scores: 0 };
  const due = await claimDueProjects(deps, now);
  const unfinished: string[] = [];
  try {
    for (const [i, p] of due.entries()) {
      if (stopping()) {
        unfinished.push(...due.slice(i).map((d) => d.id));
        break;
      }
      unfinished.push(p.id);
      if (await applyRetention(deps, p.id, p.retention_days, now, report)) unfinished.pop();
      report.projects++;
    }
  } finally {
    // A project not seen through is due again at the next tick rather than in an hour.
    if (unfinished.length > 0)
      await deps.pool.query('UPDATE projects SET retention_applied_at = NULL WHERE id = ANY($1)', [
        unfinished,
      ]);
  }
  return report;
}
