/**
 * The scores shown on a page of observations: a trace's scores on its root observation (as the
 * reference shows trace-level scores), an observation's own scores on it. Pure builder and mapper.
 */

import { orNull } from './row-values.ts';
import { scoreValue } from './scores.ts';
import { Params, type Query } from './sql.ts';

type Row = Record<string, unknown>;

export interface RowScore {
  id: string;
  name: string;
  value: number | boolean | string;
  dataType: string;
  source: string;
  /** An evaluation's reasoning, an annotator's note. */
  comment: string | null;
  /** The judge's own trace, for an `EVAL` score. */
  executionTraceId: string | null;
}

const COLUMNS =
  'id, trace_id, observation_id, name, data_type, value, string_value, long_string_value, source, comment, execution_trace_id';

export function buildRowScores(projectId: string, traceIds: string[]): Query {
  const p = new Params();
  const sql = [
    `SELECT ${COLUMNS}`,
    'FROM scores FINAL',
    `WHERE project_id = ${p.str(projectId)} AND trace_id IN ${p.strs(traceIds)}`,
    'ORDER BY timestamp ASC, id ASC',
  ].join('\n');
  return { sql, params: p.values };
}

/** The scores of these ids (an evaluation's score has its execution's id). */
export function buildScoresById(projectId: string, ids: string[]): Query {
  const p = new Params();
  const sql = [
    `SELECT ${COLUMNS}`,
    'FROM scores FINAL',
    `WHERE project_id = ${p.str(projectId)} AND id IN ${p.strs(ids)} AND is_deleted = 0`,
  ].join('\n');
  return { sql, params: p.values };
}

export function rowScore(r: Row): RowScore {
  return {
    id: String(r['id']),
    name: String(r['name']),
    value: scoreValue(r),
    dataType: String(r['data_type']),
    source: String(r['source']),
    comment: orNull(r['comment']),
    executionTraceId: orNull(r['execution_trace_id']),
  };
}

/** Scores per observation of the page: `traceId\0spanId` for an observation's own, `traceId` for the trace's. */
export function indexScores(rows: Row[]): Map<string, RowScore[]> {
  const out = new Map<string, RowScore[]>();
  for (const r of rows) {
    const obs = orNull(r['observation_id']);
    const key = obs === null ? String(r['trace_id']) : `${r['trace_id']}\u0000${obs}`;
    const list = out.get(key) ?? [];
    list.push(rowScore(r));
    out.set(key, list);
  }
  return out;
}

export function scoresOfRow(
  index: Map<string, RowScore[]>,
  traceId: string,
  spanId: string,
  isRoot: boolean,
): RowScore[] {
  return [...(isRoot ? (index.get(traceId) ?? []) : []), ...(index.get(`${traceId}\u0000${spanId}`) ?? [])];
}
