/**
 * The evaluations pages' routes under `/api/ui/projects/:projectId`, through HTTP against
 * `observatory web` and `observatory worker` (events_only) on real PostgreSQL, Redis and the
 * analytics server, with observations the JS SDK (v5, OpenTelemetry) sent: LLM connections (the
 * secret masked, header values never returned, a metadata address refused naming `baseURL`, owners
 * only), an evaluator made from a managed template and its versions, a rule, the live preview of its mapping on the
 * SDK's observation (values as the judge reads them), the execution log showing the worker's
 * failed attempt with its reason (the connection's port has no server), pause and enable; viewers
 * cannot write, and the owner of another project gets 404 on this project's rule, log and preview.
 */
import { startObservation } from '@langfuse/tracing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmConnectionEnv } from '../fixtures/llm-connection-env.ts';
import { freePort } from '../fixtures/ports.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { createProject, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { type Browser, createProjectMember, type Row, request, send, signIn } from '../fixtures/ui-client.ts';
import { waitFor } from '../fixtures/wait.ts';

let suite: ServiceSuite;
let other: Project;
let owner: Browser;
let viewer: Browser;
let stranger: Browser;
let sent: { traceId: string; id: string };
let deadPort: number;

const base = () => `/api/ui/projects/${suite.project.projectId}`;

beforeAll(async () => {
  deadPort = await freePort();
  suite = await startServiceSuite({
    project: 'evaluations-ui',
    worker: true,
    env: { ...MODE_ENV.events_only, ...llmConnectionEnv() },
  });
  other = await createProject(suite.env, 'evaluations-other');
  const users = await Promise.all([
    createProjectMember(suite.env, 'eval-owner@example.com', suite.project.projectId, 'owner'),
    createProjectMember(suite.env, 'eval-viewer@example.com', suite.project.projectId, 'viewer'),
    createProjectMember(suite.env, 'eval-stranger@example.com', other.projectId, 'owner'),
  ]);
  [owner, viewer, stranger] = (await Promise.all(users.map((u) => signIn(suite.web.url, u)))) as [
    Browser,
    Browser,
    Browser,
  ];
  sent = await withSdkTracer(suite.project, suite.web.url, () => {
    const gen = startObservation(
      'qa',
      { input: { question: 'What is the capital of France?' }, model: 'app-model' },
      { asType: 'generation' },
    );
    gen.update({ output: 'Paris' });
    gen.end();
    return { traceId: gen.traceId, id: gen.id };
  });
}, 120_000);

afterAll(async () => {
  await stopServiceSuite(suite);
});

describe('the evaluations routes of the UI', () => {
  it('LLM connections: secret masked, header values never returned, SSRF refused naming the field, owners only', async () => {
    const connection = {
      provider: 'local',
      adapter: 'openai',
      secretKey: 'sk-ui-secret-1234567890',
      baseURL: `http://127.0.0.1:${deadPort}/v1`,
      extraHeaders: { 'x-team': 'header-value-never-shown' },
      customModels: ['judge-model'],
      withDefaultModels: false,
    };
    const saved = await send(owner, 'PUT', `${base()}/llm-connections`, connection);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body).toMatchObject({ provider: 'local', extraHeaderKeys: ['x-team'] });
    const list = await request(owner, 'GET', `${base()}/llm-connections`);
    expect(list.body.data).toHaveLength(1);
    const text = JSON.stringify(list.body);
    expect(text).not.toContain('sk-ui-secret-1234567890');
    expect(text).not.toContain('header-value-never-shown');
    expect(list.body.data[0].displaySecretKey).toBe('...7890');

    const refused = await send(owner, 'PUT', `${base()}/llm-connections`, {
      ...connection,
      provider: 'metadata',
      baseURL: 'http://169.254.169.254/v1',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^baseURL: /);

    const byViewer = await send(viewer, 'PUT', `${base()}/llm-connections`, connection);
    expect(byViewer.status).toBe(403);
    expect(byViewer.body.message).toBe('only owners change LLM connections');
    expect((await request(stranger, 'GET', `${base()}/llm-connections`)).status).toBe(404);
  });

  let ruleId: string;
  it('makes an evaluator from a managed template and a rule; viewers cannot', async () => {
    const evaluators = await request(owner, 'GET', `${base()}/evaluators?limit=100`);
    const template = (evaluators.body.data as Row[]).find((e) => e.name === 'correctness')!;
    expect(template).toMatchObject({ managed: true, version: 1, variables: ['input', 'output'] });
    const made = await send(owner, 'POST', `${base()}/evaluators`, {
      name: 'ui-correctness',
      type: 'llm_as_judge',
      prompt: template.prompt,
      outputDefinition: template.outputDefinition,
      modelConfig: { provider: 'local', model: 'judge-model' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({ managed: false, version: 1 });
    const next = await send(owner, 'POST', `${base()}/evaluators`, {
      name: 'ui-correctness',
      prompt: template.prompt,
      outputDefinition: template.outputDefinition,
      modelConfig: { provider: 'local', model: 'judge-model' },
    });
    expect(next.body).toMatchObject({ id: made.body.id, version: 2 });
    const versions = await request(owner, 'GET', `${base()}/evaluators/${made.body.id}/versions`);
    expect((versions.body.data as Row[]).map((v) => v.version)).toEqual([2, 1]);
    expect((await request(owner, 'GET', `${base()}/evaluators/${template.id}/versions`)).body.data).toEqual([
      template,
    ]);
    expect((await request(stranger, 'GET', `${base()}/evaluators/${made.body.id}/versions`)).status).toBe(
      404,
    );
    expect(
      (
        await request(
          stranger,
          'GET',
          `/api/ui/projects/${other.projectId}/evaluators/${made.body.id}/versions`,
        )
      ).status,
    ).toBe(404);

    const rule = {
      name: 'ui-rule',
      target: 'observation',
      enabled: true,
      filter: [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['qa'] }],
      evaluators: [
        {
          evaluator: { name: 'ui-correctness' },
          mapping: [
            { variable: 'input', source: 'input', jsonPath: '$.question' },
            { variable: 'output', source: 'output' },
          ],
        },
      ],
    };
    expect((await send(viewer, 'POST', `${base()}/evaluation-rules`, rule)).status).toBe(403);
    const created = await send(owner, 'POST', `${base()}/evaluation-rules`, rule);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ status: 'active', legacy: false, target: 'observation' });
    ruleId = created.body.id;

    // A bad mapping answers the API's envelope naming the field.
    const bad = await send(owner, 'PATCH', `${base()}/evaluation-rules/${ruleId}`, {
      mapping: [{ variable: 'input', source: 'input', jsonPath: 'question' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_json_path', details: { field: 'mapping[0].jsonPath' } });
  });

  it("previews the mapping on the SDK's observation as the judge resolves it", async () => {
    const preview = async (mapping: Row[], filter: Row[] = []) =>
      send(owner, 'POST', `${base()}/evaluation-rules/preview`, {
        target: 'observation',
        filter,
        evaluator: 'ui-correctness',
        mapping,
      });
    const res = await waitFor('the observation to be readable', async () => {
      const r = await preview(
        [
          { variable: 'input', source: 'input', jsonPath: '$.question' },
          { variable: 'output', source: 'output' },
        ],
        [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['qa'] }],
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.sample ? r : undefined;
    });
    expect(res.body.sample).toMatchObject({ id: sent.id, traceId: sent.traceId });
    expect(res.body.variables).toEqual([
      { variable: 'input', value: 'What is the capital of France?', problem: null },
      { variable: 'output', value: 'Paris', problem: null },
    ]);
    expect(res.body.prompt).toContain('Question: What is the capital of France?\nAnswer: Paris');

    const badPath = await preview([{ variable: 'input', source: 'input', jsonPath: '$.question[' }]);
    expect(badPath.body.variables[0].problem).toMatch(/balanced/);
    const none = await preview(
      [],
      [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['nothing'] }],
    );
    expect(none.body).toEqual({ sample: null, variables: [], prompt: null });
    const badFilter = await preview([], [{ type: 'string', column: 'nope', operator: '=', value: 'x' }]);
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.details).toMatchObject({ field: 'filter[0].column' });
  });

  it("logs the worker's failed attempt with its reason; pause and enable", async () => {
    // A rule judges what arrives after it is made.
    const judged = await withSdkTracer(suite.project, suite.web.url, () => {
      const gen = startObservation('qa', { input: { question: 'And of Spain?' } }, { asType: 'generation' });
      gen.update({ output: 'Madrid' });
      gen.end();
      return { traceId: gen.traceId, id: gen.id };
    });
    const failed = await waitFor('a failed attempt in the log', async () => {
      const log = await request(owner, 'GET', `${base()}/evaluation-rules/${ruleId}/executions`);
      expect(log.status).toBe(200);
      const [x] = log.body.data as Row[];
      return x?.error ? x : undefined;
    });
    expect(failed).toMatchObject({
      observationId: judged.id,
      traceId: judged.traceId,
      status: 'PENDING',
      score: null,
    });
    expect(failed.error).toMatch(/^provider unreachable: .*ECONNREFUSED/);

    const paused = await send(owner, 'PATCH', `${base()}/evaluation-rules/${ruleId}`, { enabled: false });
    expect(paused.body).toMatchObject({ enabled: false, status: 'inactive' });
    const enabled = await send(owner, 'PATCH', `${base()}/evaluation-rules/${ruleId}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, status: 'active', pausedReason: null });
  });

  it("shows another project's owner nothing of this project's rule", async () => {
    for (const [method, path, body] of [
      ['GET', `${base()}/evaluation-rules/${ruleId}`, undefined],
      ['GET', `${base()}/evaluation-rules/${ruleId}/executions`, undefined],
      ['PATCH', `${base()}/evaluation-rules/${ruleId}`, { enabled: false }],
      [
        'POST',
        `${base()}/evaluation-rules/preview`,
        { target: 'observation', evaluator: 'ui-correctness', mapping: [] },
      ],
    ] as const) {
      const res = await send(stranger, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain(sent.id);
    }
    // Through its own project's path, the rule id is not found either.
    const own = await request(
      stranger,
      'GET',
      `/api/ui/projects/${other.projectId}/evaluation-rules/${ruleId}/executions`,
    );
    expect(own.status).toBe(404);
  });

  it('deleting the connection pauses the rule with its reason', async () => {
    const [c] = (await request(owner, 'GET', `${base()}/llm-connections`)).body.data as Row[];
    expect((await send(owner, 'DELETE', `${base()}/llm-connections/${c!.id}`)).status).toBe(200);
    const rule = await request(owner, 'GET', `${base()}/evaluation-rules/${ruleId}`);
    expect(rule.body).toMatchObject({ status: 'paused', pausedReason: 'LLM_CONNECTION_DELETED' });
  });
});
