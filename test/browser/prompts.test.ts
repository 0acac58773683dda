/**
 * The prompts page in Debian's chromium (playwright-core) against `observatory web` on real
 * PostgreSQL and the analytics server, with prompts the JS SDK (`langfuse` v3) made: folders and
 * tags in the list, versions with config as JSON and a diff, the `production` label moved by an
 * owner and refused to a member, and the playground sending a prompt with a variable through the
 * project's LLM connection to the suite's real judge model (llama.cpp serving SmolLM2 on
 * 127.0.0.1), showing its completion, tokens and the cost the project's model definition gives,
 * for a text prompt and a chat prompt, then saving one as a new version the SDK reads.
 */
import { Langfuse } from 'langfuse';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../conformance/env.ts';
import { JUDGE_MODEL, type Judge, judgeConnection, startJudge } from '../fixtures/judge.ts';
import { llmConnectionEnv } from '../fixtures/llm-connection-env.ts';
import { bodyRows, screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner' | 'member'>;
let judge: Judge;
let lf: Langfuse;

const call = (method: string, path: string, body?: unknown) =>
  api<Record<string, unknown>>({ url: suite.web.url, ...suite.project }, method, path, body);

beforeAll(async () => {
  judge = await startJudge();
  suite = await startBrowserSuite({
    project: 'browser-prompts',
    env: llmConnectionEnv(),
    people: { owner: 'owner', member: 'member' },
  });
  expect((await call('PUT', '/api/public/llm-connections', judgeConnection(judge))).status).toBe(200);
  expect(
    (
      await call('POST', '/api/public/models', {
        modelName: JUDGE_MODEL,
        matchPattern: `(?i)^${JUDGE_MODEL}$`,
        unit: 'TOKENS',
        inputPrice: 0.000001,
        outputPrice: 0.000002,
      })
    ).status,
  ).toBe(200);
  lf = new Langfuse({
    publicKey: suite.project.publicKey,
    secretKey: suite.project.secretKey,
    baseUrl: suite.web.url,
  });
  await lf.createPrompt({
    name: 'shared/tone',
    prompt: 'Answer in one short sentence.',
    labels: ['production'],
  });
  await lf.createPrompt({
    name: 'support/greeting',
    prompt: 'You greet customers.\nSay hello to {{name}}.',
    config: { temperature: 0 },
    labels: ['production'],
    tags: ['support'],
  });
  await lf.createPrompt({
    name: 'support/greeting',
    prompt:
      'You greet customers warmly.\nSay hello to {{name}}.\n@@@langfusePrompt:name=shared/tone|label=production@@@',
    config: { temperature: 0, model: JUDGE_MODEL },
    labels: ['staging'],
  });
  await lf.createPrompt({
    name: 'chatbot',
    type: 'chat',
    prompt: [{ role: 'system', content: 'You are helpful.' }],
    labels: ['production'],
    tags: ['bot', 'chat'],
  });
});

afterAll(async () => {
  await lf?.shutdownAsync();
  expect(await closeBrowserSuite(suite, judge)).toEqual({ blocked: [], errors: [] });
});

async function openGreeting(page: Page) {
  await page.goto(`/project/${suite.project.projectId}/prompts`);
  await page.getByRole('heading', { name: 'Prompts', exact: true }).waitFor();
  const list = page.getByRole('table', { name: 'Prompts' });
  await list.getByRole('button', { name: 'support/' }).click();
  await list.getByRole('button', { name: 'greeting', exact: true }).click();
  await page.getByRole('table', { name: 'Versions' }).waitFor();
}

describe('prompts in the browser', () => {
  let page: Page;
  beforeAll(async () => {
    page = await suite.chromium.open(suite.web.url, suite.people.owner);
  });

  it('lists prompts in folders with their tags and labels; shows versions, config as JSON and a diff', async () => {
    await page.goto(`/project/${suite.project.projectId}/prompts`);
    const list = page.getByRole('table', { name: 'Prompts' });
    await list.waitFor();
    expect(await bodyRows(list)).toEqual([
      ['📁 shared/'],
      ['📁 support/'],
      ['chatbot', 'chat', '1', 'latestproduction', '#bot#chat', expect.any(String)],
    ]);
    await openGreeting(page);
    expect(await bodyRows(page.getByRole('table', { name: 'Prompts' }))).toEqual([
      ['greeting', 'text', '2', 'latestproductionstaging', '#support', expect.any(String)],
    ]);
    const versions = page.getByRole('table', { name: 'Versions' });
    expect((await bodyRows(versions)).map((r) => r.slice(0, 2))).toEqual([
      ['v2', 'lateststaging'],
      ['v1', 'production'],
    ]);
    expect(JSON.parse(await page.locator('pre.config').innerText())).toEqual({
      temperature: 0,
      model: JUDGE_MODEL,
    });
    expect(await page.locator('pre.prompt-text').innerText()).toContain('@@@langfusePrompt:name=shared/tone');
    expect((await page.locator('pre.diff').innerText()).split('\n')).toEqual([
      '- You greet customers.',
      '+ You greet customers warmly.',
      '  Say hello to {{name}}.',
      '+ @@@langfusePrompt:name=shared/tone|label=production@@@',
    ]);
  });

  it('moves the production label as an owner; a member is refused it and may move another', async () => {
    const form = page.getByRole('form', { name: 'Move label' });
    await form.getByLabel('Label').fill('production');
    await form.getByLabel('Onto version').selectOption('2');
    await form.getByRole('button', { name: 'Move label' }).click();
    const versions = page.getByRole('table', { name: 'Versions' });
    await expect
      .poll(async () => (await bodyRows(versions)).map((r) => r[1]))
      .toEqual(['latestproductionstaging', '']);
    expect((await lf.getPrompt('support/greeting', undefined, { cacheTtlSeconds: 0 })).version).toBe(2);
    await screenshot(page, 'prompts');

    const memberPage = await suite.chromium.open(suite.web.url, suite.people.member);
    await openGreeting(memberPage);
    const memberForm = memberPage.getByRole('form', { name: 'Move label' });
    await memberForm.getByLabel('Onto version').selectOption('1');
    await memberForm.getByRole('button', { name: 'Move label' }).click();
    expect(await memberForm.getByRole('alert').innerText()).toBe(
      'only owners may set the protected "production" label',
    );
    await memberForm.getByLabel('Label').fill('staging');
    await memberForm.getByRole('button', { name: 'Move label' }).click();
    await expect
      .poll(async () =>
        (await bodyRows(memberPage.getByRole('table', { name: 'Versions' }))).map((r) => r[1]),
      )
      .toEqual(['latestproduction', 'staging']);
  });

  it('runs a prompt with a variable against the judge model: completion, tokens, cost; saves it as a version', async () => {
    await openGreeting(page);
    await page.getByRole('button', { name: 'Open in playground' }).click();
    const form = page.getByRole('form', { name: 'Playground' });
    // The connections load after the playground opens.
    await expect.poll(() => form.getByLabel('Model').inputValue()).toBe(JUDGE_MODEL);
    expect(await form.getByLabel('Connection').inputValue()).toBe('local-judge');
    await form.getByLabel('Variable name').fill('Ada');
    await form.getByRole('button', { name: 'Run' }).click();
    const completion = page.getByRole('region', { name: 'Completion' });
    await completion.waitFor({ timeout: 120_000 });
    expect((await completion.locator('pre.completion').innerText()).trim()).not.toBe('');
    const usage = await completion.locator('.run-usage').innerText();
    const [, input, output, total] = /input (\d+) · output (\d+) · total (\d+)/.exec(usage)!.map(Number);
    expect(input).toBeGreaterThan(10);
    expect(output).toBeGreaterThan(0);
    expect(total).toBe(input! + output!);
    expect(await completion.locator('.run-cost').innerText()).toBe(
      `Cost: $${(input! * 0.000001 + output! * 0.000002).toFixed(6)}`,
    );
    await screenshot(page, 'prompts-playground');

    // A chat prompt, edited as its messages, with a variable in the user message.
    await form.getByLabel('Type').selectOption('chat');
    await form.getByLabel('Messages (JSON)').fill(
      JSON.stringify([
        { role: 'system', content: 'You answer with one word.' },
        { role: 'user', content: 'Name a colour like {{thing}}.' },
      ]),
    );
    await form.getByLabel('Variable thing').fill('the sky');
    const answered = page.waitForResponse((r) => r.url().endsWith('/playground'), { timeout: 120_000 });
    await form.getByRole('button', { name: 'Run' }).click();
    expect((await answered).status()).toBe(200);
    await completion.locator('.run-usage').waitFor();
    expect((await completion.locator('pre.completion').innerText()).trim()).not.toBe('');
    expect(await completion.locator('.run-cost').innerText()).toMatch(/^Cost: \$0\.\d{6}$/);
    await form.getByLabel('Type').selectOption('text');
    await form
      .locator('textarea')
      .fill(
        'You greet customers warmly.\nSay hello to {{name}}.\n@@@langfusePrompt:name=shared/tone|label=production@@@',
      );

    const save = page.getByRole('form', { name: 'Save prompt' });
    expect(await save.getByLabel('Prompt name').inputValue()).toBe('support/greeting');
    await save.getByLabel('Commit message').fill('tried in the playground');
    await save.getByRole('button', { name: 'Save as new version' }).click();
    expect(await save.getByRole('status').innerText()).toBe('Saved support/greeting version 3');
    const v3 = await call(
      'GET',
      `/api/public/v2/prompts/${encodeURIComponent('support/greeting')}?version=3&resolve=false`,
    );
    expect(v3.body).toMatchObject({
      version: 3,
      labels: ['latest'],
      commitMessage: 'tried in the playground',
      config: { temperature: 0, model: JUDGE_MODEL, provider: 'local-judge' },
    });
    expect(v3.body['prompt']).toContain('Say hello to {{name}}.');
    // Resolved on read: the SDK gets the composed text.
    expect((await lf.getPrompt('support/greeting', 3, { cacheTtlSeconds: 0 })).prompt).toContain(
      'Answer in one short sentence.',
    );
  });
});
