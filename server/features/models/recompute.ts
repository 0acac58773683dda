/**
 * `observatory recompute-costs`: recomputes the computed costs of a time range with the current
 * model definitions, batch by batch, in every table that holds cost (the legacy `observations`,
 * and in release 4 also the staged rows propagation has yet to carry, `events_full` and
 * `events_core`). After each batch the last row done is saved
 * in PostgreSQL (`cost_recomputations`): a killed run resumes after it. Updates are in place and a
 * row already right is not written, so a batch done twice (killed between its update and its
 * checkpoint) changes nothing the second time.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { Dialect } from '../../platform/migrations/analytics/dialect.ts';
import type { UpdateForm } from '../write-model/trace-events-update.ts';
import { ProjectPricing } from './apply.ts';
import { compileModels } from './pricing.ts';
import {
  batchQuery,
  COST_SOURCES,
  type CostChange,
  type CostRange,
  type CostSource,
  type CostTable,
  type Cursor,
  cursorAfter,
  recomputeRow,
  updateStatement,
} from './recompute-sql.ts';
import { visibleModels } from './store.ts';

export interface RecomputeDeps {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  release: '3' | '4';
  form: UpdateForm;
  dialect: Dialect;
}

export interface RecomputeResult {
  from: string;
  to: string;
  projectId: string | null;
  /** True when the run went on from a killed run's checkpoint. */
  resumed: boolean;
  examined: number;
  updated: number;
}

/** Settings that make reads return numbers as JSON numbers (decimals and 64-bit integers). */
const READ_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
} as const;

/**
 * The tables a source's changes go to (release 4 stages legacy rows for propagation too), the one
 * batches are read from last: a run killed between two of them finds that one unchanged when it
 * resumes, so the batch is written to all again.
 */
const tablesOf = (source: CostSource, release: '3' | '4'): CostTable[] =>
  source === 'events'
    ? ['events_core', 'events_full']
    : release === '4'
      ? ['observations_batch_staging', 'observations']
      : ['observations'];

const keyOf = (r: CostRange) => `${r.from}|${r.to}|${r.projectId ?? '*'}`;

export async function recomputeCosts(
  deps: RecomputeDeps,
  range: CostRange,
  batchSize: number,
): Promise<RecomputeResult> {
  const id = keyOf(range);
  // A finished run of the same range starts over: it is asked for because definitions changed.
  const { rows } = await deps.pool.query<{ cursor: Cursor | null; examined: string; updated: string }>(
    `INSERT INTO cost_recomputations (id, project_id, from_time, to_time) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET cursor = CASE WHEN cost_recomputations.finished_at IS NULL THEN cost_recomputations.cursor END,
       examined = CASE WHEN cost_recomputations.finished_at IS NULL THEN cost_recomputations.examined ELSE 0 END,
       updated = CASE WHEN cost_recomputations.finished_at IS NULL THEN cost_recomputations.updated ELSE 0 END,
       started_at = CASE WHEN cost_recomputations.finished_at IS NULL THEN cost_recomputations.started_at ELSE now() END,
       finished_at = NULL, updated_at = now()
     RETURNING cursor, examined, updated`,
    [id, range.projectId ?? null, `${range.from}Z`, `${range.to}Z`],
  );
  let cursor = rows[0]!.cursor;
  const result: RecomputeResult = {
    from: range.from,
    to: range.to,
    projectId: range.projectId ?? null,
    resumed: cursor !== null,
    examined: Number(rows[0]!.examined),
    updated: Number(rows[0]!.updated),
  };
  const pricing = new Map<string, Promise<ProjectPricing>>();
  const pricingOf = (projectId: string) => {
    let p = pricing.get(projectId);
    if (!p) {
      p = visibleModels(deps.pool, projectId).then((defs) => new ProjectPricing(compileModels(defs)));
      pricing.set(projectId, p);
    }
    return p;
  };
  const sources = deps.release === '4' ? COST_SOURCES : COST_SOURCES.filter((s) => s === 'observations');
  for (const source of sources.slice(cursor ? sources.indexOf(cursor.source) : 0)) {
    let after = cursor?.source === source ? cursor : null;
    for (;;) {
      const q = batchQuery(source, range, after, batchSize);
      const batch = await (
        await deps.analytics.query({
          query: q.query,
          query_params: q.params,
          format: 'JSONEachRow',
          clickhouse_settings: READ_SETTINGS,
        })
      ).json<Record<string, unknown>>();
      if (batch.length === 0) break;
      const changes: CostChange[] = [];
      for (const row of batch) {
        const change = recomputeRow(await pricingOf(String(row['project_id'])), source, row);
        if (change) changes.push(change);
      }
      await writeChanges(deps, source, changes);
      after = cursorAfter(source, batch);
      result.examined += batch.length;
      result.updated += changes.length;
      await deps.pool.query(
        'UPDATE cost_recomputations SET cursor = $2, examined = $3, updated = $4, updated_at = now() WHERE id = $1',
        [id, JSON.stringify(after), result.examined, result.updated],
      );
      if (batch.length < batchSize) break;
    }
    cursor = null;
  }
  await deps.pool.query(
    'UPDATE cost_recomputations SET finished_at = now(), updated_at = now() WHERE id = $1',
    [id],
  );
  return result;
}

async function writeChanges(deps: RecomputeDeps, source: CostSource, changes: CostChange[]): Promise<void> {
  const byProject = new Map<string, CostChange[]>();
  for (const c of changes) {
    const list = byProject.get(c.projectId);
    if (list) list.push(c);
    else byProject.set(c.projectId, [c]);
  }
  for (const projectChanges of byProject.values())
    for (const table of tablesOf(source, deps.release)) {
      const { query, params } = updateStatement(table, deps.form, deps.dialect, projectChanges);
      await deps.analytics.command({ query, query_params: params });
    }
}
