/**
 * Sessions and users of the version 3 experience, derived from the legacy `traces` table as the
 * reference's version 3 lists are: one row per session id (or user id) of the project's traces,
 * first and last seen from their timestamps, the traces counted, the users of a session (the
 * sessions of a user), and the observations, tokens and cost of those traces from the legacy
 * `observations`. The rows, cursor and order are those of the version 4 lists (./groupings.ts),
 * so one page and one row mapper serve both. Pure: builds the query; no I/O.
 */
import { INPUT_TOKENS, OUTPUT_TOKENS, TOTAL_TOKENS } from './events-columns.ts';
import { afterCursor, type Grouping, type GroupingRequest } from './groupings.ts';
import { Params, type Query, Where } from './sql.ts';

const KEY_COLUMN: Record<Grouping, string> = { session: 'session_id', user: 'user_id' };
/** The legacy ids are nullable; absent and empty both mean "none". */
const keyExpr = (grouping: Grouping) => `ifNull(${KEY_COLUMN[grouping]}, '')`;

/**
 * One statement: the page of groups over `traces`, its traces found by the bare key column (which
 * the bloom index on it prunes), and the observations joined to those traces only, back by key.
 * A group whose traces have no observation yet shows zeros (the LEFT JOIN's defaults). Measured on
 * 100k and 400k traces, filtering observations by `trace_id IN` the page's traces too was slower:
 * it reads the traces once more, while the join keeps only the page's rows anyway.
 */
export function buildLegacyGroupingList(req: GroupingRequest): Query {
  const params = new Params();
  const key = keyExpr(req.grouping);
  const other = keyExpr(req.grouping === 'session' ? 'user' : 'session');
  const project = params.str(req.projectId);
  const where = new Where(params, `project_id = ${project}`, `${key} != ''`).range(
    'timestamp',
    req.fromStartTime,
    req.toStartTime,
  );
  const having = afterCursor(params, req.cursor);
  const limit = params.add(req.limit + 1, 'UInt32');
  const traces = `traces FINAL\n  WHERE ${where.sql(' AND ')}`;
  const sql = [
    'WITH page_groups AS (',
    `  SELECT ${key} AS key, min(timestamp) AS first_seen, max(timestamp) AS last_seen,`,
    `    uniqExact(id) AS trace_count, arraySort(groupUniqArrayIf(${other}, ${other} != '')) AS related`,
    `  FROM ${traces}`,
    '  GROUP BY key',
    ...having.map((h) => `  ${h}`),
    '  ORDER BY last_seen DESC, key DESC',
    `  LIMIT ${limit}`,
    '),',
    'page_traces AS (',
    `  SELECT id, ${key} AS key FROM ${traces} AND ${KEY_COLUMN[req.grouping]} IN (SELECT key FROM page_groups)`,
    ')',
    'SELECT g.key AS key, g.first_seen AS first_seen, g.last_seen AS last_seen,',
    '  g.trace_count AS trace_count, g.related AS related, u.observation_count AS observation_count,',
    '  u.input_tokens AS input_tokens, u.output_tokens AS output_tokens,',
    '  u.total_tokens AS total_tokens, u.total_cost AS total_cost',
    'FROM page_groups AS g',
    'LEFT JOIN (',
    '  SELECT t.key AS key, count() AS observation_count,',
    `    sum(${INPUT_TOKENS}) AS input_tokens, sum(${OUTPUT_TOKENS}) AS output_tokens,`,
    `    sum(${TOTAL_TOKENS}) AS total_tokens, toFloat64(sum(ifNull(total_cost, 0))) AS total_cost`,
    `  FROM (SELECT trace_id, usage_details, total_cost FROM observations FINAL WHERE project_id = ${project}) AS o`,
    '  INNER JOIN page_traces AS t ON t.id = o.trace_id',
    '  GROUP BY t.key',
    ') AS u ON u.key = g.key',
    'ORDER BY last_seen DESC, key DESC',
  ].join('\n');
  return { sql, params: params.values };
}
