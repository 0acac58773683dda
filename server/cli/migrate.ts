/**
 * `observatory migrate up [--to N] | down --to N [--log-wait-seconds S] | status [--json]`: the schema of both stores.
 * Versions are the analytics schema's (§3 of the architecture); the relational schema follows the
 * release (up applies all it knows; down never touches it, as a rollback to release 3 needs no
 * relational change). `down` first waits (`--log-wait-seconds`, 600 by default) for the writes the
 * ingestion log accepted before it to be drained, and is refused while any is left: the tables
 * they target are the ones it drops. As the operator's Job, `up` and `down` record their outcome
 * as the Job's result.
 */

import type pg from 'pg';
import { openDatastores } from '../app/runtime/datastores.ts';
import { RELEASE_3_SCHEMA_VERSION } from '../contract/schema-versions.ts';
import { invalidateUnproven } from '../features/backfill/proof.ts';
import { pendingBefore } from '../features/ingestion/log/queue.ts';
import { awaitLogDrained } from '../features/ingestion/log/wait-drained.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { SchemaAheadError } from '../platform/migrations/analytics/runner.ts';
import { migratorsFor } from '../platform/migrations/schema.ts';
import { endOfJob } from './job-result.ts';
import { intFlag, parseFlags, UsageError } from './usage.ts';

export interface MigrationStatus {
  release: '3' | '4';
  analytics: { version: number; dirty: boolean; latestKnown: number; release3Version: number };
  relational: { version: number; latestKnown: number };
}

/** `down` did not start: the ingestion log still holds writes for the tables it drops. */
class RollbackRefused extends Error {
  override name = 'RollbackRefused';
}

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    to: { type: 'string' },
    json: { type: 'boolean' },
    'log-wait-seconds': { type: 'string' },
  });
  const action = positionals[0];
  if (action !== 'up' && action !== 'down' && action !== 'status') {
    throw new UsageError(
      'usage: observatory migrate up [--to N] | down --to N [--log-wait-seconds S] | status [--json]',
    );
  }
  const to = intFlag(values.to, 'to');
  if (action === 'down' && to === undefined) throw new UsageError('migrate down needs --to N');
  const logWaitMs = (intFlag(values['log-wait-seconds'], 'log-wait-seconds') ?? 600) * 1000;
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
      const logBehind = await awaitLogDrained({
        pending: await logPending(stores.pool, Date.now()),
        shouldStop: () => false,
        maxWaitMs: logWaitMs,
        recheckMs: 1_000,
        onWait: (pending) => say(`waiting for ${pending} writes of the ingestion log to be drained`),
      });
      if (logBehind) throw new RollbackRefused(`the analytics schema was not rewound: ${logBehind}`);
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
    if (err instanceof SchemaAheadError || err instanceof RollbackRefused) {
      say(`observatory migrate: ${err.message}`);
      return await end(1, err.message);
    }
    throw err;
  } finally {
    await stores.close();
  }
}

/** The log's writes accepted before `beforeMs` and not drained; none without the log's table. */
async function logPending(pool: pg.Pool, beforeMs: number): Promise<() => Promise<number>> {
  const { rows } = await pool.query<{ t: string | null }>("SELECT to_regclass('ingestion_log') AS t");
  return rows[0]!.t === null ? async () => 0 : () => pendingBefore(pool, beforeMs);
}
