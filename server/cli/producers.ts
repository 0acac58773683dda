/**
 * `observatory producers --since DURATION [--json]`: keys and SDKs that sent traffic within the
 * window (e.g. `30m`, `24h`, `1h30m`) on paths `events_only` treats differently, each with its
 * consequence: `refused` (batch ingestion of non-score events, legacy endpoints) or
 * `loses-propagation` (OTLP without client-side propagation: accepted, but trace attributes are no
 * longer propagated server-side). The JSON document is `{"since", "producers": [{"projectId",
 * "publicKey", "sdkName", "sdkVersion", "path", "consequence", "firstSeen", "lastSeen",
 * "requests"}], "legacyEvaluators": [{"projectId", "ruleId", "name"}]}`; no `refused` entry means the
 * cutover will refuse no current producer, and each legacy evaluator is a trace-level evaluation
 * rule that stops at the cutover.
 */

import { DURATION_EXAMPLES, parseDuration } from '../contract/duration.ts';
import { producersSince } from '../features/producers/recorder.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { createPool } from '../platform/datastores/postgres.ts';
import { parseFlags, UsageError } from './usage.ts';

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { since: { type: 'string' }, json: { type: 'boolean' } });
  const window = values.since ? parseDuration(values.since) : undefined;
  if (window === undefined)
    throw new UsageError(
      `usage: observatory producers --since DURATION (e.g. ${DURATION_EXAMPLES}) [--json]`,
    );
  const config = processConfig('producers');
  const pool = createPool(config.databaseUrl!, 1);
  try {
    const report = await producersSince(pool, new Date(Date.now() - window));
    if (values.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
      return 0;
    }
    if (report.producers.length === 0)
      process.stdout.write(`no producer events_only would refuse or change since ${report.since}\n`);
    for (const p of report.producers) {
      process.stdout.write(
        `${p.publicKey} ${p.sdkName}@${p.sdkVersion} via ${p.path} (events_only: ${p.consequence}): ${p.requests} requests, last ${p.lastSeen}\n`,
      );
    }
    for (const e of report.legacyEvaluators) {
      process.stdout.write(
        `trace-level evaluator "${e.name}" (project ${e.projectId}, rule ${e.ruleId}) stops at the cutover: recreate it with target observation\n`,
      );
    }
    return 0;
  } finally {
    await pool.end();
  }
}
