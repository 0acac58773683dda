/** Gathers the facts the preflight checks evaluate, from the live stores. */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { Coordination } from '../../platform/coordination/store.ts';
import type { PreflightFacts } from './checks.ts';

async function one<T>(client: ClickHouseClient, query: string): Promise<T | undefined> {
  const rs = await client.query({ query, format: 'JSONEachRow' });
  return (await rs.json<T>())[0];
}

export async function gatherFacts(
  pool: pg.Pool,
  analytics: ClickHouseClient,
  redisInfo: () => Promise<string | null>,
  database: string,
): Promise<Omit<PreflightFacts, 'analyticsSchemaVersion'>> {
  const unfinished = await pool
    .query('SELECT name, failed_at, failed_reason FROM background_migrations WHERE finished_at IS NULL')
    .then((r) => r.rows)
    .catch((err: { code?: string }) => {
      // A release 3 database that never had background migrations has nothing unfinished.
      if (err.code === '42P01') return [];
      throw err;
    });
  const pgVersion = await pool.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
  const version = await one<{ v: string }>(analytics, 'SELECT version() AS v');
  const grants = await analytics
    .query({ query: 'SHOW GRANTS', format: 'JSONEachRow' })
    .then(async (rs) => (await rs.json<Record<string, string>>()).map((r) => Object.values(r)[0]!))
    .catch(() => null);
  const size = await one<{ bytes: string }>(
    analytics,
    'SELECT sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND database = currentDatabase()',
  );
  const disk = await one<{ free: string }>(
    analytics,
    "SELECT free_space AS free FROM system.disks WHERE name = 'default'",
  );
  return {
    unfinishedMigrations: unfinished,
    analyticsVersion: version?.v ?? '0',
    postgresVersionNum: Number(pgVersion.rows[0]!.v),
    redisVersion: await redisInfo(),
    grants: grants && grants.length > 0 ? grants : null,
    database,
    analyticsBytes: Number(size?.bytes ?? 0),
    freeDiskBytes: Number(disk?.free ?? 0),
  };
}

/** `redis_version` from INFO, or null when Redis does not answer. */
export async function redisVersion(c: Coordination): Promise<string | null> {
  try {
    return (await c.info()).match(/redis_version:(\S+)/)?.[1] ?? null;
  } catch {
    return null;
  }
}
