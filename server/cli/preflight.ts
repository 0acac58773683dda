/**
 * `observatory preflight [--json] [--termination-log PATH]`: the checks before upgrading a release 3
 * deployment to version 4, and the schema report an image upgrade within release 4 is judged by.
 * Exit 0 when every check passes (or does not apply), 1 when one fails. The JSON document is
 * `{"ok": boolean, "checks": [{"name", "status": "pass"|"fail"|"not_applicable", "detail"}],
 * "schema": {"database", "latest", "upgradableFrom"}}`. As the operator's Job, the outcome and the
 * failed checks are recorded as the Job's result, and `{"ok", "schema"}` (server/contract/upgrade.ts)
 * goes to the container's termination message, where the operator reads it; whether the upgrade
 * may go ahead is the operator's to decide with the contract's rule.
 */
import { writeFile } from 'node:fs/promises';
import { openDatastores } from '../app/runtime/datastores.ts';
import { TERMINATION_MESSAGE_PATH } from '../contract/backup.ts';
import { OLDEST_UPGRADABLE_SCHEMA_VERSION } from '../contract/schema-versions.ts';
import type { PreflightSummary, SchemaReport } from '../contract/upgrade.ts';
import { evaluatePreflight } from '../features/preflight/checks.ts';
import { gatherFacts, redisVersion } from '../features/preflight/gather.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { redisCoordination } from '../platform/coordination/store.ts';
import { migratorsFor } from '../platform/migrations/schema.ts';
import { endOfJob } from './job-result.ts';
import { parseFlags } from './usage.ts';

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { json: { type: 'boolean' }, 'termination-log': { type: 'string' } });
  const config = processConfig('preflight');
  const stores = openDatastores(config, 'jobs');
  const redis = config.redisUrl ? redisCoordination(config.redisUrl) : undefined;
  try {
    const analytics = migratorsFor(config, stores.pool, stores.analytics).analytics;
    const schema: SchemaReport = {
      database: (await analytics.state()).version,
      latest: analytics.latestKnown,
      upgradableFrom: OLDEST_UPGRADABLE_SCHEMA_VERSION,
    };
    const facts = await gatherFacts(
      stores.pool,
      stores.analytics,
      async () => (redis ? redisVersion(redis) : null),
      config.clickhouse.database,
    );
    const report = { ...evaluatePreflight({ ...facts, analyticsSchemaVersion: schema.database }), schema };
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      for (const c of report.checks) process.stdout.write(`${c.status.padEnd(15)} ${c.name}: ${c.detail}\n`);
      process.stdout.write(
        `schema          analytics version ${schema.database}; this image migrates from ${schema.upgradableFrom} up to ${schema.latest}\n`,
      );
    }
    // Run by hand there is no termination log to write unless one is named.
    const terminationLog =
      values['termination-log'] ?? (config.jobName ? TERMINATION_MESSAGE_PATH : undefined);
    if (terminationLog) {
      const summary: PreflightSummary = { ok: report.ok, schema };
      await writeFile(terminationLog, JSON.stringify(summary)).catch((err: Error) =>
        process.stderr.write(
          `observatory preflight: the summary could not be written to ${terminationLog}: ${err.message}\n`,
        ),
      );
    }
    const failed = report.checks.filter((c) => c.status === 'fail');
    const detail =
      failed.length === 0 ? 'every check passed' : failed.map((c) => `${c.name}: ${c.detail}`).join('; ');
    return await endOfJob(config, stores.pool, 'preflight', report.ok ? 0 : 1, detail);
  } finally {
    await redis?.close();
    await stores.close();
  }
}
