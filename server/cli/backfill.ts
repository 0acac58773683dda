/**
 * `observatory backfill run --step N | retry --step N | status [--json]`: one step of the historic
 * backfill chain as a one-shot process (what the operator's Jobs run). Exit 0 when the step is
 * finished (also when it already was), 1 when it failed (reason recorded in background_migrations)
 * or may not start yet (reason printed), 2 on usage or configuration errors.
 */
import { hostname } from 'node:os';
import { openDatastores } from '../app/runtime/datastores.ts';
import { BackfillFailure, BackfillManager, BackfillRefusal } from '../features/backfill/manager.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { dialectOf } from '../platform/migrations/schema.ts';
import { intFlag, parseFlags, UsageError } from './usage.ts';

const USAGE = 'usage: observatory backfill run --step N | retry --step N | status [--json]';

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { step: { type: 'string' }, json: { type: 'boolean' } });
  const action = positionals[0];
  const step = intFlag(values.step, 'step');
  if (action !== 'status' && (action !== 'run' && action !== 'retry' ? true : step === undefined))
    throw new UsageError(USAGE);
  const config = processConfig('backfill');
  const stores = openDatastores(config, 'backfill');
  const manager = new BackfillManager({
    pool: stores.pool,
    analytics: stores.analytics,
    dialect: dialectOf(config),
    settings: config.mode,
    tuning: config.backfill,
    workerId: `${config.podName ?? hostname()}-${process.pid}`,
    log: (msg, fields) => process.stderr.write(`${msg} ${JSON.stringify(fields ?? {})}\n`),
  });
  try {
    if (action === 'status') {
      const status = await manager.status();
      if (values.json) process.stdout.write(`${JSON.stringify({ steps: status })}\n`);
      else
        for (const s of status)
          process.stdout.write(
            `step ${s.step} ${s.status} ${s.chunksDone}/${s.chunksTotal} ${s.failedReason ?? ''}\n`,
          );
      return 0;
    }
    if (action === 'retry') {
      await manager.retry(step!);
      process.stderr.write(`backfill step ${step} will run again from its checkpoint\n`);
      return 0;
    }
    const outcome = await manager.runStep(step!);
    process.stderr.write(
      outcome === 'finished'
        ? `backfill step ${step} finished\n`
        : `backfill step ${step} had already finished\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof BackfillRefusal || err instanceof BackfillFailure) {
      process.stderr.write(`observatory backfill: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await stores.close();
  }
}
