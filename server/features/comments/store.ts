/** Comments in PostgreSQL: fixed statements, every one scoped by the caller's project. */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { CommentTarget, CreateCommentRequest } from './rules.ts';

interface CommentRow {
  id: string;
  project_id: string;
  object_type: string;
  object_id: string;
  content: string;
  author_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const toComment = (r: CommentRow) => ({
  id: r.id,
  projectId: r.project_id,
  objectType: r.object_type,
  objectId: r.object_id,
  content: r.content,
  authorUserId: r.author_user_id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export async function createComment(pool: pg.Pool, projectId: string, req: CreateCommentRequest) {
  const { rows } = await pool.query<CommentRow>(
    `INSERT INTO comments (id, project_id, object_type, object_id, content, author_user_id)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [randomUUID(), projectId, req.objectType, req.objectId, req.content, req.authorUserId ?? null],
  );
  return toComment(rows[0]!);
}

export async function findComment(pool: pg.Pool, projectId: string, id: string) {
  const { rows } = await pool.query<CommentRow>('SELECT * FROM comments WHERE project_id = $1 AND id = $2', [
    projectId,
    id,
  ]);
  return rows[0] && toComment(rows[0]);
}

export interface CommentFilter {
  /** Any of these objects (empty: every object, optionally of `objectType`). */
  targets: CommentTarget[];
  objectType?: string | undefined;
  authorUserId?: string | undefined;
}

export async function listComments(
  pool: pg.Pool,
  projectId: string,
  f: CommentFilter,
  limit: number,
  offset: number,
) {
  const where = `project_id = $1
    AND (cardinality($2::text[]) = 0 OR (object_type, object_id) IN (SELECT * FROM unnest($2::text[], $3::text[])))
    AND ($4::text IS NULL OR object_type = $4) AND ($5::text IS NULL OR author_user_id = $5)`;
  const params = [
    projectId,
    f.targets.map((t) => t.objectType),
    f.targets.map((t) => t.objectId),
    f.targets.length > 0 ? null : (f.objectType ?? null),
    f.authorUserId ?? null,
  ];
  const [list, count] = await Promise.all([
    pool.query<CommentRow>(
      `SELECT * FROM comments WHERE ${where} ORDER BY created_at DESC, id LIMIT $6 OFFSET $7`,
      [...params, limit, offset],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM comments WHERE ${where}`, params),
  ]);
  return { items: list.rows.map(toComment), total: count.rows[0]!.n };
}
