/**
 * The models page in Debian's chromium (playwright-core) against `observatory web` and a worker in
 * `events_only` on real PostgreSQL, Redis and the analytics server: the built-in definitions are
 * listed and cannot be deleted; a project definition is created, edited and deleted through the
 * page; a built-in one is overridden; "test a model name" names the definition ingestion would use.
 * Generations the JS SDK (v5, OpenTelemetry) then sends show, on the trace view, the definition that
 * priced them, the cost per usage type, and whether the cost was sent or computed.
 */
import { startObservation } from '@langfuse/tracing';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { basicAuth } from '../fixtures/service.ts';
import { request, signIn } from '../fixtures/ui-client.ts';
import { bodyRows, screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner' | 'viewer'>;

beforeAll(async () => {
  suite = await startBrowserSuite({
    project: 'browser-models',
    worker: true,
    people: { owner: 'owner', viewer: 'viewer' },
  });
});

afterAll(async () => {
  expect(await closeBrowserSuite(suite)).toEqual({ blocked: [], errors: [] });
});

const definitions = (page: Page) => page.getByRole('table', { name: 'Model definitions' });
const rowOf = (page: Page, name: string, owner: 'Built-in' | 'Project') =>
  definitions(page)
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name, exact: true }) })
    .filter({ has: page.getByRole('cell', { name: owner, exact: true }) });

/** The texts of a row's cells. */
const cells = (row: Locator) => row.getByRole('cell').allInnerTexts();

async function testName(page: Page, name: string): Promise<string> {
  const form = page.getByRole('form', { name: 'Test a model name' });
  await form.getByLabel('Model name').fill(name);
  await Promise.all([
    page.waitForResponse((r) => r.url().includes('/models/match?')),
    form.getByRole('button', { name: 'Test' }).click(),
  ]);
  const status = form.getByRole('status');
  await expect.poll(() => status.innerText()).toMatch(new RegExp(`^${name} matches`));
  return status.innerText();
}

/** The observations of a trace on the public API, once the worker has written them all. */
async function observationsOf(traceId: string, count: number) {
  let data: Record<string, unknown>[] = [];
  await expect
    .poll(
      async () => {
        const res = await fetch(
          `${suite.web.url}/api/public/v2/observations?traceId=${traceId}&fields=core,basic,usage,model`,
          { headers: { authorization: basicAuth(suite.project) } },
        );
        data = ((await res.json()) as { data: Record<string, unknown>[] }).data ?? [];
        return data.length;
      },
      { timeout: 30_000, interval: 500 },
    )
    .toBe(count);
  return data;
}

describe('the models page', () => {
  let page: Page;
  beforeAll(async () => {
    page = await suite.chromium.open(suite.web.url, suite.people.owner);
    await page.goto(`/project/${suite.project.projectId}/models`);
    await page.getByRole('heading', { name: 'Models', exact: true }).waitFor();
  });

  it('lists the built-in definitions with pattern, unit, prices by tier and tokenizer, none deletable', async () => {
    const gpt4o = await cells(rowOf(page, 'gpt-4o', 'Built-in'));
    expect(gpt4o.slice(0, 5)).toEqual(['gpt-4o', 'Built-in', '(?i)^(openai/)?(gpt-4o)$', '—', 'TOKENS']);
    expect(gpt4o[5]).toContain('Standard: input 0.0000025');
    expect(gpt4o[5]).toContain(
      'Fast mode (when model_parameters.service_tier in fast|priority): input 0.00000425',
    );
    expect(gpt4o[6]).toBe('openai');
    expect(await definitions(page).getByRole('button', { name: 'Delete' }).count()).toBe(0);
    expect(await testName(page, 'openai/GPT-4o')).toBe(
      'openai/GPT-4o matches gpt-4o (built-in, pattern (?i)^(openai/)?(gpt-4o)$)',
    );
    expect(await testName(page, 'acme-chat-2')).toBe(
      'acme-chat-2 matches no definition: its generations get no computed cost',
    );
  });

  it('creates, edits and refuses a bad pattern for a project definition, which then matches', async () => {
    const form = page.getByRole('form', { name: 'New model' });
    await form.getByLabel('Model name').fill('acme-chat');
    await form.getByLabel('Match pattern').fill('(?<=x)acme');
    await form.getByLabel('Prices per usage type').fill('input = 0.001\noutput = 0.002');
    await form.getByRole('button', { name: 'Create model' }).click();
    await expect.poll(() => form.locator('.error').innerText()).toContain('pattern is not a valid RE2');

    await form.getByLabel('Match pattern').fill('(?i)^acme-chat(-\\d+)?$');
    await form.getByRole('button', { name: 'Create model' }).click();
    const own = rowOf(page, 'acme-chat', 'Project');
    await own.waitFor();
    expect((await cells(own))[5]).toBe('Standard: input 0.001, output 0.002');

    await own.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit acme-chat' });
    expect(await edit.getByLabel('Prices per usage type').inputValue()).toBe('input = 0.001\noutput = 0.002');
    await edit.getByLabel('Prices per usage type').fill('input = 0.001\noutput = 0.003');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await cells(own))[5]).toBe('Standard: input 0.001, output 0.003');
    expect(await testName(page, 'ACME-chat-2')).toBe(
      'ACME-chat-2 matches acme-chat (project, pattern (?i)^acme-chat(-\\d+)?$)',
    );
    expect(await definitions(page).locator('tr.matched').innerText()).toContain('acme-chat');
    await screenshot(page, 'models');
  });

  it('overrides a built-in definition with the project’s own, and deleting it brings the built-in back', async () => {
    await rowOf(page, 'gpt-4o', 'Built-in').getByRole('button', { name: 'Override' }).click();
    const form = page.getByRole('form', { name: 'Override gpt-4o' });
    expect(await form.getByLabel('Match pattern').inputValue()).toBe('(?i)^(openai/)?(gpt-4o)$');
    expect(await form.getByLabel('Other tiers (JSON)').inputValue()).toContain('"service_tier"');
    await form.getByLabel('Prices per usage type').fill('input = 0.000002\noutput = 0.000008');
    await form.getByRole('button', { name: 'Create model' }).click();
    const override = rowOf(page, 'gpt-4o', 'Project');
    await override.waitFor();
    expect((await cells(override))[6]).toBe('openai');
    expect(await testName(page, 'gpt-4o')).toBe(
      'gpt-4o matches gpt-4o (project, pattern (?i)^(openai/)?(gpt-4o)$)',
    );

    await override.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => override.count()).toBe(0);
    expect(await rowOf(page, 'gpt-4o', 'Built-in').count()).toBe(1);
    expect(await testName(page, 'gpt-4o')).toBe(
      'gpt-4o matches gpt-4o (built-in, pattern (?i)^(openai/)?(gpt-4o)$)',
    );
  });

  it('shows on a generation the definition that priced it, its cost per usage type, computed or sent', async () => {
    const end = Date.now() - 1000;
    const [computed, sent] = await traceWithJsSdk({ ...suite.project, baseUrl: suite.web.url }, () =>
      [
        { model: 'acme-chat-2', usageDetails: { input: 100, output: 10 } },
        {
          model: 'acme-chat-2',
          usageDetails: { input: 100, output: 10 },
          costDetails: { input: 1, output: 2 },
        },
      ].map((attributes) => {
        const gen = startObservation('llm', attributes, {
          asType: 'generation',
          startTime: new Date(end - 500),
        });
        gen.end(new Date(end));
        return gen.traceId;
      }),
    );
    const [stored] = await observationsOf(computed!, 1);
    const own = (await (
      await fetch(`${suite.web.url}/api/public/models?limit=100`, {
        headers: { authorization: basicAuth(suite.project) },
      })
    ).json()) as { data: { id: string; modelName: string; isLangfuseManaged: boolean }[] };
    const acme = own.data.find((m) => m.modelName === 'acme-chat' && !m.isLangfuseManaged)!;
    expect(stored).toMatchObject({
      modelId: acme.id,
      // The usage stored with the total of the types sent, as the reference stores it.
      usageDetails: { input: 100, output: 10, total: 110 },
      costDetails: { input: 0.1, output: 0.03, total: 0.13 },
      totalCost: 0.13,
    });
    await observationsOf(sent!, 1);

    await page.goto(`/project/${suite.project.projectId}/traces/${computed}`);
    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe('llm GENERATION');
    expect(await page.locator('.matched-model').innerText()).toBe(
      'acme-chat (project, pattern (?i)^acme-chat(-\\d+)?$) · tier Standard',
    );
    expect(await bodyRows(page.getByRole('table', { name: 'Cost by usage type' }))).toEqual([
      ['input', '100', '$0.10'],
      ['output', '10', '$0.03'],
      ['total', '110', '$0.13'],
    ]);
    expect(await page.getByRole('definition').allInnerTexts()).toContain('$0.13 · computed');
    await screenshot(page, 'trace-generation-cost');

    await page.goto(`/project/${suite.project.projectId}/traces/${sent}`);
    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe('llm GENERATION');
    expect(await page.getByRole('definition').allInnerTexts()).toContain('$3.00 · sent by the SDK');
    expect(await bodyRows(page.getByRole('table', { name: 'Cost by usage type' }))).toEqual([
      ['input', '100', '$1.00'],
      ['output', '10', '$2.00'],
      ['total', '110', '$3.00'],
    ]);
  });
});

describe('a viewer', () => {
  it('sees the definitions and tests a name, but has no way to change them and is refused', async () => {
    const page = await suite.chromium.open(suite.web.url, suite.people.viewer);
    await page.goto(`/project/${suite.project.projectId}/models`);
    await rowOf(page, 'acme-chat', 'Project').waitFor();
    expect(await testName(page, 'acme-chat')).toBe(
      'acme-chat matches acme-chat (project, pattern (?i)^acme-chat(-\\d+)?$)',
    );
    expect(await definitions(page).getByRole('button').count()).toBe(0);
    expect(await page.getByRole('form', { name: 'New model' }).count()).toBe(0);
    const b = await signIn(suite.web.url, suite.people.viewer);
    const refused = await request(b, 'POST', `/api/ui/projects/${suite.project.projectId}/models`, {
      body: { modelName: 'x', matchPattern: 'x', unit: 'TOKENS', inputPrice: 1 },
      headers: { 'x-csrf-token': b.csrf },
    });
    expect([refused.status, refused.body['message']]).toEqual([403, 'viewers cannot change models']);
  });
});
