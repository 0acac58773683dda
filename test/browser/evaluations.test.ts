/**
 * The evaluation pages in Debian's chromium (playwright-core) against `observatory web` and a
 * worker in `events_only` on real PostgreSQL, Redis and the analytics server, with observations
 * the JS SDK (v5, OpenTelemetry) sent and the suite's real judge (llama.cpp's server with
 * SmolLM2-135M on 127.0.0.1, reached only because 127.0.0.1 is whitelisted): an LLM connection
 * made in the project settings shows its secret masked and no header value, and a metadata address
 * is refused naming the field; an evaluator made from a managed template, then its next version,
 * both listed; a rule whose mapping is previewed live on the SDK's observation, edited later; a
 * trace-level rule marked Legacy; an experiment rule on a dataset the SDK's experiment runner ran,
 * its preview showing the dataset item's expected output; the judge's verdict in the rule's execution log with its
 * reasoning and a link to the judge's trace; the EVAL score on the observations table and the
 * trace view; pause, and the pause the connection's deletion causes, with its reason.
 * The model's verdicts are not judged (a 135M model), only what the pages make of them.
 */
import { LangfuseClient } from '@langfuse/client';
import { startObservation } from '@langfuse/tracing';
import pgLib from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PENDING_PER_RULE } from '../../server/features/evaluation/scan.ts';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { JUDGE_MODEL, type Judge, startJudge } from '../fixtures/judge.ts';
import { llmConnectionEnv } from '../fixtures/llm-connection-env.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner'>;
let judge: Judge;
let datasetId: string;

/** Sends one `qa` generation through the JS SDK; returns its ids. */
async function sendQa(question: string, answer: string) {
  return traceWithJsSdk({ ...suite.project, baseUrl: suite.web.url }, () => {
    const gen = startObservation('qa', { input: { question }, model: 'app-model' }, { asType: 'generation' });
    gen.update({ output: answer });
    gen.end();
    return { traceId: gen.traceId, id: gen.id };
  });
}

beforeAll(async () => {
  judge = await startJudge();
  suite = await startBrowserSuite({
    project: 'browser-evaluations',
    worker: true,
    env: llmConnectionEnv(),
    people: { owner: 'owner' },
  });
  await sendQa('What is the capital of France?', 'Paris');
  const lf = new LangfuseClient({
    publicKey: suite.project.publicKey,
    secretKey: suite.project.secretKey,
    baseUrl: suite.web.url,
  });
  await lf.api.datasets.create({ name: 'capitals' });
  await lf.dataset.createItem({ datasetName: 'capitals', input: 'France', expectedOutput: 'Paris' });
  datasetId = (await lf.api.datasets.get('capitals')).id;
  await withSdkTracer(
    suite.project,
    suite.web.url,
    async () => (await lf.dataset.get('capitals')).runExperiment({ name: 'quiz', task: async () => 'Lyon' }),
    { exportMode: 'immediate' },
  );
}, 240_000);

afterAll(async () => {
  expect(await closeBrowserSuite(suite, judge)).toEqual({ blocked: [], errors: [] });
});

describe('evaluations in the browser', () => {
  let page: Page;
  beforeAll(async () => {
    page = await suite.chromium.open(suite.web.url, suite.people.owner);
  });

  it('makes an LLM connection in the project settings: secret masked, header values never shown, SSRF refused', async () => {
    await page.goto(`/project/${suite.project.projectId}/settings`);
    await page.getByRole('heading', { name: 'LLM connections' }).waitFor();
    const form = page.getByRole('form', { name: 'New LLM connection' });
    await form.getByLabel('Provider name').fill('metadata');
    await form.getByLabel('Base URL').fill('http://169.254.169.254/v1');
    await form.getByLabel('Secret key').fill('sk-never-shown-0000');
    await form.getByRole('button', { name: 'Create connection' }).click();
    await expect.poll(() => form.getByRole('alert').innerText()).toMatch(/^baseURL: .*169\.254\.169\.254/);

    await form.getByLabel('Provider name').fill('local-judge');
    await form.getByLabel('Base URL').fill(judge.baseUrl);
    await form.getByLabel('Secret key').fill('sk-never-shown-1234');
    await form.getByLabel('Extra headers').fill('x-team: header-value-hidden');
    await form.getByLabel('Custom models').fill(JUDGE_MODEL);
    await form.getByLabel("Offer the adapter's default models").uncheck();
    await form.getByRole('button', { name: 'Create connection' }).click();
    const table = page.getByRole('table', { name: 'LLM connections' });
    const row = table.getByRole('row', { name: /^local-judge/ });
    await row.waitFor();
    const text = await row.innerText();
    expect(text).toContain('...1234');
    expect(text).toContain('x-team');
    expect(text).toContain(JUDGE_MODEL);
    expect(await page.content()).not.toContain('header-value-hidden');
    expect(await page.content()).not.toContain('sk-never-shown-1234');
    await screenshot(page, 'evaluations-settings');
  });

  it('makes an evaluator from a managed template', async () => {
    await page.goto(`/project/${suite.project.projectId}/evaluations`);
    const evaluators = page.getByRole('table', { name: 'Evaluators' });
    const template = evaluators.getByRole('row', { name: /^hallucination Managed template/ });
    await template.getByRole('button', { name: 'Use template' }).click();
    const form = page.getByRole('form', { name: 'New evaluator' });
    expect(await form.getByLabel('Prompt').inputValue()).toContain('{{output}}');
    expect(await form.getByLabel('Score type').inputValue()).toBe('BOOLEAN');
    await form.getByLabel("Name (also the score's name)").fill('qa-hallucination');
    await form.getByLabel('Model').fill(JUDGE_MODEL);
    await form.getByRole('button', { name: 'Create evaluator' }).click();
    await expect.poll(() => form.getByRole('status').innerText()).toBe('Created qa-hallucination v1');
    const row = evaluators.getByRole('row', { name: /^qa-hallucination Project v1 BOOLEAN/ });
    expect(await row.innerText()).toContain(`local-judge / ${JUDGE_MODEL}`);

    // Its next version starts from it; the versions are listed newest first.
    await row.getByRole('button', { name: 'New version' }).click();
    expect(await form.getByLabel("Name (also the score's name)").inputValue()).toBe('qa-hallucination');
    expect(await form.getByLabel('Model').inputValue()).toBe(JUDGE_MODEL);
    await form.getByRole('button', { name: 'Create evaluator' }).click();
    await expect.poll(() => form.getByRole('status').innerText()).toBe('Created qa-hallucination v2');
    const latest = evaluators.getByRole('row', { name: /^qa-hallucination Project v2 BOOLEAN/ });
    await latest.getByRole('button', { name: 'Versions' }).click();
    const versions = page.getByRole('list', { name: 'Versions of qa-hallucination' }).getByRole('listitem');
    await expect.poll(() => versions.count()).toBe(2);
    expect(await versions.nth(0).innerText()).toMatch(/^v2 · /);
    expect(await versions.nth(1).innerText()).toMatch(/^v1 · /);
  });

  it('previews the mapping live on the observation the SDK sent, then creates the rule', async () => {
    const form = page.getByRole('form', { name: 'New evaluation rule' });
    await form.getByLabel('Rule name').fill('judge qa');
    await form.getByLabel('Evaluator', { exact: true }).selectOption('qa-hallucination');
    await form.getByLabel('Filter').fill('name = "qa"');
    await form.getByLabel('Source of input').selectOption('input');
    await form.getByLabel('JSONPath of input').fill('$.question');
    await form.getByLabel('Source of output').selectOption('output');
    const preview = form.getByRole('region', { name: 'Mapping preview' });
    await expect
      .poll(() => preview.locator('dd[data-variable="input"]').innerText(), { timeout: 15_000 })
      .toBe('What is the capital of France?');
    expect(await preview.locator('dd[data-variable="output"]').innerText()).toBe('Paris');
    expect(await preview.locator('.rendered-prompt').innerText()).toContain('What is the capital of France?');
    // A path that cannot parse is shown where its value would be.
    await form.getByLabel('JSONPath of input').fill('$.question[');
    await expect.poll(() => preview.locator('dd[data-variable="input"]').innerText()).toMatch(/balanced/);
    await form.getByLabel('JSONPath of input').fill('$.question');
    await screenshot(page, 'evaluations-preview');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const row = page.getByRole('table', { name: 'Evaluation rules' }).getByRole('row', { name: /^judge qa/ });
    await expect.poll(() => row.locator('.rule-state').innerText()).toBe('Active');
    expect(await row.innerText()).toContain('observation');
    expect(await row.innerText()).toContain('name = "qa"');
  });

  it('marks a trace-level rule Legacy', async () => {
    const form = page.getByRole('form', { name: 'New evaluation rule' });
    await form.getByLabel('Rule name').fill('old trace rule');
    await form.getByLabel('Target').selectOption('trace');
    await form.getByLabel('Evaluator', { exact: true }).selectOption('qa-hallucination');
    await form.getByLabel('Enabled').uncheck();
    await form.getByRole('button', { name: 'Create rule' }).click();
    const row = page
      .getByRole('table', { name: 'Evaluation rules' })
      .getByRole('row', { name: /^old trace rule/ });
    await expect.poll(() => row.getByRole('cell').nth(1).innerText()).toBe('trace Legacy');
    expect(await row.locator('.rule-state').innerText()).toBe('Inactive');
  });

  it("previews an experiment rule on the experiment runner's item: the dataset's expected output", async () => {
    const form = page.getByRole('form', { name: 'New evaluation rule' });
    await form.getByLabel('Rule name').fill('judge quiz');
    await form.getByLabel('Target').selectOption('experiment');
    await form.getByLabel('Evaluator', { exact: true }).selectOption('qa-hallucination');
    await form.getByLabel('Filter').fill(`datasetId any of ["${datasetId}"]`);
    await form.getByLabel('Source of input').selectOption('input');
    await form.getByLabel('Source of output').selectOption('expected_output');
    await form.getByLabel('Enabled').uncheck();
    const preview = form.getByRole('region', { name: 'Mapping preview' });
    await expect
      .poll(() => preview.locator('dd[data-variable="output"]').innerText(), { timeout: 15_000 })
      .toBe('Paris');
    expect(await preview.locator('dd[data-variable="input"]').innerText()).toBe('France');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const row = page
      .getByRole('table', { name: 'Evaluation rules' })
      .getByRole('row', { name: /^judge quiz/ });
    await expect.poll(() => row.getByRole('cell').nth(1).innerText()).toBe('experiment');
    expect(await row.innerText()).toContain(datasetId);
  });

  let judged: { traceId: string; id: string };
  it("shows the judge's verdict in the rule's execution log, with its reasoning and the judge's trace", async () => {
    judged = await sendQa('How much is 12 times 12?', '124');
    const row = page.getByRole('table', { name: 'Evaluation rules' }).getByRole('row', { name: /^judge qa/ });
    await row.getByRole('button', { name: 'Executions' }).click();
    const log = page.getByRole('table', { name: 'Executions of judge qa' });
    const entry = log.getByRole('row', { name: new RegExp(judged.id) });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh executions' }).click();
          return (await entry.count()) > 0 ? entry.getByRole('cell').nth(2).innerText() : 'none';
        },
        { timeout: 120_000, interval: 1000 },
      )
      .toBe('COMPLETED');
    const cells = entry.getByRole('cell');
    expect(['true', 'false']).toContain(await cells.nth(4).innerText());
    expect((await cells.nth(5).innerText()).length).toBeGreaterThan(0);
    await screenshot(page, 'evaluations-log');
    await entry.getByRole('link', { name: 'judge trace' }).click();
    await expect
      .poll(() => page.getByRole('heading', { level: 2 }).innerText())
      .toBe('Execute evaluator: qa-hallucination GENERATION');
  });

  it("says when the rule's queue is full and its scan holds", async () => {
    const db = new pgLib.Client({ connectionString: suite.pg.url });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT id FROM evaluation_rules WHERE project_id = $1 AND name = $2', [
        suite.project.projectId,
        'judge qa',
      ]);
      // A backlog not yet due (the judge is busy): the worker leaves it, the scan holds.
      await db.query(
        `INSERT INTO evaluation_executions (id, project_id, rule_id, evaluator_id, trace_id, observation_id, observation_start_time, next_attempt_at)
         SELECT 'held-' || n, $1, $2, 'e', 't', 'held-' || n, now(), now() + interval '1 hour' FROM generate_series(1, $3::int) AS n`,
        [suite.project.projectId, rows[0].id, PENDING_PER_RULE],
      );
      await page.goto(`/project/${suite.project.projectId}/evaluations`);
      const row = page
        .getByRole('table', { name: 'Evaluation rules' })
        .getByRole('row', { name: /^judge qa/ });
      await row.getByRole('button', { name: 'Executions' }).click();
      await expect
        .poll(() => page.getByRole('status').filter({ hasText: 'waiting for the judge' }).innerText())
        .toBe(
          `${PENDING_PER_RULE} waiting for the judge. The rule's scan holds while ${PENDING_PER_RULE} wait: what arrives meanwhile is judged once the judge catches up, nothing is skipped.`,
        );
    } finally {
      await db.query("DELETE FROM evaluation_executions WHERE id LIKE 'held-%'");
      await db.end();
    }
  });

  it('shows the EVAL score on the observations table and on the trace view', async () => {
    await page.goto(`/project/${suite.project.projectId}/traces/${judged.traceId}`);
    const scores = page.getByRole('list', { name: 'Scores' });
    await expect
      .poll(() => scores.innerText())
      .toMatch(/^qa-hallucination: (true|false) EVAL · .+ · judge trace$/);
    await page.goto(`/project/${suite.project.projectId}/observations`);
    await expect
      .poll(() => page.locator('.score', { hasText: 'qa-hallucination' }).first().innerText())
      .toMatch(/^qa-hallucination: (true|false) \(eval\)$/);
  });

  it('pauses the rule, and shows why it paused when its connection is deleted', async () => {
    await page.goto(`/project/${suite.project.projectId}/evaluations`);
    const row = page.getByRole('table', { name: 'Evaluation rules' }).getByRole('row', { name: /^judge qa/ });
    await row.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => row.locator('.rule-state').innerText()).toBe('Inactive');
    await row.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => row.locator('.rule-state').innerText()).toBe('Active');

    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit rule judge qa' });
    expect(await edit.getByLabel('JSONPath of input').inputValue()).toBe('$.question');
    await edit.getByLabel('Sampling').fill('0.5');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(() => row.getByRole('cell').nth(4).innerText()).toBe('0.5');

    await page.goto(`/project/${suite.project.projectId}/settings`);
    await page
      .getByRole('table', { name: 'LLM connections' })
      .getByRole('row', { name: /^local-judge/ })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByText('No LLM connection yet').waitFor();
    await page.goto(`/project/${suite.project.projectId}/evaluations`);
    await expect
      .poll(() => row.locator('.rule-state').innerText())
      .toMatch(/^Paused: LLM_CONNECTION_DELETED\n.*connection "local-judge"/);
    await screenshot(page, 'evaluations-paused');
  });
});
