/**
 * Annotation queues, their items and assignments in PostgreSQL: fixed statements, every one scoped
 * by the caller's project, so another project's ids are simply not found.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { deleteProjectRow, projectRecords } from '../../platform/datastores/project-page.ts';
import type {
  AnnotationQueue,
  AnnotationQueueItem,
  CreateItemRequest,
  CreateQueueRequest,
  QueueStatus,
  StatusChange,
  UpdateQueueRequest,
} from './rules.ts';

interface QueueRow {
  id: string;
  name: string;
  description: string | null;
  score_config_ids: string[];
  created_at: Date;
  updated_at: Date;
}

interface ItemRow {
  id: string;
  queue_id: string;
  object_id: string;
  object_type: AnnotationQueueItem['objectType'];
  status: QueueStatus;
  completed_at: Date | null;
  annotator_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const toQueue = (r: QueueRow): AnnotationQueue => ({
  id: r.id,
  name: r.name,
  description: r.description,
  scoreConfigIds: r.score_config_ids,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const toItem = (r: ItemRow): AnnotationQueueItem => ({
  id: r.id,
  queueId: r.queue_id,
  objectId: r.object_id,
  objectType: r.object_type,
  status: r.status,
  completedAt: r.completed_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** A queue with this name exists in the project already. */
export class QueueNameTaken extends Error {}

/** The project's score config ids among `ids`. */
export async function knownConfigIds(pool: pg.Pool, projectId: string, ids: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    'SELECT id FROM score_configs WHERE project_id = $1 AND id = ANY($2::text[])',
    [projectId, ids],
  );
  return rows.map((r) => r.id);
}

export async function createQueue(
  pool: pg.Pool,
  projectId: string,
  req: CreateQueueRequest,
): Promise<AnnotationQueue> {
  try {
    const { rows } = await pool.query<QueueRow>(
      `INSERT INTO annotation_queues (id, project_id, name, description, score_config_ids)
       VALUES ($1, $2, $3, $4, $5::text[]) RETURNING *`,
      [randomUUID(), projectId, req.name, req.description ?? null, [...new Set(req.scoreConfigIds)]],
    );
    return toQueue(rows[0]!);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new QueueNameTaken(req.name);
    throw err;
  }
}

/** Changes a queue's name, description or score configs (those given); undefined when not found. */
export async function updateQueue(
  pool: pg.Pool,
  projectId: string,
  id: string,
  req: UpdateQueueRequest,
): Promise<AnnotationQueue | undefined> {
  try {
    const { rows } = await pool.query<QueueRow>(
      `UPDATE annotation_queues SET name = COALESCE($3, name),
              description = CASE WHEN $4 THEN $5 ELSE description END,
              score_config_ids = COALESCE($6::text[], score_config_ids), updated_at = now()
        WHERE project_id = $1 AND id = $2 RETURNING *`,
      [
        projectId,
        id,
        req.name ?? null,
        req.description !== undefined,
        req.description ?? null,
        req.scoreConfigIds ? [...new Set(req.scoreConfigIds)] : null,
      ],
    );
    return rows[0] && toQueue(rows[0]);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new QueueNameTaken(req.name ?? '');
    throw err;
  }
}

/** Deletes a queue with its items and assignments; whether it was there. */
export function deleteQueue(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  return deleteProjectRow(pool, 'annotation_queues', projectId, id);
}

const queues = projectRecords('annotation_queues', 'created_at DESC, id DESC', toQueue);
export const findQueue = queues.find;

export const listQueues = queues.page;

/** Pending and completed items of each of the project's queues, by queue id. */
export async function queueProgress(pool: pg.Pool, projectId: string) {
  const { rows } = await pool.query<{ queue_id: string; pending: number; completed: number }>(
    `SELECT queue_id, count(*) FILTER (WHERE status = 'PENDING')::int AS pending,
            count(*) FILTER (WHERE status = 'COMPLETED')::int AS completed
       FROM annotation_queue_items WHERE project_id = $1 GROUP BY queue_id`,
    [projectId],
  );
  return new Map(rows.map((r) => [r.queue_id, { pending: r.pending, completed: r.completed }]));
}

export async function listItems(
  pool: pg.Pool,
  projectId: string,
  queueId: string,
  status: QueueStatus | undefined,
  limit: number,
  offset: number,
) {
  const where = 'project_id = $1 AND queue_id = $2 AND ($3::text IS NULL OR status = $3)';
  const args = [projectId, queueId, status ?? null];
  const [list, count] = await Promise.all([
    pool.query<ItemRow>(
      `SELECT * FROM annotation_queue_items WHERE ${where}
       ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
      [...args, limit, offset],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM annotation_queue_items WHERE ${where}`, args),
  ]);
  return { items: list.rows.map(toItem), total: count.rows[0]!.n };
}

/** The queue's items in review order (oldest first), with who completed each, for the review page. */
export async function reviewItems(pool: pg.Pool, projectId: string, queueId: string, limit: number) {
  const { rows } = await pool.query<ItemRow & { annotator_email: string | null }>(
    `SELECT i.*, u.email AS annotator_email FROM annotation_queue_items i
       LEFT JOIN users u ON u.id = i.annotator_user_id
      WHERE i.project_id = $1 AND i.queue_id = $2
      ORDER BY i.created_at, i.id LIMIT $3`,
    [projectId, queueId, limit],
  );
  return rows.map((r) => ({ ...toItem(r), annotatorEmail: r.annotator_email }));
}

export async function findItem(
  pool: pg.Pool,
  projectId: string,
  queueId: string,
  id: string,
): Promise<AnnotationQueueItem | undefined> {
  const { rows } = await pool.query<ItemRow>(
    'SELECT * FROM annotation_queue_items WHERE project_id = $1 AND queue_id = $2 AND id = $3',
    [projectId, queueId, id],
  );
  return rows[0] && toItem(rows[0]);
}

export async function createItem(
  pool: pg.Pool,
  projectId: string,
  queueId: string,
  req: CreateItemRequest,
): Promise<AnnotationQueueItem> {
  const status = req.status ?? 'PENDING';
  const { rows } = await pool.query<ItemRow>(
    `INSERT INTO annotation_queue_items (id, project_id, queue_id, object_id, object_type, status, completed_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 = 'COMPLETED' THEN now() END) RETURNING *`,
    [randomUUID(), projectId, queueId, req.objectId, req.objectType, status],
  );
  return toItem(rows[0]!);
}

/**
 * Adds the objects not yet in the queue (pending, in the order given), as the reference's UI adds
 * a selection; the ids of the items added.
 */
export async function addNewItems(
  pool: pg.Pool,
  projectId: string,
  queueId: string,
  objects: Pick<CreateItemRequest, 'objectId' | 'objectType'>[],
): Promise<string[]> {
  const r = await pool.query<{ id: string }>(
    `INSERT INTO annotation_queue_items (id, project_id, queue_id, object_id, object_type, created_at)
     SELECT gen_random_uuid()::text, $1, $2, o.object_id, o.object_type,
            now() + (o.n * interval '1 microsecond')
       FROM (SELECT DISTINCT ON (object_type, object_id) object_id, object_type, n
               FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(object_id, object_type, n)
              ORDER BY object_type, object_id, n) o
      WHERE NOT EXISTS (SELECT 1 FROM annotation_queue_items i
                         WHERE i.project_id = $1 AND i.queue_id = $2
                           AND i.object_type = o.object_type AND i.object_id = o.object_id)
     RETURNING id`,
    [projectId, queueId, objects.map((o) => o.objectId), objects.map((o) => o.objectType)],
  );
  return r.rows.map((row) => row.id);
}

/** Writes an item's status; `annotatorUserId` is the signed-in reviewer who completed it, if any. */
export async function updateItem(
  pool: pg.Pool,
  projectId: string,
  queueId: string,
  id: string,
  change: StatusChange,
  annotatorUserId: string | null,
): Promise<AnnotationQueueItem | undefined> {
  const { rows } = await pool.query<ItemRow>(
    `UPDATE annotation_queue_items SET status = $4,
       completed_at = CASE WHEN $5 THEN completed_at ELSE $6::timestamptz END,
       annotator_user_id = CASE WHEN $4 = 'COMPLETED' THEN COALESCE($7, annotator_user_id) END,
       updated_at = now()
     WHERE project_id = $1 AND queue_id = $2 AND id = $3 RETURNING *`,
    [
      projectId,
      queueId,
      id,
      change.status,
      change.completedAt === 'keep',
      change.completedAt === 'keep' ? null : change.completedAt,
      annotatorUserId,
    ],
  );
  return rows[0] && toItem(rows[0]);
}

export async function deleteItem(pool: pg.Pool, projectId: string, queueId: string, id: string) {
  const r = await pool.query(
    'DELETE FROM annotation_queue_items WHERE project_id = $1 AND queue_id = $2 AND id = $3',
    [projectId, queueId, id],
  );
  return (r.rowCount ?? 0) > 0;
}

/** The users of the project, directly or through its organization, with their emails. */
export async function projectMembers(pool: pg.Pool, projectId: string, userId?: string) {
  const { rows } = await pool.query<{ id: string; email: string; name: string | null }>(
    `SELECT u.id, u.email, u.name FROM users u
      WHERE ($2::text IS NULL OR u.id = $2)
        AND (EXISTS (SELECT 1 FROM project_memberships pm WHERE pm.project_id = $1 AND pm.user_id = u.id)
          OR EXISTS (SELECT 1 FROM organization_memberships om JOIN projects p ON p.org_id = om.org_id
                      WHERE p.id = $1 AND om.user_id = u.id))
      ORDER BY u.email`,
    [projectId, userId ?? null],
  );
  return rows;
}

export async function assign(pool: pg.Pool, projectId: string, queueId: string, userId: string) {
  await pool.query(
    `INSERT INTO annotation_queue_assignments (project_id, queue_id, user_id) VALUES ($1, $2, $3)
     ON CONFLICT (queue_id, user_id) DO NOTHING`,
    [projectId, queueId, userId],
  );
}

export async function unassign(pool: pg.Pool, projectId: string, queueId: string, userId: string) {
  await pool.query(
    'DELETE FROM annotation_queue_assignments WHERE project_id = $1 AND queue_id = $2 AND user_id = $3',
    [projectId, queueId, userId],
  );
}

/** The members assigned to a queue. */
export async function assignees(pool: pg.Pool, projectId: string, queueId: string) {
  const { rows } = await pool.query<{ id: string; email: string }>(
    `SELECT u.id, u.email FROM annotation_queue_assignments a JOIN users u ON u.id = a.user_id
      WHERE a.project_id = $1 AND a.queue_id = $2 ORDER BY u.email`,
    [projectId, queueId],
  );
  return rows;
}
