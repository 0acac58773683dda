/**
 * Experiment evaluation rules end to end against a real model, in the three write modes in the
 * order of the migration on the same stores: the JS SDK (`@langfuse/client` 5.x,
 * `dataset.runExperiment` over OTLP) runs an experiment on a dataset; an experiment rule created
 * through the public API (filtered on that dataset's id, mapping the dataset item's
 * `expected_output` and `experiment_item_metadata`) has `observatory worker` judge each item's root
 * observation with llama.cpp's server (SmolLM2-135M), and the `EVAL` scores are read back through
 * `GET /api/public/v3/scores`. In `legacy` and `dual` the worker finds the items through the
 * dataset run items (so a run the release 3 SDK linked to a trace alone is judged on that trace),
 * in `events_only` through the experiment columns of `events_full`. A run on another dataset is not
 * judged. The model's verdicts are not judged, only what the service makes of them.
 */
import { randomBytes } from 'node:crypto';
import { LangfuseClient } from '@langfuse/client';
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callJson, type JsonBody } from '../fixtures/api-client.ts';
import {
  JUDGE_CATEGORIES,
  type Judge,
  judgeConnection,
  judgeEvaluator,
  judgeScore,
  startJudge,
} from '../fixtures/judge.ts';
import { llmConnectionEnv } from '../fixtures/llm-connection-env.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { createProject, type Project, startWeb, startWorker, type WebServer } from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { createUiUser, request, signIn } from '../fixtures/ui-client.ts';
import { waitFor } from '../fixtures/wait.ts';

type Body = JsonBody;

let stores: Stores & Given<{ redis: true }>;
let judge: Judge;
let web: WebServer | undefined;
let worker: WebServer | undefined;
let project: Project;
let base: Record<string, string>;

const MODES: Record<string, Record<string, string>> = {
  legacy: {
    SERVICE_MIGRATION_V4_WRITE_MODE: 'legacy',
    SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write',
    SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: 'false',
  },
  dual: {
    SERVICE_MIGRATION_V4_WRITE_MODE: 'dual',
    SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write',
    SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: 'true',
    SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: 'false',
    SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1',
    SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '0',
  },
  events_only: { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' },
};

async function switchTo(mode: string) {
  await Promise.all([web?.stop(), worker?.stop()]);
  const env = { ...base, ...MODES[mode] };
  [web, worker] = await Promise.all([startWeb(env), startWorker(env)]);
}

beforeAll(async () => {
  [stores, judge] = await Promise.all([startStores({ redis: true }), startJudge()]);
  base = { ...stores.env, ...llmConnectionEnv(), LOG_LEVEL: 'info' };
  project = await createProject({ ...base, ...MODES['legacy'] }, 'experiments-judged');
}, 240_000);

afterAll(async () => {
  await Promise.all([web?.stop(), worker?.stop()]);
  await stopStores(stores, judge);
});

const call = (method: string, path: string, body?: unknown) =>
  callJson(`${web!.url}/api/public`, project, method, path, body);
const client = () =>
  new LangfuseClient({ publicKey: project.publicKey, secretKey: project.secretKey, baseUrl: web!.url });

const ITEMS = [
  { id: 'fr', input: 'France', expectedOutput: 'Paris', metadata: { difficulty: 'easy' } },
  { id: 'de', input: 'Germany', expectedOutput: 'Berlin', metadata: { difficulty: 'hard' } },
];
const MAPPING = [
  { variable: 'country', source: 'input' },
  { variable: 'answer', source: 'output' },
  { variable: 'expected', source: 'expected_output' },
  { variable: 'difficulty', source: 'experiment_item_metadata', jsonPath: '$.difficulty' },
];

let datasetId: string;
let ruleId: string;
let evaluatorId: string;

/** The SDK's experiment runner on dataset `name`; the traces of its items by dataset item id. */
async function runExperiment(name: string, runName: string): Promise<Map<string, string>> {
  const lf = client();
  const result = await withSdkTracer(
    project,
    web!.url,
    async () =>
      (await lf.dataset.get(name)).runExperiment({
        name: 'capital-quiz',
        runName,
        task: async (item) => (item.input === 'France' ? 'Paris' : 'Bonn'),
      }),
    { exportMode: 'immediate' },
  );
  return new Map(result.itemResults.map((r) => [(r.item as { id: string }).id, r.traceId!]));
}

async function evalScores(traceId: string): Promise<Body[]> {
  const res = await call('GET', `/v3/scores?fields=details,subject&source=EVAL&traceId=${traceId}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

const scoresOf = (traceId: string) =>
  waitFor(
    `the EVAL score of trace ${traceId}`,
    async () => {
      const s = await evalScores(traceId);
      return s.length > 0 ? s : undefined;
    },
    120_000,
  );

const executionsOf = async (traceId: string) =>
  (await stores.pool.query('SELECT * FROM evaluation_executions WHERE trace_id = $1', [traceId]))
    .rows as Body[];

/** The judge writes its score before it records the execution as completed, so the record may trail the score. */
const settledExecutionsOf = (traceId: string) =>
  waitFor(
    `the settled executions of trace ${traceId}`,
    async () => {
      const rows = await executionsOf(traceId);
      return rows.length > 0 && rows.every((r) => r.status !== 'PENDING') ? rows : undefined;
    },
    30_000,
  );

/** Each item's score: on the item's root observation, with the rule's and evaluator's ids. */
async function expectJudged(traces: Map<string, string>, rootOf: (traceId: string) => Promise<string>) {
  for (const traceId of traces.values()) {
    const [score, ...more] = await scoresOf(traceId);
    expect(more).toEqual([]);
    const root = await rootOf(traceId);
    expect(root).not.toBe(traceId);
    expect(score).toMatchObject({
      name: 'expected-match',
      source: 'EVAL',
      dataType: 'CATEGORICAL',
      subject: { kind: 'observation', id: root, traceId },
      metadata: { evaluation_rule_id: ruleId, evaluator_id: evaluatorId, evaluator_version: '1' },
    });
    expect(JUDGE_CATEGORIES).toContain(score!.value);
    expect(typeof score!.comment).toBe('string');
    expect(score!.comment.length).toBeGreaterThan(0);
    expect(score!.metadata.execution_trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(await settledExecutionsOf(traceId)).toMatchObject([
      { status: 'COMPLETED', rule_id: ruleId, observation_id: root, score_id: score!.id },
    ]);
  }
}

/** The root observation of each run item of `runName`, as the deprecated run-items API lists it. */
async function runItemRoots(runName: string) {
  const items = await client().api.datasetRunItems.list({ datasetId, runName });
  return async (traceId: string) => items.data.find((i) => i.traceId === traceId)!.observationId!;
}

describe('in legacy: the dataset run items lead to what is judged', () => {
  it('judges each item of an SDK experiment on its root observation, with the expected output mapped', async () => {
    await switchTo('legacy');
    expect((await call('PUT', '/llm-connections', judgeConnection(judge))).status).toBe(200);
    const lf = client();
    for (const name of ['capitals', 'other']) {
      await lf.api.datasets.create({ name });
      for (const item of ITEMS)
        await lf.dataset.createItem({ datasetName: name, ...item, id: `${name}-${item.id}` });
    }
    datasetId = (await lf.api.datasets.get('capitals')).id;
    const evaluator = await call(
      'POST',
      '/unstable/evaluators',
      judgeEvaluator(
        'expected-match',
        'Capital of {{country}} ({{difficulty}}).\nExpected: {{expected}}\nAnswer: {{answer}}\nDoes the answer match?',
      ),
    );
    expect(evaluator.status, JSON.stringify(evaluator.body)).toBe(200);
    evaluatorId = evaluator.body.id;
    const rule = await call('POST', '/unstable/evaluation-rules', {
      name: 'experiment-live',
      evaluator: { name: 'expected-match', type: 'llm_as_judge' },
      target: 'experiment',
      enabled: true,
      filter: [{ type: 'stringOptions', column: 'datasetId', operator: 'any of', value: [datasetId] }],
      mapping: MAPPING,
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(200);
    expect(rule.body).toMatchObject({ target: 'experiment', legacy: false, status: 'active' });
    ruleId = rule.body.id;

    const traces = await runExperiment('capitals', 'run-legacy');
    const other = await runExperiment('other', 'run-legacy-other');
    await expectJudged(traces, await runItemRoots('run-legacy'));
    // Same experiment runner, another dataset: the rule's filter leaves it out.
    for (const traceId of other.values()) expect(await executionsOf(traceId)).toEqual([]);
  });

  it('the rules page previews the mapping on a run item as the judge reads it', async () => {
    const owner = await createUiUser(
      { ...base, ...MODES['legacy'] },
      `owner-${randomBytes(3).toString('hex')}@example.com`,
      ['--project', project.projectId, '--role', 'owner'],
    );
    const b = await signIn(web!.url, owner);
    const preview = await request(
      b,
      'POST',
      `/api/ui/projects/${project.projectId}/evaluation-rules/preview`,
      {
        headers: { 'x-csrf-token': b.csrf },
        body: {
          target: 'experiment',
          filter: [{ type: 'stringOptions', column: 'datasetId', operator: 'any of', value: [datasetId] }],
          evaluator: 'expected-match',
          mapping: MAPPING,
        },
      },
    );
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const values = Object.fromEntries(
      (preview.body.variables as Body[]).map((v) => [v['variable'], v['value']]),
    );
    const fr = values['country'] === 'France';
    expect(values).toEqual({
      country: fr ? 'France' : 'Germany',
      answer: fr ? 'Paris' : 'Bonn',
      expected: fr ? 'Paris' : 'Berlin',
      difficulty: fr ? 'easy' : 'hard',
    });
    expect(preview.body.prompt).toContain(`Expected: ${values['expected']}`);
  });

  it('judges a run the release 3 SDK linked to a trace alone, on the trace', async () => {
    const sdk = new Langfuse({
      publicKey: project.publicKey,
      secretKey: project.secretKey,
      baseUrl: web!.url,
    });
    const trace = sdk.trace({ name: 'quiz', input: 'France', output: 'Lyon' });
    const dataset = await sdk.getDataset('capitals');
    await dataset.items.find((i) => i.id === 'capitals-fr')!.link(trace, 'run-legacy-v3');
    await sdk.shutdownAsync();
    const [score, ...more] = await scoresOf(trace.id);
    expect(more).toEqual([]);
    expect(score).toMatchObject(
      judgeScore('expected-match', ruleId, evaluatorId, { kind: 'trace', id: trace.id }),
    );
    expect(JUDGE_CATEGORIES).toContain(score!.value);
  });
});

describe('in dual: still the dataset run items', () => {
  it('judges each item of an SDK experiment on its root observation', async () => {
    await switchTo('dual');
    const traces = await runExperiment('capitals', 'run-dual');
    await expectJudged(traces, await runItemRoots('run-dual'));
  });
});

describe('in events_only: the experiment items of the events', () => {
  it('judges each item of an SDK experiment on its root observation; the judge was sent the expected output', async () => {
    await switchTo('events_only');
    const traces = await runExperiment('capitals', 'run-events-only');
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const items = await client().api.experiments.listItems({
      fromStartTime: from,
      datasetId,
      fields: 'core',
    });
    const rootOf = async (traceId: string) => items.data.find((i) => i.traceId === traceId)!.id;
    await expectJudged(traces, rootOf);

    // The judge's own call, a trace of the project: its prompt holds the item's expected output.
    const de = (await evalScores(traces.get('capitals-de')!))[0]!;
    const filter = [
      { type: 'string', column: 'traceId', operator: '=', value: de.metadata.execution_trace_id },
    ];
    const judgeCall = await call(
      'GET',
      `/v2/observations?fields=core,basic,io&filter=${encodeURIComponent(JSON.stringify(filter))}`,
    );
    expect(judgeCall.body.data).toHaveLength(1);
    expect(judgeCall.body.data[0]).toMatchObject({
      environment: 'langfuse-llm-as-a-judge',
      level: 'DEFAULT',
    });
    const prompt = JSON.stringify(judgeCall.body.data[0].input);
    for (const part of ['Capital of Germany (hard)', 'Expected: Berlin', 'Answer: Bonn'])
      expect(prompt).toContain(part);
  });
});
