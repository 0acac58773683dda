/**
 * Masking at ingestion (#40): the ingestion figure's workload through one `observatory web` and
 * the analytics server, with every built-in detector enabled on the project against none, in
 * interleaved phases (interleaved.ts): the rules are enabled through the API before each masked
 * phase and disabled after it, which this web applies at once. The generations' texts hold nothing
 * a detector finds, as most traffic does, so the figure is what scanning costs. Cases as
 * ingestion-cost.ts (batch in `dual`, OTLP in `events_only`; BENCH_MASKING_CASES selects), with its
 * rounds, requests and concurrency. The target (#40): the web's CPU per span at most 10 % above.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DETECTORS } from '../../server/features/masking/detectors.ts';
import { callJson } from '../fixtures/api-client.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import {
  basicAuth,
  createProject,
  MODE_ENV,
  type Project,
  startAnalyticsServer,
} from '../fixtures/service.ts';
import { batchBody, otlpBody, PROTOCOLS, SPANS_PER_TRACE, STORE_ROOT, withWeb } from './ingestion.ts';
import { AB_CONCURRENCY, AB_REQUESTS, AB_ROUNDS, AB_TRACES } from './ingestion-cost.ts';
import { interleave, type Phase, printPair } from './interleaved.ts';
import { line } from './report.ts';

const CASES = {
  'batch:dual': { protocol: PROTOCOLS['batch ingestion'], mode: 'dual', make: batchBody },
  'otlp:events_only': { protocol: PROTOCOLS['OTLP protobuf (gzip)'], mode: 'events_only', make: otlpBody },
} as const;

async function switchRules(url: string, project: Project, ids: string[], enabled: boolean): Promise<void> {
  for (const id of ids) {
    const res = await callJson(url, project, 'PATCH', `/api/public/unstable/masking-rules/${id}`, {
      enabled,
    });
    if (res.status !== 200) throw new Error(`masking rule ${id}: ${res.status} ${res.text}`);
  }
}

export async function benchMasking(): Promise<void> {
  const wanted = (process.env['BENCH_MASKING_CASES'] ?? Object.keys(CASES).join(',')).split(',');
  const storeDir = mkdtempSync(join(STORE_ROOT, 'obs-bench-masking-'));
  const [pgf, ch] = await Promise.all([startPostgres(), startAnalyticsServer({ dir: storeDir })]);
  const base = { DATABASE_URL: pgf.url, CLICKHOUSE_URL: ch.url };
  process.stdout.write(
    `\nIngestion with every built-in masking detector against none (${AB_ROUNDS} interleaved rounds of ${AB_REQUESTS} requests x ${AB_TRACES * SPANS_PER_TRACE} spans per variant, ${AB_CONCURRENCY} concurrent)\n\n`,
  );
  try {
    for (const [key, c] of Object.entries(CASES)) {
      if (!wanted.includes(key)) continue;
      await withWeb({ ...base, ...MODE_ENV[c.mode], LOG_LEVEL: 'warn' }, async (web) => {
        const project = await createProject(base, `masking-${key.replace(':', '-')}`);
        const ids: string[] = [];
        for (const detector of DETECTORS) {
          const res = await callJson(web.url, project, 'POST', '/api/public/unstable/masking-rules', {
            name: detector,
            detector,
            enabled: false,
          });
          if (res.status !== 200) throw new Error(`masking rule ${detector}: ${res.status} ${res.text}`);
          ids.push(String((res.body as { id: string }).id));
        }
        const phases = await interleave({
          ch,
          url: web.url,
          protocol: c.protocol,
          headers: { ...c.protocol.headers, authorization: basicAuth(project) },
          variants: [
            {
              name: 'masked',
              body: (request, traces) => c.make(request, traces),
              before: () => switchRules(web.url, project, ids, true),
              after: () => switchRules(web.url, project, ids, false),
            },
            { name: 'plain', body: (request, traces) => c.make(request, traces) },
          ],
          rounds: AB_ROUNDS,
          requests: AB_REQUESTS,
          concurrency: AB_CONCURRENCY,
          traces: AB_TRACES,
          spansPerTrace: SPANS_PER_TRACE,
          pids: { web: web.process.pid, store: ch.pid },
        });
        const of = (name: string) => phases.get(name)!;
        printPair(`${c.protocol.path} in ${c.mode}, masked / not`, of('masked'), of('plain'));
        const webPerSpan = (ps: Phase[]) =>
          ps.reduce((a, p) => a + p.cpu['web']!, 0) / ps.reduce((a, p) => a + p.spans, 0);
        const extra = webPerSpan(of('masked')) / webPerSpan(of('plain')) - 1;
        line('  web CPU added by masking (target at most 10 %)', `${(extra * 100).toFixed(1)} %`);
      });
    }
  } finally {
    await Promise.all([ch.stop(), pgf.stop()]);
    rmSync(storeDir, { recursive: true, force: true });
  }
}
