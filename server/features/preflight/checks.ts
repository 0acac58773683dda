/**
 * Checks before moving a release 3 deployment to version 4 (the spec's upgrade preconditions), and
 * before an image upgrade within release 4, where the checks of the move itself (release 3's
 * background migrations, the backfill's disk headroom) do not apply. Pure evaluation over facts
 * gathered by `gatherFacts`; each check is named in the report.
 */

import { RELEASE_3_SCHEMA_VERSION } from '../../contract/schema-versions.ts';
import { BACKFILL_CHAIN } from '../backfill/chain.ts';

export type CheckStatus = 'pass' | 'fail' | 'not_applicable';
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
}
export interface PreflightReport {
  ok: boolean;
  checks: Check[];
}

export interface PreflightFacts {
  unfinishedMigrations: { name: string; failed_at: string | null; failed_reason: string | null }[];
  analyticsVersion: string;
  postgresVersionNum: number;
  redisVersion: string | null;
  /** SHOW GRANTS output; null where the store has no access control to ask. */
  grants: string[] | null;
  database: string;
  analyticsBytes: number;
  freeDiskBytes: number;
  /** The analytics schema version the database is at. */
  analyticsSchemaVersion: number;
}

/** The privileges version 4 needs on the default database (spec, "Analytics database privileges"). */
export const REQUIRED_PRIVILEGES = [
  'DROP VIEW',
  'ALTER ADD COLUMN',
  'ALTER MODIFY COLUMN',
  'ALTER VIEW MODIFY QUERY',
  'ALTER ADD INDEX',
  'ALTER DROP INDEX',
  'ALTER MATERIALIZE INDEX',
  'SELECT ON system.parts',
  'SELECT ON system.mutations',
  'SELECT ON system.tables',
  'SELECT ON system.processes',
  'SELECT ON system.query_log',
];

export const V4_CHAIN_NAMES = new Set(BACKFILL_CHAIN.map((s) => s.name));

function versionAtLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split('.').map((x) => Number.parseInt(x, 10));
  return a > major || (a === major && b >= minor);
}

/** Whether one `GRANT <actions> ON <target> TO ...` line covers an action on a target. */
function grantCovers(line: string, action: string, target: string): boolean {
  const m = line.toUpperCase().match(/^GRANT (.+) ON (\S+) TO /);
  if (!m) return false;
  const [db] = target.split('.');
  if (m[2] !== target && m[2] !== `${db}.*` && m[2] !== '*.*') return false;
  return m[1]!.split(/,\s*(?![^(]*\))/).some((granted) => {
    const g = granted.replace(/\(.*\)$/, '').trim();
    return (
      g === 'ALL' ||
      action === g ||
      action.startsWith(`${g} `) ||
      (g === 'ALTER TABLE' && action.startsWith('ALTER ') && !action.startsWith('ALTER VIEW'))
    );
  });
}

/** Which required privileges a SHOW GRANTS listing lacks, for the given database. */
export function missingPrivileges(grants: string[], database: string): string[] {
  return REQUIRED_PRIVILEGES.filter((p) => {
    const [action, target] = p.split(' ON ') as [string, string | undefined];
    return !grants.some((line) => grantCovers(line, action, (target ?? `${database}.*`).toUpperCase()));
  });
}

export function evaluatePreflight(f: PreflightFacts): PreflightReport {
  const checks: Check[] = [];
  const onRelease4 = f.analyticsSchemaVersion > RELEASE_3_SCHEMA_VERSION;
  const release4 = (name: string): Check => ({
    name,
    status: 'not_applicable',
    detail: `the analytics schema is at version ${f.analyticsSchemaVersion}: release 4 runs already`,
  });
  const unfinished = f.unfinishedMigrations.filter((m) => !V4_CHAIN_NAMES.has(m.name));
  if (onRelease4) checks.push(release4('version-3-background-migrations-finished'));
  else
    checks.push({
      name: 'version-3-background-migrations-finished',
      status: unfinished.length === 0 ? 'pass' : 'fail',
      detail:
        unfinished.length === 0
          ? 'no unfinished background migration'
          : `unfinished: ${unfinished.map((m) => `${m.name}${m.failed_at ? ` (failed: ${m.failed_reason})` : ''}`).join(', ')}; version 4 migrations would permanently delete rows they never copied`,
    });
  checks.push({
    name: 'analytics-version',
    status: versionAtLeast(f.analyticsVersion, 25, 12) ? 'pass' : 'fail',
    detail: `analytics database ${f.analyticsVersion}; needs >= 25.12 (recommended 26.4)`,
  });
  const pgMajor = Math.floor(f.postgresVersionNum / 10_000);
  checks.push({
    name: 'postgres-version',
    status: pgMajor >= 15 ? 'pass' : 'fail',
    detail: `PostgreSQL ${pgMajor}; needs >= 15 (recommended 16)`,
  });
  checks.push({
    name: 'redis-version',
    status: f.redisVersion === null ? 'fail' : versionAtLeast(f.redisVersion, 7, 0) ? 'pass' : 'fail',
    detail:
      f.redisVersion === null
        ? 'Redis not reachable'
        : `Redis ${f.redisVersion}; needs >= 7.0 (recommended 7.2)`,
  });
  if (f.grants === null) {
    checks.push({
      name: 'analytics-privileges',
      status: 'not_applicable',
      detail: 'the analytics store has no access control',
    });
  } else {
    const missing = missingPrivileges(f.grants, f.database);
    checks.push({
      name: 'analytics-privileges',
      status: missing.length === 0 ? 'pass' : 'fail',
      detail: missing.length === 0 ? 'all required privileges granted' : `missing: ${missing.join(', ')}`,
    });
  }
  const needed = 3 * f.analyticsBytes;
  if (onRelease4) checks.push(release4('disk-headroom'));
  else
    checks.push({
      name: 'disk-headroom',
      status: f.freeDiskBytes >= needed ? 'pass' : 'fail',
      detail: `${gib(f.freeDiskBytes)} free; the backfill needs about 3x the analytics data (${gib(f.analyticsBytes)}): ${gib(needed)}`,
    });
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
