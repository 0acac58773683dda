/**
 * Two things the cutover walk owes on the local cluster, on one deployment installed from the chart
 * (the real web, worker and backfill Jobs as Pods on real datastores):
 * - `kubectl observatory plan` mid-backfill: while a real backfill Job sleeps between the chunks of
 *   step 1 (its throttle), the plugin's estimates (rows to move, disk needed against the store's
 *   free disk, duration at the measured rate) agree with what this test reads from the databases
 *   itself: the chunks still to run from the step's `background_migrations` row, their rows counted
 *   in the analytics store, the rows already moved counted in `events_full`, and the chunk times.
 * - a Legacy trace-level evaluation rule (created through the public API) judges a trace the
 *   release 3 SDK sends in Dual, by the real model (llama.cpp's server bound to the node IP, where
 *   the worker Pod reaches it); the cutover request shows `EvaluatorsCompatible=False
 *   LegacyEvaluatorsActive` naming it, in the status, `blockedBy` and `kubectl observatory plan`;
 *   the approval lets the cutover proceed; in EventsOnly a trace the OTLP SDK sends gets a judgment
 *   from an observation rule (the control) and none from the trace-level rule.
 */
import { randomBytes } from 'node:crypto';
import { startObservation } from '@langfuse/tracing';
import { Langfuse } from 'langfuse';
import pgLib from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDeployment } from '../../cluster/scenario/local-deployment.ts';
import { condition, DATASTORES, isTrue, type Project } from '../../cluster/scenario/scenario.ts';
import { waitFor } from '../../cluster/wait.ts';
import { PORTS } from '../../server/contract/ports.ts';
import type { BackfillReport } from '../../server/contract/worker-api.ts';
import { kubectlObservatory, localCluster } from '../cluster/testing.ts';
import { callJson, type JsonBody } from '../fixtures/api-client.ts';
import {
  JUDGE_CATEGORIES,
  type Judge,
  judgeConnection,
  qaEvaluator,
  qaGenerationRule,
  startJudge,
} from '../fixtures/judge.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';

const NAME = 'demo';
const NS = 'obs-eval';
const STEP1 = '20260701_v4_step_1_create_root_spans_from_traces';
/** Traces of release 3's history per month, in two months: step 1 plans one chunk per month. */
const PER_MONTH = 150;
const MONTHS = ['2026-08-15T10:00:00Z', '2026-09-15T10:00:00Z'];
/** The backfill Job's pause after each chunk: the window in which the plan is taken. */
const THROTTLE_MS = 60_000;

let d: LocalDeployment;
let judge: Judge | undefined;
let db: pgLib.Client | undefined;
let project: Project;

const llmEnv = (nodeIP: string) => [
  { name: 'ENCRYPTION_KEY', valueFrom: { secretKeyRef: { name: 'llm', key: 'encryption-key' } } },
  { name: 'SERVICE_LLM_CONNECTION_WHITELISTED_IPS', value: nodeIP },
];

function apply(extra: Record<string, unknown>) {
  const env = llmEnv(d.cluster.nodeIP);
  const r = d.apply({
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'ObservabilityService',
    metadata: { name: NAME, namespace: NS },
    spec: {
      image: 'observatory:dev',
      datastores: DATASTORES,
      web: { replicas: 1, template: { env } },
      worker: { replicas: 1, template: { env } },
      cutover: { approval: 'Manual', producerQuietPeriod: '1m' },
      upgrade: { backupConfirmed: true },
      release: '4',
      ...extra,
    },
  });
  expect(r.code, r.stderr).toBe(0);
}

const plugin = (args: string[]) => kubectlObservatory(d.cluster, args);

async function query<T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await d.ch.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

async function workerReport(): Promise<BackfillReport> {
  const res = await fetch(`http://${await d.podIP('worker')}:${PORTS.worker}/api/backfill`);
  expect(res.status).toBe(200);
  return (await res.json()) as BackfillReport;
}

const call = async (method: string, path: string, body?: unknown) =>
  callJson(`${await d.webUrl()}/api/public`, project, method, path, body);

beforeAll(async () => {
  const cluster = localCluster();
  const [started, judged] = await Promise.allSettled([
    LocalDeployment.start(cluster, NS),
    startJudge(cluster.nodeIP),
  ]);
  if (judged.status === 'fulfilled') judge = judged.value;
  if (started.status === 'rejected') throw started.reason;
  d = started.value;
  if (judged.status === 'rejected') throw judged.reason;
  await d.core().createNamespacedSecret({
    namespace: NS,
    body: {
      metadata: { name: 'llm' },
      stringData: { 'encryption-key': randomBytes(32).toString('hex') },
    },
  });
  await d.installChart();
  db = new pgLib.Client({ connectionString: d.pg.url });
  await db.connect();
}, 600_000);
afterAll(async () => {
  await db?.end();
  await judge?.stop();
  await d?.stop();
}, 600_000);

describe('kubectl observatory plan while a real backfill Job is mid-step', () => {
  it('starts in Legacy with two months of history sent by the release 3 SDK', async () => {
    apply({ writeMode: 'Legacy' });
    await d.waitFor(NAME, 'Legacy and Ready', (x) => x.status?.state === 'Legacy' && isTrue(x, 'Ready'));
    const { cli } = await import('../fixtures/service.ts');
    const r = await cli(['create-project', '--name', 'e2e', '--json'], {
      DATABASE_URL: d.pg.url,
      SERVICE_RELEASE: '4',
    });
    expect(r.code, r.stderr).toBe(0);
    project = JSON.parse(r.stdout);
    const sdk = new Langfuse({ ...project, baseUrl: await d.webUrl() });
    for (const month of MONTHS)
      for (let i = 0; i < PER_MONTH; i++) sdk.trace({ name: 'history', timestamp: new Date(month) });
    await sdk.shutdownAsync();
    await waitFor(
      'the history in the traces table',
      async () => {
        const [row] = await query<{ n: string }>('SELECT count() AS n FROM traces FINAL');
        return Number(row!.n) === PER_MONTH * MONTHS.length;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );
    // One part per month: the store's part rows are then the rows, as after any merge.
    await d.ch.client.command({ query: 'OPTIMIZE TABLE traces FINAL' });
  });

  it("prints estimates that agree with the worker's report and the databases", async () => {
    apply({
      writeMode: 'Dual',
      backfill: { enabled: true, chunkRows: 1_000, throttleMs: THROTTLE_MS },
    });
    const mid = await waitFor(
      'step 1 with one of its two chunks done',
      async () => {
        const r = await workerReport().catch(() => undefined);
        const s = r?.steps.find((x) => x.step === 1);
        return s?.status === 'running' && s.chunksDone === 1 ? { report: r!, step: s } : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    expect(mid.step.chunksTotal).toBe(MONTHS.length);

    const json = await plugin(['plan', NAME, '-n', NS, '-o', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const text = await plugin(['plan', NAME, '-n', NS]);
    expect(text.code, text.stderr).toBe(0);
    const estimates = JSON.parse(json.stdout).estimates as {
      freeBytes: number;
      steps: {
        step: number;
        rowsToMove: number;
        diskNeededBytes: number;
        rowsPerSecond: number | null;
        expectedSeconds: number | null;
        rateFrom: string | null;
      }[];
    };

    // What the databases say, read here: the step's checkpoint, and rows counted where they are.
    const row = (await db!.query('SELECT state FROM background_migrations WHERE name = $1', [STEP1]))
      .rows[0] as {
      state: { chunks: { partition: string; done: boolean }[]; startedAt: string; checkpointAt: string };
    };
    const left = row.state.chunks.filter((c) => !c.done).map((c) => c.partition);
    expect(left, 'the plan was taken inside the throttle pause').toHaveLength(1);
    const [remaining] = await query<{ n: string }>(
      'SELECT count() AS n FROM traces FINAL WHERE _partition_id IN {p:Array(String)}',
      { p: left },
    );
    const [moved] = await query<{ n: string }>('SELECT count(DISTINCT trace_id) AS n FROM events_full');
    const [parts] = await query<{ bytes: string }>(
      "SELECT sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = currentDatabase() AND table = 'traces' AND active",
    );
    const [disks] = await query<{ free: string }>('SELECT sum(free_space) AS free FROM system.disks');
    const rowsLeft = Number(remaining!.n);
    const rowsMoved = Number(moved!.n);
    expect([rowsLeft, rowsMoved]).toEqual([PER_MONTH, PER_MONTH]);
    const seconds = (Date.parse(row.state.checkpointAt) - Date.parse(row.state.startedAt)) / 1000;
    const rate = rowsMoved / seconds;

    const step1 = estimates.steps.find((s) => s.step === 1)!;
    expect(step1).toEqual({
      step: 1,
      name: STEP1,
      rowsToMove: rowsLeft,
      // The spec's "about 3x" of the bytes still to move (half the table: one of two equal months).
      diskNeededBytes: Math.ceil(3 * Number(parts!.bytes) * (rowsLeft / (rowsLeft + rowsMoved))),
      rowsPerSecond: Math.round(rate),
      expectedSeconds: Math.round(rowsLeft / rate),
      rateFrom: 'this step',
    });
    // The machine's disk moves a little between the two reads (other processes write to it).
    expect(Math.abs(estimates.freeBytes - Number(disks!.free)) / Number(disks!.free)).toBeLessThan(0.01);
    // Steps not started yet borrow the rate step 1 measured.
    for (const later of estimates.steps.filter((s) => s.step > 1))
      expect(later).toMatchObject({ rowsPerSecond: Math.round(rate), rateFrom: 'earlier steps' });
    // The plan read the worker's own report: its step and store figures are the ones used.
    const source = mid.report.store!.sources.find((s) => s.step === 1)!;
    expect(source).toMatchObject({ rows: rowsLeft + rowsMoved, bytes: Number(parts!.bytes) });
    expect(text.stdout).toContain(`step 1 (${STEP1}): ${rowsLeft} rows to move, needs about `);
    expect(text.stdout).toMatch(
      new RegExp(
        `step 1 \\(${STEP1}\\): .* at ${Math.round(rate).toLocaleString('en-US')} rows/s \\(this step\\)`,
      ),
    );

    // For review: the plan's lines as an admin reads them.
    console.log(
      text.stdout
        .split('\n')
        .filter((l) => /^ {2}step |^Estimates/.test(l))
        .join('\n'),
    );
    // Still inside the pause: the figures above describe one moment of the step.
    const after = (await workerReport()).steps.find((x) => x.step === 1)!;
    expect(after.chunksDone).toBe(1);

    // The rest of the backfill without the pause (the next Job takes the new throttle).
    apply({ writeMode: 'Dual', backfill: { enabled: true, chunkRows: 1_000, throttleMs: 0 } });
    await d.waitFor(NAME, 'BackfillComplete', (x) => isTrue(x, 'BackfillComplete'), 600_000);
  });
});

describe('a Legacy trace-level evaluator across the cutover', () => {
  let traceRuleId: string;
  let executionsBefore: number;
  const executions = async (ruleId: string, traceId?: string) =>
    Number(
      (
        await db!.query(
          'SELECT count(*) AS n FROM evaluation_executions WHERE rule_id = $1 AND ($2::text IS NULL OR trace_id = $2)',
          [ruleId, traceId ?? null],
        )
      ).rows[0].n,
    );

  it('judges a trace the release 3 SDK sent in Dual, with the real model', async () => {
    expect((await call('PUT', '/llm-connections', judgeConnection(judge!))).status).toBe(200);
    const evaluator = await call('POST', '/unstable/evaluators', qaEvaluator());
    expect(evaluator.status, evaluator.text).toBe(200);
    const rule = await call('POST', '/unstable/evaluation-rules', {
      ...qaGenerationRule('qa-trace'),
      target: 'trace',
      filter: [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['qa-trace'] }],
    });
    expect(rule.status, rule.text).toBe(200);
    expect(rule.body).toMatchObject({ target: 'trace', legacy: true, status: 'active' });
    traceRuleId = rule.body.id;
    // The control for EventsOnly: an observation rule on the generations named `qa`.
    const control = await call('POST', '/unstable/evaluation-rules', qaGenerationRule('qa-live'));
    expect(control.status, control.text).toBe(200);

    const sdk = new Langfuse({ ...project, baseUrl: await d.webUrl() });
    const judged = sdk.trace({ name: 'qa-trace', input: { question: 'What is 2 + 2?' }, output: '4' });
    await sdk.shutdownAsync();
    const [score, ...more] = await waitFor(
      'the trace-level EVAL score',
      async () => {
        const res = await call('GET', `/v3/scores?fields=details,subject&source=EVAL&traceId=${judged.id}`);
        return res.status === 200 && res.body.data.length > 0 ? (res.body.data as JsonBody[]) : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 2_000 },
    );
    expect(more).toEqual([]);
    expect(score).toMatchObject({
      source: 'EVAL',
      subject: { kind: 'trace', id: judged.id },
      metadata: { evaluation_rule_id: traceRuleId },
    });
    expect(JUDGE_CATEGORIES).toContain(score!.value);
    executionsBefore = await executions(traceRuleId);
    expect(executionsBefore).toBeGreaterThan(0);
  });

  it('holds the cutover with the condition naming it, in status, blockedBy and the plan', async () => {
    apply({ writeMode: 'EventsOnly', nativeOtelBehaviour: 'Direct', backfill: { enabled: true } });
    const held = await d.waitFor(
      NAME,
      'EvaluatorsCompatible=False',
      (x) => condition(x, 'EvaluatorsCompatible')?.reason === 'LegacyEvaluatorsActive',
    );
    expect(held.status?.state).toBe('Dual');
    const named = `"qa-trace" (project ${project.projectId})`;
    expect(condition(held, 'EvaluatorsCompatible')).toMatchObject({ status: 'False' });
    expect(condition(held, 'EvaluatorsCompatible')?.message).toContain(named);
    expect(held.status?.blockedBy?.join('\n')).toContain(named);
    const plan = await plugin(['plan', NAME, '-n', NS, '-o', 'json']);
    expect(plan.code, plan.stderr).toBe(0);
    const blockedBy = JSON.parse(plan.stdout).blockedBy as string[];
    expect(blockedBy.join('\n')).toMatch(/trace-level evaluator\(s\) would stop at the cutover: "qa-trace"/);
    const text = await plugin(['plan', NAME, '-n', NS]);
    expect(text.stdout).toContain(named);
  });

  it('the approval lets it proceed to EventsOnly, where the rule judges nothing more', async () => {
    const approve = await plugin(['approve', NAME, '-n', NS]);
    expect(approve.code, approve.stderr).toBe(0);
    const approved = await d.waitFor(
      NAME,
      'EvaluatorsCompatible LegacyEvaluatorsApproved',
      (x) =>
        condition(x, 'EvaluatorsCompatible')?.reason === 'LegacyEvaluatorsApproved' ||
        x.status?.state === 'EventsOnly',
      600_000,
    );
    if (approved.status?.state !== 'EventsOnly')
      expect(condition(approved, 'EvaluatorsCompatible')).toMatchObject({ status: 'True' });
    await d.waitFor(
      NAME,
      'EventsOnly and Ready',
      (x) => x.status?.state === 'EventsOnly' && isTrue(x, 'Ready'),
      600_000,
    );

    const sent = await withSdkTracer(project, await d.webUrl(), () => {
      const root = startObservation('qa-trace', { input: { question: 'What is 3 + 3?' } });
      const gen = root.startObservation(
        'qa',
        { input: { question: 'What is 3 + 3?' }, model: 'app-model' },
        { asType: 'generation' },
      );
      gen.update({ output: '6' });
      gen.end();
      root.update({ output: '6' });
      root.end();
      return { traceId: gen.traceId, generationId: gen.id };
    });
    // The control: the observation rule judged the generation, so the worker saw this trace.
    await waitFor(
      'the observation-level EVAL score of the EventsOnly trace',
      async () => {
        const res = await call(
          'GET',
          `/v3/scores?fields=details,subject&source=EVAL&traceId=${sent.traceId}&observationId=${sent.generationId}`,
        );
        return res.status === 200 && res.body.data.length > 0 ? res.body.data : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 2_000 },
    );
    expect(await executions(traceRuleId, sent.traceId)).toBe(0);
    expect(await executions(traceRuleId)).toBe(executionsBefore);
    const scores = await call('GET', `/v3/scores?fields=details,subject&source=EVAL&traceId=${sent.traceId}`);
    expect(scores.body.data.map((s: JsonBody) => s.metadata.evaluation_rule_id)).not.toContain(traceRuleId);
  });
});
