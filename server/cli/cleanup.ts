/**
 * `observatory cleanup truncate-legacy-tables`: the optional cleanup after the cutover. Truncates
 * (never drops) the analytics `traces` and `observations` tables. Irreversible: it removes the
 * backfill's source and the last way back to a version 3 read path, so it refuses unless the
 * write mode is events_only. As the operator's Job, its success is recorded as the Job's result.
 */

import { openDatastores } from '../app/runtime/datastores.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { onCluster } from '../platform/migrations/analytics/dialect.ts';
import { dialectOf } from '../platform/migrations/schema.ts';
import { endOfJob } from './job-result.ts';
import { parseFlags, UsageError } from './usage.ts';

export async function run(args: string[]): Promise<number> {
  const { positionals } = parseFlags(args, {});
  if (positionals[0] !== 'truncate-legacy-tables')
    throw new UsageError('usage: observatory cleanup truncate-legacy-tables');
  const config = processConfig('cleanup');
  if (config.mode.release !== '4' || config.mode.writeMode !== 'events_only') {
    process.stderr.write(
      'observatory cleanup: refused: truncating the legacy tables is allowed only in write mode events_only\n',
    );
    return 1;
  }
  const stores = openDatastores(config, 'jobs');
  try {
    const tables = ['traces', 'observations'];
    for (const table of tables) {
      await stores.analytics.command({
        query: `TRUNCATE TABLE IF EXISTS ${table}${onCluster(dialectOf(config))}`,
      });
      process.stderr.write(`truncated ${table}\n`);
    }
    return await endOfJob(
      config,
      stores.pool,
      'cleanup truncate-legacy-tables',
      0,
      `truncated ${tables.join(', ')}`,
    );
  } finally {
    await stores.close();
  }
}
