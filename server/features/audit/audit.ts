/**
 * The audit log of destructive and reviewing changes (who, what, when) in PostgreSQL. The actor is
 * the API key that made the call, recorded by its id (never by a secret), the signed-in user who
 * made it from the UI, or the worker applying a policy (neither; the action names it:
 * `retention`, `project-deletion`).
 */
import type pg from 'pg';

export type AuditActor =
  | { publicKey: string }
  | { userId: string }
  | { policy: 'retention' | 'project-deletion' };

export interface AuditEntry {
  /** The project concerned; null for a change to an organization itself (then `orgId`). */
  projectId: string | null;
  orgId?: string;
  actor: AuditActor;
  resourceType:
    | 'trace'
    | 'prompt'
    | 'score'
    | 'project'
    | 'organization'
    | 'annotation-queue'
    | 'annotation-queue-item'
    | 'annotation-queue-assignment'
    | 'masking-rule';
  resourceIds: readonly string[];
  /** What a key or a user did; `delete` unless told. A policy's action is its name. */
  action?: 'create' | 'update' | 'delete';
}

type Queryable = Pick<pg.Pool, 'query'>;

export async function audit(db: Queryable, e: AuditEntry): Promise<void> {
  if (e.resourceIds.length === 0) return;
  const { actor } = e;
  const action = 'policy' in actor ? actor.policy : (e.action ?? 'delete');
  await db.query(
    `INSERT INTO audit_logs (id, project_id, org_id, api_key_id, user_id, resource_type, resource_id, action)
     SELECT gen_random_uuid()::text, $1, $7,
            (SELECT id FROM api_keys WHERE public_key = $2 AND project_id = $1), $3, $4, r, $5
     FROM unnest($6::text[]) AS r`,
    [
      e.projectId,
      'publicKey' in actor ? actor.publicKey : null,
      'userId' in actor ? actor.userId : null,
      e.resourceType,
      action,
      [...new Set(e.resourceIds)],
      e.orgId ?? null,
    ],
  );
}
