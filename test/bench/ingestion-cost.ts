/**
 * Cost at ingestion end to end (issue 26): the ingestion figure's workload through one `observatory
 * web` and the analytics server over HTTP, with the generations' cost computed against not, in
 * interleaved phases, each pair on its own project (interleaved.ts). There is no switch that turns cost off (the
 * web loads the built-in definitions at start), so the baseline's generations name a model no
 * definition matches: ingestion still loads the project's catalog and runs the matcher (once per
 * name, then a map lookup), and computes nothing. Four variants:
 *   - priced: `gpt-4o` with usage sent (tier and cost per usage type), against
 *   - unpriced: an unmatched model with the same usage;
 *   - tokenized: `openai/gpt-4o` (the same definition) without usage, so OpenAI's BPE counts the
 *     input and output, against
 *   - untokenized: an unmatched model without usage.
 * The tokenizer's cost per KB is the web's CPU of tokenized minus untokenized, per KB of the
 * generations' input and output. Cases: batch ingestion in `dual` (legacy rows priced under the
 * entity locks) and OTLP in `events_only` (events rows priced on the direct path);
 * BENCH_COST_CASES (`batch:dual,otlp:events_only`) selects. BENCH_AB_ROUNDS (4) rounds of
 * BENCH_AB_REQUESTS (40) requests of 50 spans per variant, BENCH_INGEST_CONCURRENCY (8) at once.
 * The rows written are checked: the priced variants carry a cost, the others none.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BUILT_IN_PRICE_FILE, readPriceFile } from '../../server/features/models/price-file.ts';
import { compileModels } from '../../server/features/models/pricing.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import {
  type AnalyticsServer,
  basicAuth,
  createProject,
  MODE_ENV,
  startAnalyticsServer,
} from '../fixtures/service.ts';
import {
  batchBody,
  type GenerationShape,
  generationKb,
  otlpBody,
  PROTOCOLS,
  SPANS_PER_TRACE,
  STORE_ROOT,
  withWeb,
} from './ingestion.ts';
import { interleave, type Phase, printPair } from './interleaved.ts';
import { line } from './report.ts';

export const AB_ROUNDS = Number(process.env['BENCH_AB_ROUNDS'] ?? 4);
export const AB_REQUESTS = Number(process.env['BENCH_AB_REQUESTS'] ?? 40);
export const AB_CONCURRENCY = Number(process.env['BENCH_INGEST_CONCURRENCY'] ?? 8);
/** Traces per request (5 spans each, two of them generations). */
export const AB_TRACES = 10;

const UNPRICED = 'bench-unpriced-model';
const SHAPES = {
  priced: { model: 'gpt-4o', usage: true },
  unpriced: { model: UNPRICED, usage: true },
  tokenized: { model: 'openai/gpt-4o', usage: false },
  untokenized: { model: `${UNPRICED}-no-usage`, usage: false },
} satisfies Record<string, GenerationShape>;
/** Each side against its baseline. */
const PAIRS = [
  ['priced', 'unpriced'],
  ['tokenized', 'untokenized'],
] as const;

const CASES = {
  'batch:dual': {
    protocol: PROTOCOLS['batch ingestion'],
    mode: 'dual',
    make: batchBody,
    table: 'observations',
  },
  'otlp:events_only': {
    protocol: PROTOCOLS['OTLP protobuf (gzip)'],
    mode: 'events_only',
    make: otlpBody,
    table: 'events_full',
  },
} as const;

/** Generations per model name the web wrote, with a cost and with usage. */
async function stored(ch: AnalyticsServer, table: string, projectIds: string[]) {
  const rs = await ch.client.query({
    query: `SELECT provided_model_name AS model, count() AS n, countIf(total_cost > 0) AS priced,
        countIf(length(mapKeys(usage_details)) > 0) AS usage
      FROM ${table} FINAL WHERE project_id IN {p:Array(String)} AND type = 'GENERATION' GROUP BY model`,
    query_params: { p: projectIds },
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ model: string; n: string; priced: string; usage: string }>();
  return new Map(
    rows.map((r) => [r.model, { n: Number(r.n), priced: Number(r.priced), usage: Number(r.usage) }]),
  );
}

export async function benchIngestionCost(): Promise<void> {
  const defs = readPriceFile(BUILT_IN_PRICE_FILE).map((e) => ({ ...e, projectId: null, createdAt: '' }));
  const models = compileModels(defs);
  for (const shape of Object.values(SHAPES))
    if (models.some((m) => m.re.test(shape.model)) !== shape.model.includes('gpt-4o'))
      throw new Error(`the built-in definitions do not match ${shape.model} as the bench expects`);

  const wanted = (process.env['BENCH_COST_CASES'] ?? Object.keys(CASES).join(',')).split(',');
  const storeDir = mkdtempSync(join(STORE_ROOT, 'obs-bench-cost-'));
  const [pgf, ch] = await Promise.all([startPostgres(), startAnalyticsServer({ dir: storeDir })]);
  const base = { DATABASE_URL: pgf.url, CLICKHOUSE_URL: ch.url };
  process.stdout.write(
    `\nIngestion with cost against without (${AB_ROUNDS} interleaved rounds of ${AB_REQUESTS} requests x ${AB_TRACES * SPANS_PER_TRACE} spans per variant, ${AB_CONCURRENCY} concurrent)\n\n`,
  );
  try {
    for (const [key, c] of Object.entries(CASES)) {
      if (!wanted.includes(key)) continue;
      await withWeb({ ...base, ...MODE_ENV[c.mode], LOG_LEVEL: 'warn' }, async (web) => {
        // Each pair interleaves on its own (and its own project): a phase never follows the other
        // pair's, whose heavier tokenizing phases would otherwise slow whichever comes next.
        const phases = new Map<string, Phase[]>();
        const projects: string[] = [];
        for (const pair of PAIRS) {
          const project = await createProject(base, `cost-${key.replace(':', '-')}-${pair[0]}`);
          projects.push(project.projectId);
          const got = await interleave({
            ch,
            url: web.url,
            protocol: c.protocol,
            headers: { ...c.protocol.headers, authorization: basicAuth(project) },
            variants: pair.map((name) => ({
              name,
              body: (request: number, traces: number) => c.make(request, traces, SHAPES[name]),
            })),
            rounds: AB_ROUNDS,
            requests: AB_REQUESTS,
            concurrency: AB_CONCURRENCY,
            traces: AB_TRACES,
            spansPerTrace: SPANS_PER_TRACE,
            pids: { web: web.process.pid, store: ch.pid },
          });
          for (const [name, ps] of got) phases.set(name, ps);
        }
        const of = (name: string) => phases.get(name)!;
        printPair(`${c.protocol.path} in ${c.mode}, cost computed / not`, of('priced'), of('unpriced'));
        printPair('  without usage: tokenized and priced / not', of('tokenized'), of('untokenized'));
        const kb = (ps: Phase[]) =>
          ps.reduce((a, p) => {
            for (let i = 0; i < AB_REQUESTS; i++) a += generationKb(p.firstRequest + i, AB_TRACES);
            return a;
          }, 0);
        const webCpu = (ps: Phase[]) => ps.reduce((a, p) => a + p.cpu['web']!, 0);
        const extraMs = (webCpu(of('tokenized')) - webCpu(of('untokenized'))) * 1000;
        line(
          '  web CPU ms per KB of generation input+output tokenized',
          `${(extraMs / kb(of('tokenized'))).toFixed(3)} (${Math.round(kb(of('tokenized')))} KB)`,
        );
        const rows = await stored(ch, c.table, projects);
        const check = Object.values(SHAPES).map((s) => {
          const r = rows.get(s.model) ?? { n: 0, priced: 0, usage: 0 };
          return `${s.model} ${r.priced}/${r.n} priced, ${r.usage} with usage`;
        });
        line('  generations stored', check.join('; '));
        const expectPriced = (s: GenerationShape) => s.model.includes('gpt-4o');
        for (const s of Object.values(SHAPES)) {
          const r = rows.get(s.model);
          if (!r || r.n === 0 || (r.priced === r.n) !== expectPriced(s) || (!expectPriced(s) && r.priced > 0))
            throw new Error(`${s.model}: ${JSON.stringify(r)} is not what the variant should store`);
        }
      });
    }
  } finally {
    await Promise.all([ch.stop(), pgf.stop()]);
    rmSync(storeDir, { recursive: true, force: true });
  }
}
