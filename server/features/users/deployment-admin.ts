/**
 * A deployment admin: an owner of the deployment's own organization, `default`, which the relational
 * migrations create with the deployment and where `observatory dev` and `observatory create-user
 * --role owner` (without `--project` or `--org`) place their user. Its owners see facts about the
 * whole deployment (the backfill chain, the propagation, every project's producers); owners of
 * other organizations or of single projects see only their own projects.
 */
import type pg from 'pg';

export const DEPLOYMENT_ORG = 'default';

export async function isDeploymentAdmin(pool: pg.Pool, userId: string): Promise<boolean> {
  const r = await pool.query(
    `SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2 AND role = 'owner'`,
    [DEPLOYMENT_ORG, userId],
  );
  return (r.rowCount ?? 0) > 0;
}
