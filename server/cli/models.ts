/**
 * `observatory models load FILE [--json]`: loads built-in model definitions (prices) from a price
 * file into PostgreSQL, so prices change without a release. An entry replaces the stored one of
 * its id unless the stored prices were read at a later date.
 */

import { PriceFileError, readPriceFile } from '../features/models/price-file.ts';
import { loadBuiltInModels } from '../features/models/store.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { createPool } from '../platform/datastores/postgres.ts';
import { RelationalMigrator } from '../platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../platform/migrations/relational/versions.ts';
import { parseFlags, UsageError } from './usage.ts';

const USAGE = 'usage: observatory models load FILE [--json]';

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { json: { type: 'boolean' } });
  const [sub, file, ...rest] = positionals;
  if (sub !== 'load' || !file || rest.length > 0) throw new UsageError(USAGE);
  let entries: ReturnType<typeof readPriceFile>;
  try {
    entries = readPriceFile(file);
  } catch (err) {
    if (err instanceof PriceFileError || (err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UsageError((err as Error).message);
    throw err;
  }
  const config = processConfig('models');
  const pool = createPool(config.databaseUrl!, 1);
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor(config.mode.release)).up();
    const result = await loadBuiltInModels(pool, entries);
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ file, entries: entries.length, ...result })}\n`
        : `${file}: ${entries.length} entries, ${result.inserted} inserted, ${result.updated} updated, ${result.unchanged} unchanged\n`,
    );
    return 0;
  } finally {
    await pool.end();
  }
}
