/**
 * The audit log of destructive calls (who, what, when) in PostgreSQL. The actor is the API key
 * that made the call, recorded by its id (never by a secret), or the worker applying a policy (no
 * key; the action names it: `retention`, `project-deletion`).
 */
import type pg from 'pg';

export type AuditActor = { publicKey: string } | { policy: 'retention' | 'project-deletion' };

export interface AuditEntry {
  projectId: string;
  actor: AuditActor;
  resourceType: 'trace' | 'prompt' | 'score' | 'project';
  resourceIds: readonly string[];
}

type Queryable = Pick<pg.Pool, 'query'>;

export async function audit(db: Queryable, e: AuditEntry): Promise<void> {
  if (e.resourceIds.length === 0) return;
  const [publicKey, action] = 'publicKey' in e.actor ? [e.actor.publicKey, 'delete'] : [null, e.actor.policy];
  await db.query(
    `INSERT INTO audit_logs (id, project_id, api_key_id, resource_type, resource_id, action)
     SELECT gen_random_uuid()::text, $1,
            (SELECT id FROM api_keys WHERE public_key = $2 AND project_id = $1), $3, r, $4
     FROM unnest($5::text[]) AS r`,
    [e.projectId, publicKey, e.resourceType, action, [...new Set(e.resourceIds)]],
  );
}
