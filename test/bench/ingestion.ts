/**
 * Ingestion figure of `npm run bench`: spans per second one web process acknowledges (the answer
 * comes only once the analytics store acknowledged the rows), with the analytics server as its own
 * process over HTTP (the topology a cluster runs). For OTLP protobuf (gzip) and the batch endpoint,
 * each in `dual` and `events_only`:
 *   - spans/s and p50/p99 request latency at BENCH_INGEST_CONCURRENCY concurrent requests,
 *   - the store's own rate: the very rows the web wrote, read back and inserted again under another
 *     project straight through @clickhouse/client, (a) one insert per table per request at the same
 *     concurrency, as a client without batching would, and (b) the store's ceiling: one insert per
 *     table of 10 000 rows at most, one after the other, three times, the median rate (the figures
 *     are web / store),
 *   - the analytics server's CPU seconds per 10k spans in each phase, and the web's: on one machine
 *     the web's own CPU comes out of the store's, which the rate ratio mixes in and this does not,
 *   - parts created per 10k spans: block numbers allocated in every MergeTree table during the run
 *     (each synchronous insert that creates a part takes one; the embedded engine has no part_log).
 * Each timed phase starts once the store has no merge running. Requests carry 50 spans (10 traces: a
 * root, two small spans, two generations with a few KB of input and output); the OTLP cases also
 * run with full exports (the SDKs' 512-span batch). BENCH_INGEST_CASES
 * (`otlp:dual,batch:dual,otlp:events_only,batch:events_only`) selects cases. Growth of the OTLP
 * cases: the same at 4x the requests, and at 4x the concurrency.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { startPostgres } from '../fixtures/postgres.ts';
import {
  type AnalyticsServer,
  basicAuth,
  createProject,
  type Env,
  MODE_ENV,
  type Project,
  startAnalyticsServer,
  startWeb,
  type WebServer,
} from '../fixtures/service.ts';
import { cpuSeconds, settle } from './proc.ts';
import { line, quantile, ratio } from './report.ts';

const REQUESTS = Number(process.env['BENCH_INGEST_REQUESTS'] ?? 200);
const CONCURRENCY = Number(process.env['BENCH_INGEST_CONCURRENCY'] ?? 8);
/** Growth from 1x to 4x of the OTLP cases (BENCH_INGEST_GROWTH=0 skips it): 4x requests, then 4x concurrency. */
const GROWTH = process.env['BENCH_INGEST_GROWTH'] !== '0';
const MAX_RETRIES = 10;
export const SPANS_PER_TRACE = 5;
/** Small exports: 10 traces (50 spans) per request, what a quiet producer's timer flush sends. */
const SMALL_TRACES = 10;
/**
 * Full exports: the SDKs' default batch (an export as soon as 512 spans are queued, the OTel batch
 * span processor's size in the Python and JS/TS SDKs), rounded down to whole traces: what every
 * request of a busy producer carries. BENCH_INGEST_FULL_REQUESTS of them (default 40).
 */
const FULL_TRACES = Math.floor(512 / SPANS_PER_TRACE);
const FULL_REQUESTS = Number(process.env['BENCH_INGEST_FULL_REQUESTS'] ?? 40);
/**
 * Where the analytics server keeps its data, and the S3 server the ingestion log's objects
 * (BENCH_STORE_DIR, default /dev/shm). On an ext4 without a journal (this machine's root), every
 * file creation scans past the inodes freed in the last seconds (`find_inode_bit` ->
 * `recently_deleted`): measured at 30 % of the store's CPU during the web's run, a cost of creating
 * files that journaled ext4 and XFS volumes do not have and that falls on small inserts most (and on
 * the log, one object per group of requests). A tmpfs keeps that artefact out of both sides of the
 * ratio.
 */
export const STORE_ROOT = process.env['BENCH_STORE_DIR'] ?? '/dev/shm';
/** Tables ingestion writes directly (events_core is filled by the materialized view). */
const WRITTEN_TABLES = ['traces', 'observations', 'scores', 'observations_batch_staging', 'events_full'];

/** A few KB of chat-like text, different per call so compression does not flatter the payload. */
function text(seed: number, bytes: number): string {
  const words = [
    'the',
    'model',
    'answered',
    'question',
    'about',
    'invoices',
    'refund',
    'policy',
    'user',
    'tool',
  ];
  const out: string[] = [];
  let n = seed;
  let size = 0;
  while (size < bytes) {
    n = (n * 1_103_515_245 + 12_345) % 2 ** 31;
    const w = words[n % words.length]!;
    out.push(w);
    size += w.length + 1;
  }
  return out.join(' ');
}

/** What the generations of a bench request carry: their model name, and whether they report usage. */
export interface GenerationShape {
  model: string;
  usage: boolean;
}
const PRICED: GenerationShape = { model: 'gpt-4o', usage: true };

/** The input and output of generation `i` of the trace with this seed (a user message, the reply). */
function generationIo(seed: number, i: number) {
  return {
    input: [{ role: 'user', content: text(seed + i, 2000) }],
    output: { role: 'assistant', content: text(seed + i + 5, 1500) },
  };
}

/** KB of generation input and output (as JSON) in request `request` of `traces` traces. */
export function generationKb(request: number, traces: number): number {
  let bytes = 0;
  for (let t = 0; t < traces; t++)
    for (let i = 0; i < 2; i++) {
      const io = generationIo(request * 10_000 + t * 10, i);
      bytes += Buffer.byteLength(JSON.stringify(io.input)) + Buffer.byteLength(JSON.stringify(io.output));
    }
  return bytes / 1024;
}

export function otlpBody(request: number, traces: number, gen: GenerationShape = PRICED): Buffer {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'bench' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('langfuse-sdk', '4.0.0');
  const t0 = Date.now() / 1000;
  for (let t = 0; t < traces; t++) {
    const seed = request * 10_000 + t * 10;
    const root = tracer.startSpan('request', { kind: SpanKind.SERVER, startTime: t0 });
    root.setAttribute('langfuse.trace.name', 'chat');
    root.setAttribute('user.id', `u${seed % 97}`);
    // No context manager is registered: children name their parent explicitly.
    const parent = trace.setSpan(context.active(), root);
    for (let i = 0; i < 2; i++) tracer.startSpan(`step-${i}`, { startTime: t0 }, parent).end(t0 + 0.01);
    for (let i = 0; i < 2; i++) {
      const g = tracer.startSpan('llm', { startTime: t0 }, parent);
      g.setAttribute('langfuse.observation.type', 'generation');
      g.setAttribute('gen_ai.request.model', gen.model);
      const io = generationIo(seed, i);
      g.setAttribute('langfuse.observation.input', JSON.stringify(io.input));
      g.setAttribute('langfuse.observation.output', JSON.stringify(io.output));
      if (gen.usage) {
        g.setAttribute('gen_ai.usage.input_tokens', 500);
        g.setAttribute('gen_ai.usage.output_tokens', 300);
      }
      g.end(t0 + 0.5);
    }
    root.end(t0 + 1);
  }
  const spans: ReadableSpan[] = exporter.getFinishedSpans();
  return gzipSync(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!));
}

/** events_only takes only scores on the batch endpoint (spans arrive over OTLP): 50 scores then. */
export function scoreBody(request: number, traces: number): Buffer {
  const now = new Date().toISOString();
  const batch = Array.from({ length: traces * SPANS_PER_TRACE }, (_, i) => {
    const id = `sc-${request}-${i}`;
    return {
      id: `e-${id}`,
      type: 'score-create',
      timestamp: now,
      body: {
        id,
        traceId: `bt-${request}-${i % traces}`,
        name: 'quality',
        value: i / 50,
        comment: text(i, 200),
      },
    };
  });
  return Buffer.from(JSON.stringify({ batch }));
}

export function batchBody(request: number, traces: number, gen: GenerationShape = PRICED): Buffer {
  const now = new Date().toISOString();
  const batch: object[] = [];
  for (let t = 0; t < traces; t++) {
    const seed = request * 10_000 + t * 10;
    const traceId = `bt-${request}-${t}`;
    const ev = (type: string, id: string, body: object) => ({
      id: `e-${id}`,
      type,
      timestamp: now,
      body: { id, ...body },
    });
    batch.push(ev('trace-create', traceId, { name: 'chat', userId: `u${seed % 97}`, timestamp: now }));
    for (let i = 0; i < 2; i++)
      batch.push(
        ev('span-create', `${traceId}-s${i}`, { traceId, name: `step-${i}`, startTime: now, endTime: now }),
      );
    for (let i = 0; i < 2; i++)
      batch.push(
        ev('generation-create', `${traceId}-g${i}`, {
          traceId,
          name: 'llm',
          model: gen.model,
          startTime: now,
          endTime: now,
          ...generationIo(seed, i),
          ...(gen.usage ? { usageDetails: { input: 500, output: 300 } } : {}),
        }),
      );
  }
  return Buffer.from(JSON.stringify({ batch }));
}

export const PROTOCOLS = {
  'OTLP protobuf (gzip)': {
    path: '/api/public/otel/v1/traces',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
    body: otlpBody,
    ok: 200,
  },
  'batch ingestion': {
    path: '/api/public/ingestion',
    headers: { 'content-type': 'application/json' },
    body: batchBody,
    ok: 207,
  },
} as const;

/**
 * Sends one request and checks it was acknowledged; returns how often it was sent again. 429 and
 * 503 acknowledge nothing and ask for a retry, which the SDKs do: so does the bench, a bounded
 * number of times, and the retries are printed.
 */
export async function send(
  url: string,
  protocol: Protocol,
  headers: Record<string, string>,
  body: Uint8Array<ArrayBuffer>,
  label: string,
): Promise<number> {
  let retries = 0;
  let res = await fetch(`${url}${protocol.path}`, { method: 'POST', headers, body });
  for (let attempt = 1; (res.status === 429 || res.status === 503) && attempt <= MAX_RETRIES; attempt++) {
    await res.text();
    retries++;
    await new Promise((r) => setTimeout(r, 250 * attempt));
    res = await fetch(`${url}${protocol.path}`, { method: 'POST', headers, body });
  }
  const answer = await res.text();
  if (res.status !== protocol.ok) throw new Error(`${protocol.path} in ${label}: ${res.status} ${answer}`);
  if (protocol.ok === 207 && JSON.parse(answer).errors.length > 0)
    throw new Error(`${protocol.path} in ${label}: ${answer.slice(0, 300)}`);
  return retries;
}

/** Runs `work(i)` for i in [0, n) with at most `concurrency` at once; returns each call's latency (ms). */
export async function pool(
  n: number,
  concurrency: number,
  work: (i: number) => Promise<void>,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const t = performance.now();
        await work(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return latencies;
}

/** The highest block number of each MergeTree table: their sum grows by one per part an insert creates. */
export async function blockNumbers(ch: ClickHouseClient): Promise<number> {
  const rs = await ch.query({
    query: `SELECT sum(b) AS n FROM (SELECT max(max_block_number) AS b FROM system.parts
      WHERE database = currentDatabase() GROUP BY table)`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

const READ_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
} as const;

/** Every row the web wrote for `projectId`, per table, moved to `target` and cut into `parts` slices. */
export async function rowsWritten(ch: ClickHouseClient, projectId: string, target: string) {
  const out: { table: string; rows: Record<string, unknown>[] }[] = [];
  for (const table of WRITTEN_TABLES) {
    const rs = await ch.query({
      query: `SELECT * FROM ${table} WHERE project_id = {p:String}`,
      query_params: { p: projectId },
      format: 'JSONEachRow',
      clickhouse_settings: READ_SETTINGS,
    });
    const rows = (await rs.json<Record<string, unknown>>()).map((r) => ({ ...r, project_id: target }));
    if (rows.length > 0) out.push({ table, rows });
  }
  return out;
}

export interface Figure {
  /** Requests answered 429/503 (nothing acknowledged) and sent again. */
  retries?: number;
  spansPerSecond: number;
  p50: number;
  p99: number;
  parts: number;
  /** CPU seconds the analytics server used during the phase. */
  storeCpu: number;
  /** CPU seconds the web used during the phase (the web's phase only). */
  webCpu?: number;
}

/** Times of the ceiling: its rate is their median, so one slow insert does not decide it. */
const CEILING_RUNS = 3;

/**
 * The store's ceiling: the rows `written` again under `projectId`, in as few inserts as the web's
 * group commit allows (10 000 rows), one after the other, CEILING_RUNS times: the median rate.
 */
export async function bulkCeiling(
  ch: AnalyticsServer,
  written: { table: string; rows: Record<string, unknown>[] }[],
  projectId: string,
  spans: number,
): Promise<Figure> {
  const rates: number[] = [];
  let bulkParts = 0;
  let bulkCpu = 0;
  for (let run = 0; run < CEILING_RUNS; run++) {
    const bulkRows = written.map((w) => ({
      ...w,
      rows: w.rows.map((r) => ({ ...r, project_id: `${projectId}-bulk${run}` })),
    }));
    await settle(ch.client);
    const bulkBlocksBefore = await blockNumbers(ch.client);
    const bulkCpu0 = cpuSeconds(ch.pid);
    const bulkStarted = performance.now();
    for (const { table, rows } of bulkRows) {
      for (let at = 0; at < rows.length; at += 10_000)
        await ch.client.insert({
          table,
          values: rows.slice(at, at + 10_000),
          format: 'JSONEachRow',
          clickhouse_settings: { date_time_input_format: 'best_effort' },
        });
    }
    rates.push(spans / ((performance.now() - bulkStarted) / 1000));
    bulkCpu += cpuSeconds(ch.pid) - bulkCpu0;
    bulkParts += (await blockNumbers(ch.client)) - bulkBlocksBefore;
  }
  return {
    spansPerSecond: quantile(rates, 0.5),
    p50: 0,
    p99: 0,
    parts: bulkParts / CEILING_RUNS,
    storeCpu: bulkCpu / CEILING_RUNS,
  };
}

/** Spans/s, latency and parts of the web, the same rows per request straight into the store, and in bulk. */
interface CaseResult {
  web: Figure;
  store: Figure;
  bulk: Figure;
  spans: number;
  tables: string;
}

export type Protocol = (typeof PROTOCOLS)[keyof typeof PROTOCOLS];

async function runCase(
  ch: AnalyticsServer,
  base: Env,
  web: WebServer,
  mode: 'dual' | 'events_only',
  protocol: Protocol,
  run: { requests: number; concurrency: number; traces: number; tag: string },
): Promise<CaseResult> {
  const { requests, concurrency } = run;
  const spans = requests * run.traces * SPANS_PER_TRACE;
  const project: Project = await createProject(base, `ingest-${mode}-${protocol.ok}-${run.tag}`);
  const baselineProject = await createProject(base, `ingest-${mode}-${protocol.ok}-${run.tag}-store`);
  const make = mode === 'events_only' && protocol.ok === 207 ? scoreBody : protocol.body;
  // Copied into plain Uint8Arrays before the clock starts (the fetch body type).
  const bodies = Array.from({ length: requests }, (_, i) => new Uint8Array(make(i, run.traces)));
  const headers = { ...protocol.headers, authorization: basicAuth(project) };
  await settle(ch.client);
  const blocksBefore = await blockNumbers(ch.client);
  const [storeCpu0, webCpu0] = [cpuSeconds(ch.pid), cpuSeconds(web.process.pid)];
  const started = performance.now();
  let retries = 0;
  const latencies = await pool(requests, concurrency, async (i) => {
    retries += await send(web.url, protocol, headers, bodies[i]!, mode);
  });
  const seconds = (performance.now() - started) / 1000;
  const webFigure: Figure = {
    spansPerSecond: spans / seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    parts: (await blockNumbers(ch.client)) - blocksBefore,
    storeCpu: cpuSeconds(ch.pid) - storeCpu0,
    webCpu: cpuSeconds(web.process.pid) - webCpu0,
    retries,
  };

  // The store's own rate: the same rows, the same slicing per request, the same concurrency.
  const written = await rowsWritten(ch.client, project.projectId, baselineProject.projectId);
  const slice = <T>(rows: T[], i: number) =>
    rows.slice(Math.floor((i * rows.length) / requests), Math.floor(((i + 1) * rows.length) / requests));
  await settle(ch.client);
  const storeBlocksBefore = await blockNumbers(ch.client);
  const storeCpu1 = cpuSeconds(ch.pid);
  const storeStarted = performance.now();
  const storeLatencies = await pool(requests, concurrency, async (i) => {
    await Promise.all(
      written.map(({ table, rows }) =>
        ch.client.insert({
          table,
          values: slice(rows, i),
          format: 'JSONEachRow',
          clickhouse_settings: { date_time_input_format: 'best_effort' },
        }),
      ),
    );
  });
  const store: Figure = {
    spansPerSecond: spans / ((performance.now() - storeStarted) / 1000),
    p50: quantile(storeLatencies, 0.5),
    p99: quantile(storeLatencies, 0.99),
    parts: (await blockNumbers(ch.client)) - storeBlocksBefore,
    storeCpu: cpuSeconds(ch.pid) - storeCpu1,
  };
  const bulk = await bulkCeiling(ch, written, baselineProject.projectId, spans);
  const tables = written.map((w) => `${w.table} ${w.rows.length}`).join(', ');
  return { web: webFigure, store, bulk, spans, tables };
}

function printCase(label: string, r: CaseResult): void {
  const { web, store, bulk } = r;
  line(
    label,
    `${Math.round(web.spansPerSecond)} spans/s, p50 ${web.p50.toFixed(0)} ms, p99 ${web.p99.toFixed(0)} ms`,
  );
  line(
    '  same rows straight into the store',
    `${Math.round(store.spansPerSecond)} spans/s, p50 ${store.p50.toFixed(0)} ms, p99 ${store.p99.toFixed(0)} ms`,
  );
  line('  ratio web / store per request', ratio(web.spansPerSecond, store.spansPerSecond));
  line('  same rows in bulk inserts (store ceiling)', `${Math.round(bulk.spansPerSecond)} spans/s`);
  line('  ratio web / store ceiling', `${ratio(web.spansPerSecond, bulk.spansPerSecond)} (goal 0.7)`);
  const per10k = (f: Figure) => ((f.parts * 10_000) / r.spans).toFixed(0);
  line('  parts per 10k spans (web, per request, bulk)', `${per10k(web)}, ${per10k(store)}, ${per10k(bulk)}`);
  // CPU per span is what co-location on one machine does not disturb: how efficiently the store
  // takes the web's inserts against its own best, and what the web itself costs beside it.
  const cpu10k = (seconds: number) => ((seconds * 10_000) / r.spans).toFixed(2);
  line(
    '  store CPU s per 10k spans (web, per request, bulk)',
    `${cpu10k(web.storeCpu)}, ${cpu10k(store.storeCpu)}, ${cpu10k(bulk.storeCpu)}`,
  );
  line('  ratio store CPU per span, bulk / web', ratio(bulk.storeCpu, web.storeCpu));
  line('  web CPU s per 10k spans', cpu10k(web.webCpu ?? 0));
  line('  rows written', r.tables);
  if (web.retries) line('  requests answered 429/503 and sent again', String(web.retries));
}

/** Which cases run: BENCH_INGEST_CASES, e.g. `otlp:events_only,batch:dual` (default: all four). */
export function selectedCases(): [keyof typeof PROTOCOLS, 'dual' | 'events_only'][] {
  const all: [keyof typeof PROTOCOLS, 'dual' | 'events_only'][] = [];
  for (const mode of ['dual', 'events_only'] as const)
    for (const label of Object.keys(PROTOCOLS) as (keyof typeof PROTOCOLS)[]) all.push([label, mode]);
  const wanted = process.env['BENCH_INGEST_CASES'];
  if (!wanted) return all;
  const keys = new Set(wanted.split(','));
  return all.filter(([label, mode]) => keys.has(`${label.startsWith('OTLP') ? 'otlp' : 'batch'}:${mode}`));
}

/** Runs `run` against a web started with `env`, then stops it; on failure prints what the web logged. */
export async function withWeb(env: Env, run: (web: WebServer) => Promise<void>): Promise<void> {
  const web = await startWeb(env);
  try {
    await run(web);
  } catch (err) {
    // What the web logged is the first thing to read when it answers a request with an error.
    process.stderr.write(`web output (last lines):\n${web.process.output().slice(-4000)}\n`);
    throw err;
  } finally {
    await web.stop();
  }
}

export async function benchIngestion(): Promise<void> {
  const storeDir = mkdtempSync(join(STORE_ROOT, 'obs-bench-analytics-'));
  const [pgf, ch] = await Promise.all([startPostgres(), startAnalyticsServer({ dir: storeDir })]);
  const base: Env = { DATABASE_URL: pgf.url, CLICKHOUSE_URL: ch.url };
  process.stdout.write(
    `\nIngestion: one web process, analytics server over HTTP (data in ${STORE_ROOT}); ${REQUESTS} requests of ${SMALL_TRACES * SPANS_PER_TRACE} spans, ${CONCURRENCY} concurrent; OTLP also ${FULL_REQUESTS} full exports of ${FULL_TRACES * SPANS_PER_TRACE} spans\n\n`,
  );
  const cases = selectedCases();
  try {
    for (const mode of ['dual', 'events_only'] as const) {
      if (!cases.some(([, m]) => m === mode)) continue;
      await withWeb({ ...base, ...MODE_ENV[mode], LOG_LEVEL: 'warn' }, async (web) => {
        for (const [label, m] of cases) {
          if (m !== mode) continue;
          const protocol = PROTOCOLS[label];
          const one = await runCase(ch, base, web, mode, protocol, {
            requests: REQUESTS,
            concurrency: CONCURRENCY,
            traces: SMALL_TRACES,
            tag: '1x',
          });
          printCase(`${label}, ${mode}`, one);
          if (protocol !== PROTOCOLS['OTLP protobuf (gzip)']) continue;
          const full = await runCase(ch, base, web, mode, protocol, {
            requests: FULL_REQUESTS,
            concurrency: CONCURRENCY,
            traces: FULL_TRACES,
            tag: 'full',
          });
          printCase(`${label}, ${mode}, full SDK exports`, full);
          if (!GROWTH) continue;
          // 4x the work: four times the requests at the same concurrency (does the rate hold?), and
          // four times the concurrency (load): group commit then carries larger groups per insert.
          for (const [what, run] of [
            [
              '4x requests',
              { requests: 4 * REQUESTS, concurrency: CONCURRENCY, traces: SMALL_TRACES, tag: '4xr' },
            ],
            [
              '4x concurrency',
              { requests: 4 * REQUESTS, concurrency: 4 * CONCURRENCY, traces: SMALL_TRACES, tag: '4xc' },
            ],
          ] as const) {
            const four = await runCase(ch, base, web, mode, protocol, run);
            line(
              `  ${what}: spans/s, p50, ratio to ceiling, parts/10k, retries`,
              `${Math.round(four.web.spansPerSecond)}, ${four.web.p50.toFixed(0)} ms, ${ratio(four.web.spansPerSecond, four.bulk.spansPerSecond)}, ${((four.web.parts * 10_000) / four.spans).toFixed(0)}, ${four.web.retries}`,
            );
            line(
              `  growth 1x -> ${what}: spans/s`,
              `${ratio(four.web.spansPerSecond, one.web.spansPerSecond)}x`,
            );
          }
        }
      });
    }
  } finally {
    await Promise.all([ch.stop(), pgf.stop()]);
  }
}
