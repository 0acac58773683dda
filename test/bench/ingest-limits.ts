/**
 * Ingestion-limits figure of `npm run bench` (`ingest-limits`): how long one OTLP export can hold a
 * web process's event loop, and whether span mapping stays linear in the attributes.
 *   1. Event-loop delay of `observatory web` (its own process, events_only, the analytics server as
 *      another process) while it serves one export, read from the web's `/metrics`
 *      (prom-client's nodejs_eventloop_lag_{max,p99}_seconds: perf_hooks.monitorEventLoopDelay,
 *      reset at every scrape): the worst export inside the limits (MAX_ATTRIBUTES_PER_EXPORT
 *      attributes, MAX_ATTRIBUTES_PER_SPAN on each span) against an ordinary export of the same
 *      size in bytes (512 spans of 8 attributes, the SDKs' batch); and the 100 000-attribute span of
 *      issue 24, refused now. BENCH_LIMITS_RUNS (default 5) of each, alternated.
 *   2. The longest stretch of CPU time the web's main thread runs between two turns of its event loop
 *      while it serves the worst export (the web app in this process over the same stores): a 1 ms
 *      timer reads the thread's CPU time, and what it used between two firings held the loop. Unlike
 *      the delay of (1), it does not count the time the machine gave other processes, so it shows
 *      the work itself on a loaded machine.
 *   3. Span mapping (decode + validate + map, in this process) CPU time per attribute with 1x and
 *      4x the attributes per span (1024 and 4096, keys spread over every prefix the mapping reads),
 *      median of 7 alternated runs: the growth ratio is 1.0 when the mapping is linear.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { decodeTraceExport } from '../../server/features/otel/decode.ts';
import { mapExport } from '../../server/features/otel/map-spans.ts';
import { exportTraceServiceRequestType } from '../../server/features/otel/otlp-proto.ts';
import { validateTraceExport } from '../../server/features/otel/validate.ts';
import {
  MAX_ATTRIBUTES_PER_EXPORT,
  MAX_ATTRIBUTES_PER_SPAN,
} from '../../server/features/write-model/limits.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import {
  basicAuth,
  createProject,
  MODE_ENV,
  type Project,
  startAnalyticsServer,
  startWeb,
  type WebServer,
} from '../fixtures/service.ts';
import { type Stores, serveWeb } from '../fixtures/web-in-process.ts';
import { line, quantile, ratio } from './report.ts';

const RUNS = Number(process.env['BENCH_LIMITS_RUNS'] ?? 5);
const STORE_ROOT = process.env['BENCH_STORE_DIR'] ?? '/dev/shm';

/** Keys that reach every group the one-pass index sorts into, and plain ones. */
function attributeKey(i: number): string {
  switch (i % 5) {
    case 0:
      return `gen_ai.prompt.${i}.content`;
    case 1:
      return `langfuse.observation.metadata.k${i}`;
    case 2:
      return `llm.invocation_parameters.p${i}`;
    case 3:
      return `gen_ai.usage.u${i}`;
    default:
      return `app.attr.${i}`;
  }
}

let spanCounter = 0;

/** An OTLP protobuf export of `spans` spans with `attrs` attributes of `valueLength` characters each. */
function exportBytes(spans: number, attrs: number, valueLength: number): Buffer {
  const type = exportTraceServiceRequestType();
  const value = 'v'.repeat(valueLength);
  const now = BigInt(Date.now()) * 1_000_000n;
  const trace = Buffer.alloc(16);
  trace.writeUInt32BE(++spanCounter, 0);
  const message = type.fromObject({
    resourceSpans: [
      {
        scopeSpans: [
          {
            scope: { name: 'bench' },
            spans: Array.from({ length: spans }, (_, s) => {
              const id = Buffer.alloc(8);
              id.writeUInt32BE(++spanCounter, 4);
              return {
                traceId: trace,
                spanId: id,
                name: `span-${s}`,
                startTimeUnixNano: now.toString(),
                endTimeUnixNano: (now + 1_000_000n).toString(),
                attributes: Array.from({ length: attrs }, (_, i) => ({
                  key: attributeKey(i),
                  value: { stringValue: value },
                })),
              };
            }),
          },
        ],
      },
    ],
  });
  return Buffer.from(type.encode(message).finish());
}

interface Lag {
  maxMs: number;
  p99Ms: number;
  status: number;
}

function gauge(metrics: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(metrics);
  return m ? Number(m[1]) * 1000 : Number.NaN;
}

function postExport(url: string, project: Project, body: Buffer): Promise<Response> {
  return fetch(`${url}/api/public/otel/v1/traces`, {
    method: 'POST',
    headers: {
      authorization: basicAuth(project),
      'content-type': 'application/x-protobuf',
      'x-langfuse-ingestion-version': '4',
    },
    body: new Uint8Array(body),
  });
}

/** The web's event-loop delay over one export: a scrape resets the histogram, the next reads it. */
async function lagDuring(web: WebServer, project: Project, body: Buffer): Promise<Lag> {
  await (await fetch(`${web.url}/metrics`)).text();
  const res = await postExport(web.url, project, body);
  await res.arrayBuffer();
  const metrics = await (await fetch(`${web.url}/metrics`)).text();
  return {
    maxMs: gauge(metrics, 'nodejs_eventloop_lag_max_seconds'),
    p99Ms: gauge(metrics, 'nodejs_eventloop_lag_p99_seconds'),
    status: res.status,
  };
}

/** Value length that makes an ordinary export (512 spans of 8 attributes) as large as `bytes`. */
function ordinaryOfSize(bytes: number): Buffer {
  const small = exportBytes(512, 8, 1).length;
  const perChar = (exportBytes(512, 8, 101).length - small) / 100;
  return exportBytes(512, 8, Math.max(1, Math.round(1 + (bytes - small) / perChar)));
}

/** Longest CPU time (ms) this thread used between two firings of a 1 ms timer while `work` ran. */
async function longestStretch(work: () => Promise<void>): Promise<number> {
  let last = process.threadCpuUsage();
  let longest = 0;
  const timer = setInterval(() => {
    const now = process.threadCpuUsage();
    longest = Math.max(longest, (now.user - last.user + now.system - last.system) / 1000);
    last = now;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return longest;
}

/** Section 2: the web app in this process (same stores, analytics over HTTP) serving worst exports. */
async function benchStretch(
  pgf: PostgresFixture,
  analytics: { url: string; dir: string },
  project: Project,
  worst: () => Buffer,
): Promise<void> {
  const pool = createPool(pgf.url, 4);
  const ch = createAnalyticsClient({ url: analytics.url });
  const stores: Stores = { pgf, dir: analytics.dir, pool, ch, stop: async () => {} };
  const web = await serveWeb(stores, { ...MODE_ENV.events_only });
  try {
    const serve = (body: Buffer) => async () => {
      const res = await postExport(web.url, project, body);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`worst export answered ${res.status}`);
    };
    await longestStretch(serve(worst())); // warm-up
    const stretches: number[] = [];
    for (let i = 0; i < RUNS; i++) stretches.push(await longestStretch(serve(worst())));
    process.stdout.write(
      `\nIngestion limits: longest main-thread CPU stretch between event-loop turns, worst export (${RUNS} runs)\n\n`,
    );
    line(
      'worst inside limits, web app in this process',
      `max ${Math.max(...stretches).toFixed(1)} ms, median ${quantile(stretches, 0.5).toFixed(1)} ms`,
    );
  } finally {
    await web.app.close();
    await Promise.all([pool.end(), ch.close()]);
  }
}

async function benchLag(): Promise<void> {
  const storeDir = mkdtempSync(join(STORE_ROOT, 'obs-bench-limits-'));
  const [pg, ch] = await Promise.all([startPostgres(), startAnalyticsServer({ dir: storeDir })]);
  const base = { DATABASE_URL: pg.url, CLICKHOUSE_URL: ch.url };
  const web = await startWeb({ ...base, ...MODE_ENV.events_only, LOG_LEVEL: 'warn' });
  try {
    const project = await createProject(base, 'bench-limits');
    const spans = MAX_ATTRIBUTES_PER_EXPORT / MAX_ATTRIBUTES_PER_SPAN;
    const cases = {
      worst: () => exportBytes(spans, MAX_ATTRIBUTES_PER_SPAN, 1),
      ordinary: (bytes: number) => ordinaryOfSize(bytes),
      issue: () => exportBytes(1, 100_000, 1),
    };
    const worstSize = cases.worst().length;
    const results: Record<'worst' | 'ordinary' | 'issue', Lag[]> = { worst: [], ordinary: [], issue: [] };
    await lagDuring(web, project, cases.ordinary(worstSize)); // warm-up: worker thread, JIT, store
    for (let i = 0; i < RUNS; i++) {
      results.worst.push(await lagDuring(web, project, cases.worst()));
      results.ordinary.push(await lagDuring(web, project, cases.ordinary(worstSize)));
      results.issue.push(await lagDuring(web, project, cases.issue()));
    }
    process.stdout.write(
      `\nIngestion limits: event-loop delay of one web process serving one OTLP export (${RUNS} runs each; max over runs, median p99)\n\n`,
    );
    const show = (label: string, lags: Lag[]) => {
      const max = Math.max(...lags.map((l) => l.maxMs));
      const p99 = quantile(
        lags.map((l) => l.p99Ms),
        0.5,
      );
      line(
        label,
        `max ${max.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (HTTP ${[...new Set(lags.map((l) => l.status))].join('/')})`,
      );
      return { max, p99 };
    };
    const worst = show(
      `worst inside limits: ${spans} spans x ${MAX_ATTRIBUTES_PER_SPAN} attrs, ${(worstSize / 1e6).toFixed(1)} MB`,
      results.worst,
    );
    const ordinary = show(`baseline: 512 spans x 8 attrs, same size`, results.ordinary);
    show('issue 24: 1 span x 100 000 attrs (refused, 400)', results.issue);
    line('worst / baseline, max delay', ratio(worst.max, ordinary.max));
    line('worst / baseline, p99 delay', ratio(worst.p99, ordinary.p99));
    await benchStretch(pg, { url: ch.url, dir: storeDir }, project, cases.worst);
  } finally {
    await web.stop();
    await Promise.all([ch.stop(), pg.stop()]);
  }
}

/**
 * CPU microseconds (this process's user + system time, steadier than wall time on a shared machine)
 * per attribute to decode, validate and map one export of 32 spans.
 */
function mappingMicrosPerAttribute(body: Buffer, attributes: number): number {
  const start = process.cpuUsage();
  const request = decodeTraceExport(body, 'application/x-protobuf', undefined);
  const refused = validateTraceExport(request);
  if (refused) throw refused;
  mapExport(request);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / attributes;
}

function benchMapping(): void {
  const spans = 32;
  const sizes = { one: MAX_ATTRIBUTES_PER_SPAN / 4, four: MAX_ATTRIBUTES_PER_SPAN };
  const bodies = { one: exportBytes(spans, sizes.one, 8), four: exportBytes(spans, sizes.four, 8) };
  mappingMicrosPerAttribute(bodies.one, spans * sizes.one); // warm-up
  const runs: { one: number[]; four: number[] } = { one: [], four: [] };
  for (let i = 0; i < 7; i++) {
    runs.one.push(mappingMicrosPerAttribute(bodies.one, spans * sizes.one));
    runs.four.push(mappingMicrosPerAttribute(bodies.four, spans * sizes.four));
  }
  const one = quantile(runs.one, 0.5);
  const four = quantile(runs.four, 0.5);
  process.stdout.write(
    '\nSpan mapping (decode + validate + map), 32 spans, CPU per attribute (median of 7, alternated)\n\n',
  );
  line(`1x: ${sizes.one} attributes per span`, `${one.toFixed(3)} us/attribute`);
  line(`4x: ${sizes.four} attributes per span`, `${four.toFixed(3)} us/attribute`);
  line('growth 1x -> 4x, per attribute (1.0 = linear)', ratio(four, one));
}

export async function benchIngestLimits(): Promise<void> {
  benchMapping();
  await benchLag();
}
