/**
 * `observatory preflight [--json]`: the checks before upgrading a release 3 deployment to version
 * 4. Exit 0 when every check passes (or does not apply), 1 when one fails. The JSON document is
 * `{"ok": boolean, "checks": [{"name", "status": "pass"|"fail"|"not_applicable", "detail"}]}`.
 * As the operator's Job, the outcome and the failed checks are recorded as the Job's result.
 */
import { processConfig } from '../config/env.ts';
import { redisCoordination } from '../coordination/store.ts';
import { evaluatePreflight } from '../preflight/checks.ts';
import { gatherFacts, redisVersion } from '../preflight/gather.ts';
import { openDatastores } from '../runtime/datastores.ts';
import { endOfJob } from './job-result.ts';
import { parseFlags } from './usage.ts';

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { json: { type: 'boolean' } });
  const config = processConfig('preflight');
  const stores = openDatastores(config, 'jobs');
  const redis = config.redisUrl ? redisCoordination(config.redisUrl) : undefined;
  try {
    const facts = await gatherFacts(
      stores.pool,
      stores.analytics,
      async () => (redis ? redisVersion(redis) : null),
      config.clickhouse.database,
    );
    const report = evaluatePreflight(facts);
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else
      for (const c of report.checks) process.stdout.write(`${c.status.padEnd(15)} ${c.name}: ${c.detail}\n`);
    const failed = report.checks.filter((c) => c.status === 'fail');
    const detail =
      failed.length === 0 ? 'every check passed' : failed.map((c) => `${c.name}: ${c.detail}`).join('; ');
    return await endOfJob(config, stores.pool, 'preflight', report.ok ? 0 : 1, detail);
  } finally {
    await redis?.close();
    await stores.close();
  }
}
