import type pg from 'pg';

/**
 * Where a page's rows come from: a table (every column), or a select over the table aliased `alias`
 * that adds columns of its own (e.g. an aggregate of a child table).
 */
export type PageSource = string | { table: string; select: string; alias: string };

/** The page's statement ($1 project, $2 limit, $3 offset) and its count ($1 project). */
export function projectPageSql(source: PageSource, orderBy: string): { list: string; count: string } {
  const { table, select, column } =
    typeof source === 'string'
      ? { table: source, select: `SELECT * FROM ${source}`, column: 'project_id' }
      : { table: source.table, select: source.select, column: `${source.alias}.project_id` };
  return {
    list: `${select} WHERE ${column} = $1 ORDER BY ${orderBy} LIMIT $2 OFFSET $3`,
    count: `SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1`,
  };
}

/**
 * One page of a project's rows of `source` (in `orderBy`) with how many it has in all.
 * `source` and `orderBy` are the code's own constants, never request input.
 */
export async function projectPage<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  source: PageSource,
  orderBy: string,
  projectId: string,
  limit: number,
  offset: number,
): Promise<{ rows: R[]; total: number }> {
  const sql = projectPageSql(source, orderBy);
  const [list, count] = await Promise.all([
    pool.query<R>(sql.list, [projectId, limit, offset]),
    pool.query<{ n: number }>(sql.count, [projectId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.n };
}

/** The project's row of `source` with id `id`, if any. */
export async function projectRow<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  source: PageSource,
  projectId: string,
  id: string,
): Promise<R | undefined> {
  const { select, alias } =
    typeof source === 'string' ? { select: `SELECT * FROM ${source}`, alias: source } : source;
  const { rows } = await pool.query<R>(`${select} WHERE ${alias}.project_id = $1 AND ${alias}.id = $2`, [
    projectId,
    id,
  ]);
  return rows[0];
}

/**
 * A project's records kept one a row of `source`: one by id, and a page in `orderBy`, each row as
 * `toRecord` makes it.
 */
export function projectRecords<R extends pg.QueryResultRow, T>(
  source: PageSource,
  orderBy: string,
  toRecord: (row: R) => T,
) {
  return {
    async find(pool: pg.Pool, projectId: string, id: string): Promise<T | undefined> {
      const row = await projectRow<R>(pool, source, projectId, id);
      return row && toRecord(row);
    },
    async page(pool: pg.Pool, projectId: string, limit: number, offset: number) {
      const { rows, total } = await projectPage<R>(pool, source, orderBy, projectId, limit, offset);
      return { items: rows.map(toRecord), total };
    },
  };
}

/** Deletes the project's row of `table` (the code's own constant) with id `id`; false if it had none. */
export async function deleteProjectRow(
  pool: pg.Pool,
  table: string,
  projectId: string,
  id: string,
): Promise<boolean> {
  const { rowCount } = await pool.query(`DELETE FROM ${table} WHERE project_id = $1 AND id = $2`, [
    projectId,
    id,
  ]);
  return (rowCount ?? 0) > 0;
}

/**
 * Deletes the project's row of `table` with id `id`; its `column` (both the code's own constants),
 * e.g. a name to audit, or undefined if it had none.
 */
export async function deleteProjectRowReturning(
  pool: pg.Pool,
  table: string,
  projectId: string,
  id: string,
  column: string,
): Promise<string | undefined> {
  const { rows } = await pool.query<Record<string, string>>(
    `DELETE FROM ${table} WHERE project_id = $1 AND id = $2 RETURNING ${column}`,
    [projectId, id],
  );
  return rows[0]?.[column];
}
