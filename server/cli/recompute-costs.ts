/**
 * `observatory recompute-costs --from ISO --to ISO [--project ID] [--batch-size N] [--json]`:
 * recomputes the computed costs of observations that started in [from, to) with the current model
 * definitions (costs the SDK sent stay), in bounded batches, resumable: run the same command again
 * after a kill and it goes on from its checkpoint.
 */

import { openDatastores } from '../app/runtime/datastores.ts';
import { recomputeCosts } from '../features/models/recompute.ts';
import { toChText } from '../features/reads/sql.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { dialectOf } from '../platform/migrations/schema.ts';
import { intFlag, parseFlags, UsageError, WINDOW_FLAGS } from './usage.ts';

const USAGE =
  'usage: observatory recompute-costs --from ISO --to ISO [--project ID] [--batch-size N] [--json]';
const DEFAULT_BATCH = 1000;
const MAX_BATCH = 10_000;

function time(value: string | undefined, name: string): string {
  if (!value) throw new UsageError(`--${name} is required\n${USAGE}`);
  try {
    return toChText(value);
  } catch {
    throw new UsageError(`--${name} must be an ISO 8601 time, got ${value}`);
  }
}

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...WINDOW_FLAGS, 'batch-size': { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(USAGE);
  const from = time(values.from, 'from');
  const to = time(values.to, 'to');
  if (from >= to) throw new UsageError('--from must be before --to');
  const batchSize = intFlag(values['batch-size'], 'batch-size') ?? DEFAULT_BATCH;
  if (batchSize < 1 || batchSize > MAX_BATCH)
    throw new UsageError(`--batch-size must be between 1 and ${MAX_BATCH}`);
  const config = processConfig('recompute-costs');
  const stores = openDatastores(config, 'jobs');
  try {
    const result = await recomputeCosts(
      {
        pool: stores.pool,
        analytics: stores.analytics,
        release: config.mode.release,
        form: config.clickhouse.useLightweightUpdate ? 'lightweight' : 'mutation',
        dialect: dialectOf(config),
      },
      { from, to, projectId: values.project },
      batchSize,
    );
    process.stdout.write(
      values.json
        ? `${JSON.stringify(result)}\n`
        : `costs recomputed from ${result.from} to ${result.to}${result.resumed ? ' (resumed)' : ''}: ${result.examined} observations examined, ${result.updated} updated\n`,
    );
    return 0;
  } finally {
    await stores.close();
  }
}
