/**
 * `observatory migrate up [--to N] | down --to N | status [--json]`: the schema of both stores.
 * Versions are the analytics schema's (§3 of the architecture); the relational schema follows the
 * release (up applies all it knows; down never touches it, as a rollback to release 3 needs no
 * relational change). As the operator's Job, `up` and `down` record their outcome as the Job's result.
 */

import { invalidateUnproven } from '../backfill/proof.ts';
import { processConfig } from '../config/env.ts';
import { RELEASE_3_SCHEMA_VERSION } from '../contract/schema-versions.ts';
import { SchemaAheadError } from '../migrations/analytics/runner.ts';
import { openDatastores } from '../runtime/datastores.ts';
import { migratorsFor } from '../runtime/schema.ts';
import { endOfJob } from './job-result.ts';
import { intFlag, parseFlags, UsageError } from './usage.ts';

export interface MigrationStatus {
  release: '3' | '4';
  analytics: { version: number; dirty: boolean; latestKnown: number; release3Version: number };
  relational: { version: number; latestKnown: number };
}

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { to: { type: 'string' }, json: { type: 'boolean' } });
  const action = positionals[0];
  if (action !== 'up' && action !== 'down' && action !== 'status') {
    throw new UsageError('usage: observatory migrate up [--to N] | down --to N | status [--json]');
  }
  const to = intFlag(values.to, 'to');
  if (action === 'down' && to === undefined) throw new UsageError('migrate down needs --to N');
  const config = processConfig('migrate');
  const stores = openDatastores(config, 'jobs');
  const m = migratorsFor(config, stores.pool, stores.analytics);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  // `status` only reads: it is no Job's work.
  const end = (code: number, detail: string) =>
    action === 'status' ? code : endOfJob(config, stores.pool, `migrate ${action}`, code, detail);
  try {
    if (action === 'up') {
      await m.relational.up();
      const applied = await m.analytics.up(to, say);
      if (applied.length === 0) say('analytics schema is up to date');
    } else if (action === 'down') {
      const rewound = await m.analytics.down(to!, say);
      if (rewound.length === 0) say(`analytics schema is already at or below ${to}`);
      // The backfill's records must not outlive the tables they describe.
      const reset = await invalidateUnproven(stores.pool, stores.analytics);
      if (reset.length > 0) say(`backfill steps ${reset.join(', ')} reset: their output was dropped`);
    }
    const state = await m.analytics.state();
    const status: MigrationStatus = {
      release: config.mode.release,
      analytics: {
        ...state,
        latestKnown: m.analytics.latestKnown,
        release3Version: RELEASE_3_SCHEMA_VERSION,
      },
      relational: { version: await m.relational.version(), latestKnown: m.relational.latestKnown },
    };
    const summary = `analytics schema version ${state.version}${state.dirty ? ' (dirty)' : ''} of ${m.analytics.latestKnown} known; relational ${status.relational.version}`;
    if (values.json) process.stdout.write(`${JSON.stringify(status)}\n`);
    else if (action === 'status') process.stdout.write(`${summary}\n`);
    return await end(0, summary);
  } catch (err) {
    if (err instanceof SchemaAheadError) {
      say(`observatory migrate: ${err.message}`);
      return await end(1, err.message);
    }
    throw err;
  } finally {
    await stores.close();
  }
}
