/**
 * The ingestion log's figure of `npm run bench -- ingestion-log`: for each case (OTLP protobuf and
 * the batch endpoint, in `dual` and `events_only`; BENCH_INGEST_CASES selects), in the same run:
 *   - direct: the web that answers once the analytics store wrote the rows (no log);
 *   - inline: a web with the log in its default mode, which answers once the write is in the log and
 *     its rows in the store (its group commit writes many requests' rows per statement);
 *   - log: a web that answers once the write is durable in the log (an S3 server and the PostgreSQL
 *     queue) and a worker that drains it: the acknowledgement rate and latency, the end-to-end rate
 *     (first request sent to last file drained) and the visibility lag (accepted to drained, from
 *     the queue's own timestamps, p50/p99);
 *   - the store's ceiling: the same rows in bulk inserts; the ratios inline, log acknowledged and end
 *     to end / ceiling (goal 0.7) and direct / ceiling;
 *   - CPU seconds per 10k spans of the store, the web and the worker, and parts per 10k spans.
 * Requests carry 50 spans (BENCH_INGEST_REQUESTS, default 1000, at BENCH_INGEST_CONCURRENCY, 8).
 * BENCH_CPU_PROF_DIR: the log's web and worker write V8 CPU profiles (`--cpu-prof`) there on exit.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import pgLib from 'pg';
import { INGESTION_LOG_ENV } from '../../server/contract/env.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { startRedis } from '../fixtures/redis.ts';
import { startS3Server } from '../fixtures/s3.ts';
import {
  type AnalyticsServer,
  basicAuth,
  createProject,
  type Env,
  MODE_ENV,
  type Project,
  startAnalyticsServer,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { waitFor } from '../fixtures/wait.ts';
import {
  blockNumbers,
  bulkCeiling,
  PROTOCOLS,
  type Protocol,
  pool,
  rowsWritten,
  SPANS_PER_TRACE,
  STORE_ROOT,
  scoreBody,
  selectedCases,
  send,
} from './ingestion.ts';
import { cpuSeconds, settle } from './proc.ts';
import { line, quantile, ratio } from './report.ts';

/**
 * 1000: a phase of several seconds. With 200 or 600 a phase lasts one to three seconds, and its
 * figure moves with the first claims and the ceiling's own spread more than with the path measured.
 */
const REQUESTS = Number(process.env['BENCH_INGEST_REQUESTS'] ?? 1000);
const CONCURRENCY = Number(process.env['BENCH_INGEST_CONCURRENCY'] ?? 8);
const TRACES = 10;
/** Requests each web serves (and the worker drains) before a case is measured. */
const WARMUP_REQUESTS = 40;
const BUCKET = 'ingestion-log';
const PROF_DIR = process.env['BENCH_CPU_PROF_DIR'];
/** Longest wait for the drain to catch up after the last acknowledgement. */
const DRAIN_WAIT_MS = 10 * 60_000;

interface Phase {
  spansPerSecond: number;
  p50: number;
  p99: number;
  parts: number;
  storeCpu: number;
  webCpu: number;
  workerCpu: number;
}

interface Processes {
  ch: AnalyticsServer;
  web: WebServer;
  worker?: WebServer;
}

/** Sends every request through `p.web`; `until` resolves when the phase's rows are all stored. */
async function phase(
  p: Processes,
  protocol: Protocol,
  bodies: Uint8Array<ArrayBuffer>[],
  headers: Record<string, string>,
  until: () => Promise<void>,
): Promise<Phase & { ackSpansPerSecond: number }> {
  const spans = bodies.length * TRACES * SPANS_PER_TRACE;
  await settle(p.ch.client);
  const blocks = await blockNumbers(p.ch.client);
  const cpu = () =>
    [p.ch.pid, p.web.process.pid, p.worker?.process.pid].map((pid) => (pid ? cpuSeconds(pid) : 0));
  const cpu0 = cpu();
  const started = performance.now();
  const latencies = await pool(bodies.length, CONCURRENCY, async (i) => {
    await send(p.web.url, protocol, headers, bodies[i]!, 'ingestion-log');
  });
  const acked = performance.now();
  await until();
  const done = performance.now();
  const [store, web, worker] = cpu().map((c, i) => c - cpu0[i]!);
  return {
    ackSpansPerSecond: spans / ((acked - started) / 1000),
    spansPerSecond: spans / ((done - started) / 1000),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    parts: (await blockNumbers(p.ch.client)) - blocks,
    storeCpu: store!,
    webCpu: web!,
    workerCpu: worker!,
  };
}

export async function benchIngestionLog(): Promise<void> {
  const storeDir = mkdtempSync(join(STORE_ROOT, 'obs-bench-analytics-'));
  const [pgf, ch, s3, redis] = await Promise.all([
    startPostgres(),
    startAnalyticsServer({ dir: storeDir }),
    startS3Server(undefined, { parentDir: STORE_ROOT }),
    startRedis(),
  ]);
  await s3.createBucket(BUCKET);
  const queue = new pgLib.Pool({ connectionString: pgf.url, max: 2 });
  const base: Env = {
    DATABASE_URL: pgf.url,
    CLICKHOUSE_URL: ch.url,
    REDIS_URL: redis.url,
    LOG_LEVEL: 'warn',
  };
  const logEnv: Env = {
    ...s3.env('ingestionLog', BUCKET),
    [INGESTION_LOG_ENV.waitForStore]: 'false',
    // Only the drain works beside the web: no backfill chain, and the propagation waits an hour.
    SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
    SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '3600',
    ...(PROF_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${PROF_DIR}` } : {}),
  };
  process.stdout.write(
    `\nIngestion log: web + worker draining, against the direct web, analytics server over HTTP (its data and the log's objects in ${STORE_ROOT}); ${REQUESTS} requests of ${TRACES * SPANS_PER_TRACE} spans, ${CONCURRENCY} concurrent\n\n`,
  );
  const cases = selectedCases();
  try {
    for (const mode of ['dual', 'events_only'] as const) {
      if (!cases.some(([, m]) => m === mode)) continue;
      const env = { ...base, ...MODE_ENV[mode] };
      const direct = await startWeb(env);
      const inline = await startWeb({ ...env, ...logEnv, [INGESTION_LOG_ENV.waitForStore]: 'true' });
      const logged = await startWeb({ ...env, ...logEnv });
      const worker = await startWorker({ ...env, ...logEnv });
      try {
        for (const [label, m] of cases) {
          if (m !== mode) continue;
          const protocol = PROTOCOLS[label];
          const make = mode === 'events_only' && protocol.ok === 207 ? scoreBody : protocol.body;
          const bodies = Array.from({ length: REQUESTS }, (_, i) => new Uint8Array(make(i, TRACES)));
          const spans = REQUESTS * TRACES * SPANS_PER_TRACE;
          const tag = `${mode}-${protocol.ok}`;
          const [directProject, inlineProject, logProject, ceilingProject, warmProject] = await Promise.all(
            ['direct', 'inline', 'log', 'ceiling', 'warm'].map((k) => createProject(base, `log-${tag}-${k}`)),
          );
          const headersOf = (p: { publicKey: string; secretKey: string }) => ({
            ...protocol.headers,
            authorization: basicAuth(p as Parameters<typeof basicAuth>[0]),
          });
          const pendingIn = async (projectId: string) =>
            Number(
              (
                await queue.query<{ n: string }>(
                  'SELECT count(*) AS n FROM ingestion_log WHERE project_id = $1 AND drained_at IS NULL',
                  [projectId],
                )
              ).rows[0]!.n,
            );
          const drained = (projectId: string) =>
            waitFor(
              'the drain',
              async () => ((await pendingIn(projectId)) === 0 ? true : undefined),
              DRAIN_WAIT_MS,
            );
          // The figures are the steady state's: each process first serves requests of another
          // project, so loading its modules and tokenizer tables is not counted.
          for (const web of [direct, inline, logged])
            await pool(WARMUP_REQUESTS, CONCURRENCY, async (i) => {
              await send(
                web.url,
                protocol,
                headersOf(warmProject!),
                bodies[i % bodies.length]!,
                'ingestion-log',
              );
            });
          await drained(warmProject!.projectId);
          const d = await phase(
            { ch, web: direct },
            protocol,
            bodies,
            headersOf(directProject!),
            async () => {},
          );
          // A web with the log ends its phase once the queue holds nothing of its project undrained.
          const loggedPhase = (web: WebServer, project: Project) =>
            phase({ ch, web, worker }, protocol, bodies, headersOf(project), async () => {
              await drained(project.projectId);
            });
          const i = await loggedPhase(inline, inlineProject!);
          const l = await loggedPhase(logged, logProject!);
          const lag = (
            await queue.query<{ p50: number; p99: number }>(
              `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
FROM (SELECT extract(epoch FROM drained_at - received_at) * 1000 AS ms FROM ingestion_log WHERE project_id = $1) AS l`,
              [logProject!.projectId],
            )
          ).rows[0]!;
          const written = await rowsWritten(ch.client, logProject!.projectId, ceilingProject!.projectId);
          const ceiling = await bulkCeiling(ch, written, ceilingProject!.projectId, spans);
          const cpu10k = (s: number) => ((s * 10_000) / spans).toFixed(2);
          const per10k = (parts: number) => ((parts * 10_000) / spans).toFixed(0);
          line(`${label}, ${mode}`, '');
          line(
            '  direct: stored spans/s, ack p50, p99',
            `${Math.round(d.spansPerSecond)}, ${d.p50.toFixed(0)} ms, ${d.p99.toFixed(0)} ms`,
          );
          line(
            '  inline (wait for store): stored spans/s, ack p50, p99',
            `${Math.round(i.spansPerSecond)}, ${i.p50.toFixed(0)} ms, ${i.p99.toFixed(0)} ms`,
          );
          line(
            '  log: acknowledged spans/s, ack p50, p99',
            `${Math.round(l.ackSpansPerSecond)}, ${l.p50.toFixed(0)} ms, ${l.p99.toFixed(0)} ms`,
          );
          line('  log: stored spans/s (end to end)', `${Math.round(l.spansPerSecond)}`);
          line(
            '  log: visibility lag p50, p99 (accepted -> drained)',
            `${Number(lag.p50).toFixed(0)} ms, ${Number(lag.p99).toFixed(0)} ms`,
          );
          line('  store ceiling (bulk), spans/s', `${Math.round(ceiling.spansPerSecond)}`);
          line('  ratio inline / ceiling', `${ratio(i.spansPerSecond, ceiling.spansPerSecond)} (goal 0.7)`);
          line(
            '  ratio log acknowledged / ceiling',
            `${ratio(l.ackSpansPerSecond, ceiling.spansPerSecond)} (goal 0.7)`,
          );
          line(
            '  ratio log end to end / ceiling',
            `${ratio(l.spansPerSecond, ceiling.spansPerSecond)} (goal 0.7)`,
          );
          line('  ratio direct / ceiling', ratio(d.spansPerSecond, ceiling.spansPerSecond));
          line('  ratio ack latency p99, log / direct', ratio(l.p99, d.p99));
          line(
            '  parts per 10k spans (direct, inline, log, bulk)',
            `${per10k(d.parts)}, ${per10k(i.parts)}, ${per10k(l.parts)}, ${per10k(ceiling.parts)}`,
          );
          line(
            '  store CPU s per 10k spans (direct, inline, log, bulk)',
            `${cpu10k(d.storeCpu)}, ${cpu10k(i.storeCpu)}, ${cpu10k(l.storeCpu)}, ${cpu10k(ceiling.storeCpu)}`,
          );
          line(
            '  web + worker CPU s per 10k spans (direct, inline, log)',
            `${cpu10k(d.webCpu)}, ${cpu10k(i.webCpu + i.workerCpu)}, ${cpu10k(l.webCpu + l.workerCpu)}`,
          );
          line('  log: web, worker CPU s per 10k spans', `${cpu10k(l.webCpu)}, ${cpu10k(l.workerCpu)}`);
        }
      } finally {
        await Promise.all([direct.stop(), inline.stop(), logged.stop(), worker.stop()]);
      }
    }
  } finally {
    await queue.end();
    await Promise.all([ch.stop(), s3.stop(), redis.stop(), pgf.stop()]);
  }
}
