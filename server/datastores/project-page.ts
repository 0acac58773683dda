import type pg from 'pg';

/**
 * One page of a project's rows of `table` (every column, in `orderBy`) with how many it has in all.
 * `table` and `orderBy` are the code's own constants, never request input.
 */
export async function projectPage<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  table: string,
  orderBy: string,
  projectId: string,
  limit: number,
  offset: number,
): Promise<{ rows: R[]; total: number }> {
  const [list, count] = await Promise.all([
    pool.query<R>(`SELECT * FROM ${table} WHERE project_id = $1 ORDER BY ${orderBy} LIMIT $2 OFFSET $3`, [
      projectId,
      limit,
      offset,
    ]),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1`, [projectId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.n };
}
