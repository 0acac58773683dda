/**
 * Trace deletion figure of `npm run bench`: BENCH_DELETION_TRACES traces (default 60 000, with 4
 * observations, their events and a score each; at 100 000 the store's single DELETE, the baseline,
 * did not end within 20 min here) deleted the way the API does it (60-odd queued
 * deletions of 1000 ids, run by the worker's batches), against the store's own lightweight
 * `DELETE FROM ... WHERE trace_id IN (...)` of the same rows of an identical project, one statement
 * per table, in the same run on the same tables. Reported: the queued deletion's total time and its
 * longest batch (the longest any lease, lock or delete statement is held) as ratios to the
 * baseline, and the slowest request (an enqueue).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  runTraceDeletionBatch,
  TRACE_DELETION_BATCH,
} from '../../server/features/deletion/deletion-worker.ts';
import { enqueueTraceDeletion } from '../../server/features/deletion/queue.ts';
import { traceDeleteStatement } from '../../server/features/deletion/trace-deletion-sql.ts';
import type { TraceDeletionDeps } from '../../server/features/deletion/traces.ts';
import { createProject } from '../../server/features/projects/keys.ts';
import { traceTables } from '../../server/features/tombstones/tables.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { line, ratio, seconds } from './report.ts';

const TRACES = Number(process.env['BENCH_DELETION_TRACES'] ?? 60_000);
const OBS_PER_TRACE = 4;
/** The API's bulk bound: ids per queued deletion. */
const PER_REQUEST = 1000;

export async function benchDeletion(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'obs-bench-deletion-'));
  const ch = createAnalyticsClient({ url: `chdb://${dir}` });
  const pgf = await startPostgres();
  const pool = createPool(pgf.url, 4);
  const run = (query: string, params: Record<string, unknown> = {}) =>
    ch.command({ query, query_params: params, clickhouse_settings: { max_execution_time: 0 } });
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(ch, SINGLE_NODE, migrationsFor('4')).up();
    const deps: TraceDeletionDeps = {
      pool,
      analytics: ch,
      release: '4',
      form: 'lightweight',
      dialect: SINGLE_NODE,
    };
    const seed = async (projectId: string) => {
      const p = { p: projectId };
      const trace = `concat('t', toString(number))`;
      const obsTrace = `concat('t', toString(intDiv(number, ${OBS_PER_TRACE})))`;
      await run(
        `INSERT INTO traces (id, project_id, timestamp, name, event_ts) SELECT ${trace}, {p:String}, now64(3), 't', now64(3) FROM numbers(${TRACES})`,
        p,
      );
      await run(
        `INSERT INTO observations (id, trace_id, project_id, type, start_time, event_ts) SELECT concat('o', toString(number)), ${obsTrace}, {p:String}, 'SPAN', now64(3), now64(3) FROM numbers(${TRACES * OBS_PER_TRACE})`,
        p,
      );
      await run(
        `INSERT INTO events_full (span_id, trace_id, project_id, start_time) SELECT concat('o', toString(number)), ${obsTrace}, {p:String}, now64(6) FROM numbers(${TRACES * OBS_PER_TRACE})`,
        p,
      );
      await run(
        `INSERT INTO scores (id, trace_id, project_id, timestamp, name, value, source, event_ts) SELECT concat('s', toString(number)), ${trace}, {p:String}, now64(3), 'q', 1, 'API', now64(3) FROM numbers(${TRACES})`,
        p,
      );
    };
    const rowsLeft = async (projectId: string) => {
      let n = 0;
      for (const t of traceTables('4')) {
        const rs = await ch.query({
          query: `SELECT count() AS n FROM ${t} WHERE project_id = {p:String}`,
          query_params: { p: projectId },
          format: 'JSONEachRow',
        });
        n += Number((await rs.json<{ n: string }>())[0]!.n);
      }
      return n;
    };
    const ids = Array.from({ length: TRACES }, (_, i) => `t${i}`);
    const [base, queued] = [
      await createProject(pool, 'bench-del-base'),
      await createProject(pool, 'bench-del-q'),
    ];
    await seed(base.projectId);
    await seed(queued.projectId);
    const seeded = await rowsLeft(base.projectId);

    // Baseline: one lightweight DELETE per table naming every id.
    const baseline = await seconds(async () => {
      for (const t of traceTables('4')) {
        const s = traceDeleteStatement(t, 'lightweight', SINGLE_NODE, base.projectId, ids);
        await ch.command({ query: s.query, query_params: s.params });
      }
    });
    if ((await rowsLeft(base.projectId)) !== 0) throw new Error('the baseline DELETE left rows');

    // Queued: the requests' enqueues, then the worker's batches until none waits.
    const requests: number[] = [];
    for (let i = 0; i < TRACES; i += PER_REQUEST) {
      const batchIds = ids.slice(i, i + PER_REQUEST);
      requests.push(
        await seconds(() => enqueueTraceDeletion(pool, queued.projectId, { publicKey: 'bench' }, batchIds)),
      );
    }
    const batches: number[] = [];
    const worker = await seconds(async () => {
      for (;;) {
        let done: unknown;
        batches.push(await seconds(async () => (done = await runTraceDeletionBatch(deps, 'bench'))));
        if (!done) break;
      }
    });
    batches.pop(); // the empty claim that found nothing left
    if ((await rowsLeft(queued.projectId)) !== 0) throw new Error('the queued deletion left rows');

    const longest = Math.max(...batches);
    process.stdout.write(
      `\nTrace deletion (${TRACES} traces, ${seeded} rows in ${traceTables('4').length} tables, lightweight deletes)\n\n`,
    );
    line('store DELETE FROM ... WHERE trace_id IN (all ids), per table', `${baseline.toFixed(2)} s`);
    line(
      `queued: ${requests.length} requests of ${PER_REQUEST}, ${batches.length} batches of <= ${TRACE_DELETION_BATCH}`,
      `${worker.toFixed(2)} s`,
    );
    line('  ratio queued total / store DELETE', ratio(worker, baseline));
    line('  longest batch (lease, lock, statements held)', `${longest.toFixed(2)} s`);
    line('  ratio longest batch / store DELETE', ratio(longest, baseline));
    line('  slowest request (enqueue)', `${(Math.max(...requests) * 1000).toFixed(1)} ms`);
  } finally {
    await ch.close();
    await pool.end();
    await pgf.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
