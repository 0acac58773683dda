/**
 * Sessions and users as the observations derive them: one row per `session_id` (or `user_id`) of
 * `events_core`, with first and last seen, trace and observation counts, users, tokens and cost.
 * Pages are keyset-paginated on (last seen, id), newest first, compared in HAVING because both
 * are aggregates. Pure: builds the query and maps its rows; no I/O.
 */
import { BadRequest } from '../../kernel/errors.ts';
import { INPUT_TOKENS, OUTPUT_TOKENS, TOTAL_COST, TOTAL_TOKENS } from './events-columns.ts';
import { num, toIso } from './row-values.ts';
import { decodeCursor, encodeCursor, Params, type Query, Where } from './sql.ts';

export const GROUPINGS = ['session', 'user'] as const;
export type Grouping = (typeof GROUPINGS)[number];

const KEY_COLUMN: Record<Grouping, string> = { session: 'session_id', user: 'user_id' };

export interface GroupingRequest {
  projectId: string;
  grouping: Grouping;
  limit: number;
  cursor?: string | undefined;
  fromStartTime?: string | undefined;
  toStartTime?: string | undefined;
}

/** Position after the last row of a page: its last-seen time (store text) and key. */
interface GroupingCursor {
  t: string;
  k: string;
}

function parseCursor(text: string): GroupingCursor {
  const c = decodeCursor(text) as Partial<GroupingCursor> | undefined;
  if (!c || typeof c.t !== 'string' || typeof c.k !== 'string') {
    throw new BadRequest('cursor: not a cursor returned by this endpoint');
  }
  return { t: c.t, k: c.k };
}

/** The HAVING clause that continues after `cursor` (rows aliased `last_seen` and `key`); none without one. */
export function afterCursor(params: Params, cursor: string | undefined): string[] {
  if (!cursor) return [];
  const c = parseCursor(cursor);
  return [`HAVING (last_seen, key) < (toDateTime64(${params.str(c.t)}, 6, 'UTC'), ${params.str(c.k)})`];
}

export function buildGroupingList(req: GroupingRequest): Query {
  const params = new Params();
  const key = KEY_COLUMN[req.grouping];
  const where = new Where(params, `project_id = ${params.str(req.projectId)}`, `${key} != ''`).range(
    'start_time',
    req.fromStartTime,
    req.toStartTime,
  );
  const having = afterCursor(params, req.cursor);
  const other = req.grouping === 'session' ? 'user_id' : 'session_id';
  const sql = [
    `SELECT ${key} AS key, min(start_time) AS first_seen, max(start_time) AS last_seen,`,
    '  uniqExact(trace_id) AS trace_count, count() AS observation_count,',
    `  arraySort(groupUniqArrayIf(${other}, ${other} != '')) AS related,`,
    `  sum(${INPUT_TOKENS}) AS input_tokens, sum(${OUTPUT_TOKENS}) AS output_tokens,`,
    `  sum(${TOTAL_TOKENS}) AS total_tokens, toFloat64(sum(${TOTAL_COST})) AS total_cost`,
    'FROM events_core FINAL',
    `WHERE ${where.sql()}`,
    `GROUP BY ${key}`,
    ...having,
    'ORDER BY last_seen DESC, key DESC',
    `LIMIT ${params.add(req.limit + 1, 'UInt32')}`,
  ].join('\n');
  return { sql, params: params.values };
}

export type GroupingRow = Record<string, unknown>;

/** A row as the UI shows it; sessions name their users, users their sessions. */
export function mapGroupingRow(grouping: Grouping, r: GroupingRow): Record<string, unknown> {
  return {
    id: String(r['key']),
    firstSeen: toIso(r['first_seen']),
    lastSeen: toIso(r['last_seen']),
    traceCount: num(r['trace_count']) ?? 0,
    observationCount: num(r['observation_count']) ?? 0,
    [grouping === 'session' ? 'userIds' : 'sessionIds']: Array.isArray(r['related'])
      ? r['related'].map(String)
      : [],
    inputTokens: num(r['input_tokens']) ?? 0,
    outputTokens: num(r['output_tokens']) ?? 0,
    totalTokens: num(r['total_tokens']) ?? 0,
    totalCost: num(r['total_cost']) ?? 0,
  };
}

/** The cursor after a full page; none when the page was the last. */
export function groupingCursor(rows: GroupingRow[], limit: number): string | undefined {
  if (rows.length <= limit) return undefined;
  const last = rows[limit - 1]!;
  return encodeCursor({ t: String(last['last_seen']), k: String(last['key']) });
}
