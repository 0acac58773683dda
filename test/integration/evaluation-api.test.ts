/**
 * The unstable evaluators and evaluation-rules API through `observatory web` on real PostgreSQL,
 * driven by plain HTTP as the reference's clients call it: shapes, versioning, the managed
 * templates, the documented 400/404/409/422 cases with their `code` and `details`, pausing when
 * the connection goes away, and another project's key seeing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callJson, type JsonBody } from '../fixtures/api-client.ts';
import { llmConnectionEnv, UNCALLED_CONNECTION } from '../fixtures/llm-connection-env.ts';
import { createProject, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;
let other: Project;

beforeAll(async () => {
  suite = await startServiceSuite({
    project: 'eval-api',
    env: {
      ...MODE_ENV.events_only,
      ...llmConnectionEnv(),
    },
  });
  other = await createProject(suite.env, 'eval-api-other');
});

afterAll(async () => {
  await stopServiceSuite(suite);
});

type Body = JsonBody;
const call = (method: string, path: string, body?: unknown, p: Project = suite.project) =>
  callJson(`${suite.web.url}/api/public`, p, method, path, body);

const connection = () => call('PUT', '/llm-connections', UNCALLED_CONNECTION);

const OUTPUT = {
  dataType: 'CATEGORICAL',
  reasoning: { description: 'Why.' },
  score: {
    description: 'Is the answer right?',
    categories: ['yes', 'no'],
    shouldAllowMultipleMatches: false,
  },
};
const evaluator = (extra: Body = {}) => ({
  name: 'answer-check',
  type: 'llm_as_judge',
  prompt: 'Question: {{input}}\nAnswer: {{output}}\nTier: {{tier}}',
  outputDefinition: OUTPUT,
  modelConfig: { provider: 'judge', model: 'smollm2' },
  ...extra,
});
const MAPPING = [
  { variable: 'input', source: 'input' },
  { variable: 'output', source: 'output' },
  { variable: 'tier', source: 'metadata', jsonPath: '$.customer.tier' },
];
const rule = (extra: Body = {}) => ({
  name: 'live-check',
  evaluator: { name: 'answer-check', type: 'llm_as_judge' },
  target: 'observation',
  enabled: true,
  filter: [{ type: 'stringOptions', column: 'type', operator: 'any of', value: ['GENERATION'] }],
  mapping: MAPPING,
  ...extra,
});

let evaluatorId: string;
let ruleId: string;

describe('evaluators', () => {
  it('422 evaluator_preflight_failed without a model, or without a connection for its provider', async () => {
    const noModel = await call('POST', '/unstable/evaluators', evaluator({ modelConfig: null }));
    expect(noModel).toMatchObject({
      status: 422,
      body: {
        code: 'evaluator_preflight_failed',
        details: { evaluatorName: 'answer-check', provider: null, model: null },
      },
    });
    const noConnection = await call('POST', '/unstable/evaluators', evaluator());
    expect(noConnection).toMatchObject({
      status: 422,
      body: { code: 'evaluator_preflight_failed', details: { provider: 'judge', model: 'smollm2' } },
    });
    expect((await connection()).status).toBe(200);
    const wrongModel = await call(
      'POST',
      '/unstable/evaluators',
      evaluator({ modelConfig: { provider: 'judge', model: 'gpt-x' } }),
    );
    expect(wrongModel.body.code).toBe('evaluator_preflight_failed');
  });

  it('creates version 1, then version 2 under the same id; get and list give the latest', async () => {
    const v1 = await call('POST', '/unstable/evaluators', evaluator());
    expect(v1.status).toBe(200);
    expect(v1.body).toEqual({
      id: expect.any(String),
      name: 'answer-check',
      version: 1,
      type: 'llm_as_judge',
      variables: ['input', 'output', 'tier'],
      mapping: null,
      evaluationRuleCount: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      prompt: 'Question: {{input}}\nAnswer: {{output}}\nTier: {{tier}}',
      outputDefinition: OUTPUT,
      modelConfig: { provider: 'judge', model: 'smollm2' },
      managed: false,
    });
    const v2 = await call('POST', '/unstable/evaluators', evaluator());
    expect(v2.body).toMatchObject({ id: v1.body.id, version: 2 });
    evaluatorId = v1.body.id;
    expect((await call('GET', `/unstable/evaluators/${evaluatorId}`)).body).toEqual(v2.body);
    const list = await call('GET', '/unstable/evaluators?limit=100');
    const names = list.body.data.map((e: Body) => e.name);
    expect(names[0]).toBe('answer-check');
    expect(names).toEqual(
      expect.arrayContaining([
        'correctness',
        'relevance',
        'hallucination',
        'helpfulness',
        'toxicity',
        'conciseness',
      ]),
    );
    expect(list.body.meta).toEqual({ page: 1, limit: 100, totalItems: 7, totalPages: 1 });
    expect((await call('GET', `/unstable/evaluators/${evaluatorId}`, undefined, other)).status).toBe(404);
  });

  it('400 invalid_body on a malformed output definition; 422 for code evaluators', async () => {
    const bad = await call(
      'POST',
      '/unstable/evaluators',
      evaluator({ outputDefinition: { dataType: 'NUMERIC' } }),
    );
    expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_body' } });
    expect(bad.body.message).toContain('outputDefinition');
    const code = await call('POST', '/unstable/evaluators', {
      name: 'c',
      type: 'code',
      sourceCode: 'x',
      sourceCodeLanguage: 'PYTHON',
    });
    expect(code).toMatchObject({ status: 422, body: { code: 'unprocessable_content' } });
  });
});

describe('evaluation rules', () => {
  it.each([
    [
      { mapping: MAPPING.slice(0, 2) },
      400,
      'missing_variable_mapping',
      { field: 'mapping', variables: ['tier'] },
    ],
    [{ mapping: [...MAPPING, MAPPING[0]] }, 400, 'duplicate_variable_mapping', { variable: 'input' }],
    [
      { mapping: [MAPPING[0], { variable: 'output', source: 'expected_output' }, MAPPING[2]] },
      400,
      'invalid_variable_mapping',
      { field: 'mapping[1].source', variable: 'output' },
    ],
    [
      { mapping: [MAPPING[0], MAPPING[1], { variable: 'tier', source: 'metadata', jsonPath: '$[' }] },
      400,
      'invalid_json_path',
      { field: 'mapping[2].jsonPath', variable: 'tier', value: '$[' },
    ],
    [
      { filter: [{ type: 'stringOptions', column: 'type', operator: 'any of', value: ['INVALID'] }] },
      400,
      'invalid_filter_value',
      { field: 'filter[0].value', column: 'type', invalidValues: ['INVALID'] },
    ],
    [
      { filter: [{ type: 'string', column: 'datasetId', operator: '=', value: 'x' }] },
      400,
      'invalid_filter_value',
      { column: 'datasetId' },
    ],
    [{ evaluator: { name: 'nope' } }, 404, 'resource_not_found', undefined],
    // Experiment rules filter on the dataset only, by the ids of the project's datasets.
    [{ target: 'experiment' }, 400, 'invalid_filter_value', { field: 'filter[0].column', column: 'type' }],
    [
      {
        target: 'experiment',
        filter: [{ type: 'stringOptions', column: 'datasetId', operator: 'any of', value: ['capitals'] }],
      },
      400,
      'invalid_filter_value',
      { field: 'filter[0].value', column: 'datasetId', invalidValues: ['capitals'] },
    ],
    [
      { target: 'experiment', filter: [{ type: 'string', column: 'datasetId', operator: '=', value: 'x' }] },
      400,
      'invalid_filter_value',
      { field: 'filter[0].type', column: 'datasetId' },
    ],
    [
      {
        target: 'experiment',
        filter: [],
        mapping: [...MAPPING.slice(0, 2), { variable: 'tier', source: 'nope' }],
      },
      400,
      'invalid_body',
      undefined,
    ],
    [{ sampling: 0 }, 400, 'invalid_body', undefined],
  ] as const)('refuses %j with %i %s', async (change, status, code, details) => {
    const res = await call('POST', '/unstable/evaluation-rules', rule(change as Body));
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    if (details) expect(res.body.details).toMatchObject(details);
    expect((await call('GET', '/unstable/evaluation-rules')).body.data).toEqual([]);
  });

  it('creates an active rule in the reference shape; the same name again is 409 name_conflict', async () => {
    const res = await call('POST', '/unstable/evaluation-rules', rule());
    expect(res.status).toBe(200);
    ruleId = res.body.id;
    const ref = { id: evaluatorId, name: 'answer-check', type: 'llm_as_judge' };
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'live-check',
      evaluator: ref,
      evaluators: [{ evaluator: ref, mapping: MAPPING }],
      target: 'observation',
      legacy: false,
      enabled: true,
      status: 'active',
      pausedReason: null,
      pausedMessage: null,
      sampling: 1,
      // The reference's job configuration default, in milliseconds.
      delay: 10_000,
      filter: rule().filter,
      mapping: MAPPING,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const again = await call('POST', '/unstable/evaluation-rules', rule());
    expect(again).toMatchObject({ status: 409, body: { code: 'name_conflict', details: { field: 'name' } } });
    expect(again.body.message).toContain(`/api/public/unstable/evaluation-rules/${ruleId}`);
    expect((await call('GET', `/unstable/evaluators/${evaluatorId}`)).body.evaluationRuleCount).toBe(1);
    expect((await call('GET', `/unstable/evaluation-rules/${ruleId}`, undefined, other)).status).toBe(404);
  });

  it('creates an experiment rule on a dataset of the project, mapping the expected output; 422 without a model', async () => {
    const ds = await call('POST', '/v2/datasets', { name: 'capitals' });
    expect(ds.status).toBe(200);
    const byDataset = [
      { type: 'stringOptions', column: 'datasetId', operator: 'any of', value: [ds.body.id] },
    ];
    const mapping = [
      { variable: 'input', source: 'input' },
      { variable: 'output', source: 'expected_output' },
      { variable: 'tier', source: 'experiment_item_metadata', jsonPath: '$.tier' },
    ];
    const res = await call(
      'POST',
      '/unstable/evaluation-rules',
      rule({ name: 'experiment-check', target: 'experiment', filter: byDataset, mapping, sampling: 0.5 }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      target: 'experiment',
      legacy: false,
      status: 'active',
      sampling: 0.5,
      filter: byDataset,
      mapping,
      evaluators: [{ evaluator: { id: evaluatorId, name: 'answer-check' }, mapping }],
    });
    // The same mapping on an observation rule: expected_output is an experiment source only.
    const onObservation = await call('PATCH', `/unstable/evaluation-rules/${res.body.id}`, {
      target: 'observation',
      filter: [],
    });
    expect(onObservation).toMatchObject({
      status: 400,
      body: { code: 'invalid_variable_mapping', details: { field: 'evaluators[0].mapping[1].source' } },
    });
    // A managed template names no model: an enabled experiment rule on it fails its preflight.
    const template = await call('POST', '/unstable/evaluation-rules', {
      name: 'experiment-template',
      evaluator: { name: 'correctness' },
      target: 'experiment',
      enabled: true,
      mapping: [
        { variable: 'input', source: 'input' },
        { variable: 'output', source: 'output' },
      ],
    });
    expect(template).toMatchObject({
      status: 422,
      body: { code: 'evaluator_preflight_failed', details: { evaluatorName: 'correctness' } },
    });
    expect((await call('DELETE', `/unstable/evaluation-rules/${res.body.id}`)).status).toBe(200);
  });

  it('PATCH changes only what is sent; an empty body is 400', async () => {
    expect((await call('PATCH', `/unstable/evaluation-rules/${ruleId}`, {})).body.code).toBe('invalid_body');
    const off = await call('PATCH', `/unstable/evaluation-rules/${ruleId}`, {
      enabled: false,
      sampling: 0.5,
    });
    expect(off.body).toMatchObject({
      enabled: false,
      status: 'inactive',
      sampling: 0.5,
      name: 'live-check',
      mapping: MAPPING,
    });
    const on = await call('PATCH', `/unstable/evaluation-rules/${ruleId}`, { enabled: true });
    expect(on.body).toMatchObject({ status: 'active', sampling: 0.5 });
  });

  it('deleting the connection pauses the rule; enabling fails preflight until the connection is back', async () => {
    const conns = (await call('GET', '/llm-connections')).body.data as Body[];
    expect((await call('DELETE', `/llm-connections/${conns[0]!.id}`)).status).toBe(200);
    const paused = await call('GET', `/unstable/evaluation-rules/${ruleId}`);
    expect(paused.body).toMatchObject({
      enabled: true,
      status: 'paused',
      pausedReason: 'LLM_CONNECTION_DELETED',
    });
    expect(paused.body.pausedMessage).toContain('"judge"');
    const retry = await call('PATCH', `/unstable/evaluation-rules/${ruleId}`, { enabled: true });
    expect(retry).toMatchObject({ status: 422, body: { code: 'evaluator_preflight_failed' } });
    await connection();
    const resumed = await call('PATCH', `/unstable/evaluation-rules/${ruleId}`, { enabled: true });
    expect(resumed.body).toMatchObject({ status: 'active', pausedReason: null, pausedMessage: null });
  });

  it('deletes rules and evaluators; the scores they made are not touched (none here)', async () => {
    expect((await call('DELETE', `/unstable/evaluation-rules/${ruleId}`)).body).toEqual({
      message: 'Evaluation rule successfully deleted',
    });
    expect((await call('GET', `/unstable/evaluation-rules/${ruleId}`)).body.code).toBe('resource_not_found');
    expect((await call('DELETE', `/unstable/evaluators/${evaluatorId}`)).status).toBe(200);
    expect((await call('GET', `/unstable/evaluators/${evaluatorId}`)).status).toBe(404);
  });
});
