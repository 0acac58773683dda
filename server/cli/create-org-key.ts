/**
 * `observatory create-org-key [--org ID] [--note TEXT] [--data DIR] [--json]`: prints a new
 * organization-scoped key pair, once. Such a key administers the organization's projects, their API
 * keys and the memberships through the public API; it reads no project's data. `--data DIR`: in the
 * database of the `observatory dev` running on DIR, not DATABASE_URL's.
 */

import { createOrganizationKey } from '../features/projects/organizations.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { createPool } from '../platform/datastores/postgres.ts';
import { RelationalMigrator } from '../platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../platform/migrations/relational/versions.ts';
import { devDatabase } from './dev-data.ts';
import { parseFlags, UsageError } from './usage.ts';

const USAGE = 'usage: observatory create-org-key [--org ID] [--note TEXT] [--data DIR] [--json]';

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    org: { type: 'string', default: 'default' },
    note: { type: 'string' },
    data: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!values.org?.trim()) throw new UsageError(USAGE);
  const config = processConfig('create-org-key', devDatabase(values.data));
  const pool = createPool(config.databaseUrl!, 1);
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor(config.mode.release)).up();
    const org = await pool.query('SELECT 1 FROM organizations WHERE id = $1', [values.org]);
    if (org.rowCount === 0) throw new UsageError(`--org: organization ${values.org} does not exist`);
    const key = await createOrganizationKey(pool, values.org, values.note?.trim() || null);
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ orgId: values.org, publicKey: key.publicKey, secretKey: key.secretKey })}\n`
        : `organization ${values.org}\npublic key ${key.publicKey}\nsecret key ${key.secretKey} (shown once)\n`,
    );
    return 0;
  } finally {
    await pool.end();
  }
}
