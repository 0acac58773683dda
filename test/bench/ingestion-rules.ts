/**
 * Ingestion with active observation-level evaluation rules against none (issue 25), OTLP into
 * `events_only` through one `observatory web`, with `observatory worker` running beside it in both
 * variants. Nothing of a rule runs on the ingestion path: the worker's evaluation job scans
 * `events_full` for each active rule's new matching rows every pass (2 s), enqueues them in
 * PostgreSQL and judges them. What rules cost ingestion is therefore that job's load on the
 * same store and the same two cores, which this figure measures.
 * BENCH_RULES (10) rules, sampling 1.0, half matching the generations (2 of 5 spans), half one of
 * the small spans (1 of 5), all judged by one evaluator whose LLM connection points at a loopback
 * port nobody listens on (whitelisted): each judgment reads its observation, fails to connect and
 * is retried with backoff, so no model's CPU is in the figure. The rules are enabled before each
 * `rules` phase and disabled after it (enabling moves their scan cursor to now, so they never
 * scan the baseline's rows), and what they left pending is cancelled, so the baseline runs a
 * worker with nothing to do. A rule holds its scan while PENDING_PER_RULE executions wait
 * (scan.ts); each `rules` phase starts with an empty queue, so it pays for filling it. PostgreSQL's
 * CPU (the queue's inserts) is watched beside the web's, the store's and the worker's.
 * Interleaved rounds as ingestion-cost.ts (BENCH_AB_ROUNDS, BENCH_RULES_REQUESTS,
 * BENCH_INGEST_CONCURRENCY).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pgLib from 'pg';
import { callJson } from '../fixtures/api-client.ts';
import { freePort } from '../fixtures/ports.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { startRedis } from '../fixtures/redis.ts';
import {
  basicAuth,
  createProject,
  startAnalyticsServer,
  startWeb,
  startWorker,
} from '../fixtures/service.ts';
import { otlpBody, PROTOCOLS, SPANS_PER_TRACE, STORE_ROOT } from './ingestion.ts';
import { AB_CONCURRENCY, AB_ROUNDS, AB_TRACES } from './ingestion-cost.ts';
import { interleave, printPair } from './interleaved.ts';
import { parentPid } from './proc.ts';
import { generate } from './reads.ts';
import { line } from './report.ts';

const RULES = Number(process.env['BENCH_RULES'] ?? 10);
/** Requests per phase: a phase must span several of the job's 2 s passes to show their load (100 took 1-2 s). */
const REQUESTS = Number(process.env['BENCH_RULES_REQUESTS'] ?? 600);
/** Events the project already holds (reads.ts's generator, four months before now): a rule scans a project with history. */
const HISTORY = Number(process.env['BENCH_RULES_HISTORY'] ?? 500_000);
const PROVIDER = 'bench-refused';
const MODEL = 'bench-judge';

/** The PostgreSQL server holding `db`'s connection: the executions are written there. */
async function postmasterPid(db: pgLib.Client): Promise<number> {
  const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return parentPid(rows[0]!.pid);
}

export async function benchIngestionRules(): Promise<void> {
  const storeDir = mkdtempSync(join(STORE_ROOT, 'obs-bench-rules-'));
  const [pgf, ch, redis] = await Promise.all([
    startPostgres(),
    startAnalyticsServer({ dir: storeDir }),
    startRedis(),
  ]);
  const env = {
    DATABASE_URL: pgf.url,
    CLICKHOUSE_URL: ch.url,
    REDIS_URL: redis.url,
    SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only',
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    SERVICE_LLM_CONNECTION_WHITELISTED_IPS: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  const db = new pgLib.Client({ connectionString: pgf.url });
  process.stdout.write(
    `\nIngestion with ${RULES} active observation rules against none, worker running, ${HISTORY} events of history (${AB_ROUNDS} interleaved rounds of ${REQUESTS} OTLP requests x ${AB_TRACES * SPANS_PER_TRACE} spans, ${AB_CONCURRENCY} concurrent)\n\n`,
  );
  try {
    const web = await startWeb(env);
    const worker = await startWorker(env).catch(async (err) => {
      await web.stop();
      throw err;
    });
    try {
      await db.connect();
      const project = await createProject(env, 'rules');
      // The generator splits events between projects (at least two): both shares go to this one.
      if (HISTORY > 0) await generate(ch.client, [project.projectId, project.projectId], HISTORY);
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await callJson(`${web.url}/api/public`, project, method, path, body);
        if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
        return res.body;
      };
      // Nobody listens on a free port just found: every call is refused at once.
      await call('PUT', '/llm-connections', {
        provider: PROVIDER,
        adapter: 'openai',
        secretKey: 'sk-bench',
        baseURL: `http://127.0.0.1:${await freePort()}/v1`,
        customModels: [MODEL],
        withDefaultModels: false,
      });
      await call('POST', '/unstable/evaluators', {
        name: 'bench-judge',
        type: 'llm_as_judge',
        prompt: 'Input: {{input}}\nOutput: {{output}}\nIs the output helpful?',
        outputDefinition: {
          dataType: 'BOOLEAN',
          reasoning: { description: 'One short sentence.' },
          score: { description: 'true when helpful' },
        },
        modelConfig: { provider: PROVIDER, model: MODEL },
      });
      const ruleIds: string[] = [];
      for (let i = 0; i < RULES; i++) {
        const filter =
          i % 2 === 0
            ? [{ type: 'stringOptions', column: 'type', operator: 'any of', value: ['GENERATION'] }]
            : [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['step-0'] }];
        const rule = await call('POST', '/unstable/evaluation-rules', {
          name: `bench-rule-${i}`,
          evaluator: { name: 'bench-judge', type: 'llm_as_judge' },
          target: 'observation',
          enabled: false,
          sampling: 1,
          filter,
          mapping: [
            { variable: 'input', source: 'input' },
            { variable: 'output', source: 'output' },
          ],
        });
        ruleIds.push(rule.id);
      }
      const setEnabled = async (enabled: boolean) => {
        for (const id of ruleIds) await call('PATCH', `/unstable/evaluation-rules/${id}`, { enabled });
      };
      const count = async (where: string) =>
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM evaluation_executions WHERE ${where}`))
          .rows[0]!.n;
      const protocol = PROTOCOLS['OTLP protobuf (gzip)'];
      const phases = await interleave({
        ch,
        url: web.url,
        protocol,
        headers: { ...protocol.headers, authorization: basicAuth(project) },
        variants: [
          {
            name: 'rules',
            body: otlpBody,
            before: () => setEnabled(true),
            after: async () => {
              await setEnabled(false);
              await db.query(
                "UPDATE evaluation_executions SET status = 'CANCELLED', error = 'bench phase over', updated_at = now() WHERE status = 'PENDING'",
              );
            },
          },
          { name: 'none', body: otlpBody },
        ],
        rounds: AB_ROUNDS,
        requests: REQUESTS,
        concurrency: AB_CONCURRENCY,
        traces: AB_TRACES,
        spansPerTrace: SPANS_PER_TRACE,
        pids: {
          web: web.process.pid,
          store: ch.pid,
          worker: worker.process.pid,
          postgres: await postmasterPid(db),
        },
      });
      printPair(
        `OTLP in events_only, ${RULES} rules active / none`,
        phases.get('rules')!,
        phases.get('none')!,
      );
      const enqueued = await count('true');
      const attempted = await count('attempts > 0');
      const spans = phases.get('rules')!.reduce((a, p) => a + p.spans, 0);
      line(
        '  executions enqueued, attempted (of the rules phases)',
        `${enqueued} (${(enqueued / spans).toFixed(2)} per span), ${attempted}`,
      );
      if (enqueued === 0) throw new Error('the rules enqueued nothing: they were not active');
    } catch (err) {
      process.stderr.write(
        `web output (last lines):\n${web.process.output().slice(-3000)}\nworker output (last lines):\n${worker.process.output().slice(-3000)}\n`,
      );
      throw err;
    } finally {
      await Promise.all([web.stop(), worker.stop()]);
    }
  } finally {
    await db.end();
    await Promise.all([ch.stop(), pgf.stop(), redis.stop()]);
    rmSync(storeDir, { recursive: true, force: true });
  }
}
