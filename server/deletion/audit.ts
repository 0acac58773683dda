/**
 * The audit log of destructive API calls (who, what, when) in PostgreSQL. The actor is the API
 * key that made the call, recorded by its id (never by a secret).
 */
import type pg from 'pg';

export interface AuditEntry {
  projectId: string;
  /** Public key of the calling API key. */
  publicKey: string;
  resourceType: 'trace' | 'prompt';
  resourceIds: readonly string[];
  action: 'delete';
}

type Queryable = Pick<pg.Pool, 'query'>;

export async function audit(db: Queryable, e: AuditEntry): Promise<void> {
  if (e.resourceIds.length === 0) return;
  await db.query(
    `INSERT INTO audit_logs (id, project_id, api_key_id, resource_type, resource_id, action)
     SELECT gen_random_uuid()::text, $1,
            (SELECT id FROM api_keys WHERE public_key = $2 AND project_id = $1), $3, r, $4
     FROM unnest($5::text[]) AS r`,
    [e.projectId, e.publicKey, e.resourceType, e.action, [...new Set(e.resourceIds)]],
  );
}
