/** The preflight's checks: those of the move from release 3 apply only while the schema is release 3's. */
import { describe, expect, it } from 'vitest';
import { evaluatePreflight, type PreflightFacts } from '../../server/features/preflight/checks.ts';

const facts: PreflightFacts = {
  unfinishedMigrations: [{ name: 'v3-cost-backfill', failed_at: null, failed_reason: null }],
  analyticsVersion: '26.4.1',
  postgresVersionNum: 160_004,
  redisVersion: '7.2.4',
  grants: null,
  database: 'default',
  analyticsBytes: 10 * 2 ** 30,
  freeDiskBytes: 2 ** 30,
  analyticsSchemaVersion: 37,
};

describe('evaluatePreflight', () => {
  const cases: { name: string; version: number; ok: boolean; moveChecks: string }[] = [
    { name: 'before the move to release 4 (schema 37)', version: 37, ok: false, moveChecks: 'fail' },
    { name: 'on an empty database', version: 0, ok: false, moveChecks: 'fail' },
    {
      name: 'before an image upgrade within release 4 (schema 47)',
      version: 47,
      ok: true,
      moveChecks: 'not_applicable',
    },
  ];
  for (const c of cases)
    it(`the background-migration and disk checks ${c.name}: ${c.moveChecks}`, () => {
      const report = evaluatePreflight({ ...facts, analyticsSchemaVersion: c.version });
      const status = (name: string) => report.checks.find((x) => x.name === name)?.status;
      expect(status('version-3-background-migrations-finished')).toBe(c.moveChecks);
      expect(status('disk-headroom')).toBe(c.moveChecks);
      expect(status('postgres-version')).toBe('pass');
      expect(report.ok).toBe(c.ok);
    });
});
