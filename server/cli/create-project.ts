/**
 * `observatory create-project --name NAME [--data DIR] [--json]`: prints the new project's keys,
 * once. `--data DIR`: in the database of the `observatory dev` running on DIR, not DATABASE_URL's.
 */

import { createProject } from '../features/projects/keys.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { createPool } from '../platform/datastores/postgres.ts';
import { RelationalMigrator } from '../platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../platform/migrations/relational/versions.ts';
import { devDatabase } from './dev-data.ts';
import { parseFlags, UsageError } from './usage.ts';

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    name: { type: 'string' },
    data: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!values.name?.trim())
    throw new UsageError('usage: observatory create-project --name NAME [--data DIR] [--json]');
  const config = processConfig('create-project', devDatabase(values.data));
  const pool = createPool(config.databaseUrl!, 1);
  try {
    // The projects table must exist; applying the relational migrations is idempotent.
    await new RelationalMigrator(pool, relationalMigrationsFor(config.mode.release)).up();
    const keys = await createProject(pool, values.name.trim());
    process.stdout.write(
      values.json
        ? `${JSON.stringify(keys)}\n`
        : `project ${keys.projectId}\npublic key ${keys.publicKey}\nsecret key ${keys.secretKey} (shown once)\n`,
    );
    return 0;
  } finally {
    await pool.end();
  }
}
