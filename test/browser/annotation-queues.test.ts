/**
 * Annotation queues in Debian's chromium (playwright-core) against `observatory web` and a worker
 * in `events_only` on real PostgreSQL, Redis and the analytics server, with traces the JS SDK (v5,
 * OpenTelemetry) sent: an owner makes a queue with two score configs on the queues page, adds two
 * traces from the observations table, a session from the sessions list and an observation from the
 * trace view, and assigns a member; the member walks the queue item by item, scoring each and
 * completing it, until the page says all are completed. The stored scores are read back through
 * the public scores API: ANNOTATION, by the member, in the queue, on each item's object. Last the
 * owner renames the queue and deletes it after confirming; its scores stay.
 */
import { propagateAttributes, startObservation } from '@langfuse/tracing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callJson } from '../fixtures/api-client.ts';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { bodyRows, screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

const traces: { traceId: string; name: string; llmId: string }[] = [];
const SESSION = 'review-session';

let suite: BrowserSuite<'owner' | 'reviewer'>;

beforeAll(async () => {
  suite = await startBrowserSuite({
    project: 'browser-queues',
    worker: true,
    people: { owner: 'owner', reviewer: 'member' },
  });
  const start = Date.now() - 10 * 60_000;
  await traceWithJsSdk({ ...suite.project, baseUrl: suite.web.url }, () => {
    for (let i = 0; i < 3; i++) {
      propagateAttributes({ sessionId: SESSION }, () => {
        const root = startObservation(
          `question-${i}`,
          { input: { question: `why is the sky blue, take ${i}?` } },
          { startTime: new Date(start + i * 1000) },
        );
        const llm = startObservation(
          'llm',
          { model: 'gpt-4o', input: { prompt: `prompt ${i}` } },
          {
            asType: 'generation',
            startTime: new Date(start + i * 1000 + 10),
            parentSpanContext: root.otelSpan.spanContext(),
          },
        );
        llm.update({ output: `Rayleigh scattering, answer ${i}` });
        llm.end(new Date(start + i * 1000 + 300));
        root.update({ output: `answer ${i}` });
        root.end(new Date(start + i * 1000 + 400));
        traces.push({ traceId: root.traceId, name: `question-${i}`, llmId: llm.id });
      });
    }
  });
  const call = (body: unknown) =>
    callJson(`${suite.web.url}/api/public`, suite.project, 'POST', '/score-configs', body);
  for (const body of [
    { name: 'accuracy', dataType: 'NUMERIC', minValue: 0, maxValue: 1 },
    {
      name: 'tone',
      dataType: 'CATEGORICAL',
      categories: [
        { value: 1, label: 'friendly' },
        { value: 0, label: 'curt' },
      ],
    },
  ]) {
    expect((await call(body)).status).toBe(200);
  }
}, 240_000);

afterAll(async () => {
  expect(await closeBrowserSuite(suite)).toEqual({ blocked: [], errors: [] });
});

const QUEUE = 'sky questions';

describe('an annotation queue in the browser', () => {
  let page: Page;
  let queueUrl: string;
  beforeAll(async () => {
    page = await suite.chromium.open(suite.web.url, suite.people.owner);
  });

  it('is made on the queues page with two score configs', async () => {
    await page.goto(`/project/${suite.project.projectId}/annotation-queues`);
    const form = page.getByRole('form', { name: 'New annotation queue' });
    await form.getByLabel('Queue name').fill(QUEUE);
    await form.getByLabel('Queue description').fill('Is the explanation right and kind?');
    await form.getByLabel(/accuracy/).check();
    await form.getByLabel(/tone/).check();
    await form.getByRole('button', { name: 'Create queue' }).click();
    const table = page.getByRole('table', { name: 'Annotation queues' });
    await table.getByRole('link', { name: QUEUE }).waitFor();
    expect((await bodyRows(table))[0]!.slice(0, 5)).toEqual([
      QUEUE,
      'Is the explanation right and kind?',
      'tone, accuracy',
      '0',
      '0',
    ]);
    await table.getByRole('link', { name: QUEUE }).click();
    await page.getByRole('heading', { name: new RegExp(`^${QUEUE}`) }).waitFor();
    queueUrl = new URL(page.url()).pathname;
  });

  it('gets two traces from the observations table, a session from the sessions list, an observation from a trace', async () => {
    await page.goto(`/project/${suite.project.projectId}/observations`);
    for (const name of ['question-0', 'question-1']) await page.getByLabel(`Pick ${name}`).check();
    await page.getByRole('button', { name: 'Add 2 selected to queue' }).click();
    await page.getByText(`Added 2 to ${QUEUE}`).waitFor();

    await page.goto(`/project/${suite.project.projectId}/sessions`);
    await page.getByLabel(`Pick ${SESSION}`).check();
    await page.getByRole('button', { name: 'Add session to queue' }).click();
    await page.getByText(`Added 1 to ${QUEUE}`).waitFor();

    await page.goto(`/project/${suite.project.projectId}/traces/${traces[2]!.traceId}`);
    await page.locator('.tree-row', { hasText: 'llm' }).click();
    await page.getByRole('button', { name: 'Add observation to queue' }).click();
    await page.getByText(`Added 1 to ${QUEUE}`).waitFor();

    await page.goto(queueUrl);
    const items = page.getByRole('table', { name: 'Queue items' });
    await items.getByRole('row').nth(4).waitFor();
    expect((await bodyRows(items)).map((r) => r.slice(1, 3))).toEqual([
      [`trace ${traces[0]!.traceId}`, 'PENDING'],
      [`trace ${traces[1]!.traceId}`, 'PENDING'],
      [`session ${SESSION}`, 'PENDING'],
      [`observation ${traces[2]!.llmId}`, 'PENDING'],
    ]);
  });

  it('assigns a member', async () => {
    await page.getByLabel('Member').selectOption({ label: suite.people.reviewer.email });
    await page.getByRole('button', { name: 'Assign' }).click();
    await page.getByRole('button', { name: `Unassign ${suite.people.reviewer.email}` }).waitFor();
  });

  it('is walked by the member item by item, each scored and completed', async () => {
    const tab = await suite.chromium.open(suite.web.url, suite.people.reviewer);
    await tab.goto(queueUrl);
    const current = tab.getByRole('region', { name: 'Current item' });
    const scores: [string, string][] = [
      ['0.9', 'friendly'],
      ['0.4', 'curt'],
      ['1', 'friendly'],
      ['0', 'curt'],
    ];
    for (const [n, [accuracy, tone]] of scores.entries()) {
      await current.getByRole('heading', { name: new RegExp(`^Item ${n + 1} of 4`) }).waitFor();
      const form = current.getByRole('form', { name: 'Score and complete' });
      await form.getByLabel('Score accuracy').fill(accuracy);
      await form.getByLabel('Score tone').selectOption(tone);
      if (n === 3) await screenshot(tab, 'annotation-queue-review');
      await form.getByRole('button', { name: 'Complete' }).click();
    }
    await tab.getByText('All items completed.').waitFor();
    expect(await tab.locator('.queue-progress').innerText()).toBe('4 of 4 completed');
    expect((await bodyRows(tab.getByRole('table', { name: 'Queue items' }))).map((r) => r.slice(2))).toEqual(
      Array(4).fill(['COMPLETED', suite.people.reviewer.email]),
    );
    // The item shown first had its object's input on the page.
    await tab.getByRole('button', { name: '1', exact: true }).click();
    await expect.poll(() => current.innerText()).toContain('why is the sky blue, take 0?');
    expect(await current.innerText()).toContain(`by ${suite.people.reviewer.email}`);
  });

  it('stored ANNOTATION scores by the member, in the queue, on each object (public scores API)', async () => {
    const queueId = queueUrl.split('/').at(-1)!;
    const res = await callJson(
      `${suite.web.url}/api/public`,
      suite.project,
      'GET',
      `/v3/scores?queueId=${queueId}&fields=details,annotation,subject&limit=100`,
    );
    expect(res.status, res.text).toBe(200);
    const stored = (res.body['data'] as Record<string, unknown>[])
      .map((s) => ({
        subject: s['subject'],
        name: s['name'],
        value: s['value'],
        source: s['source'],
        authorUserId: s['authorUserId'],
        queueId: s['queueId'],
      }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const expected = [
      [{ kind: 'trace', id: traces[0]!.traceId }, 0.9, 'friendly'],
      [{ kind: 'trace', id: traces[1]!.traceId }, 0.4, 'curt'],
      [{ kind: 'session', id: SESSION }, 1, 'friendly'],
      [{ kind: 'observation', id: traces[2]!.llmId, traceId: traces[2]!.traceId }, 0, 'curt'],
    ]
      .flatMap(([subject, accuracy, tone]) => [
        { subject, name: 'accuracy', value: accuracy },
        { subject, name: 'tone', value: tone },
      ])
      .map((s) => ({ ...s, source: 'ANNOTATION', authorUserId: suite.people.reviewer.userId, queueId }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(stored).toEqual(expected);
  });

  it('is renamed, then deleted after confirming; its scores stay', async () => {
    await page.goto(queueUrl);
    await page.getByLabel('Queue name').fill('sky questions (done)');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: /^sky questions \(done\)/ }).waitFor();
    await screenshot(page, 'annotation-queue-renamed');
    const asked: string[] = [];
    page.once('dialog', (d) => {
      asked.push(d.message());
      void d.accept();
    });
    await page.getByRole('button', { name: 'Delete queue' }).click();
    await page.waitForURL(`**/project/${suite.project.projectId}/annotation-queues`);
    expect(asked).toEqual(['Delete the queue sky questions (done) with its 4 items? Scores written stay.']);
    const queueId = queueUrl.split('/').at(-1)!;
    expect(
      (await callJson(`${suite.web.url}/api/public`, suite.project, 'GET', `/annotation-queues/${queueId}`))
        .status,
    ).toBe(404);
    const scores = await callJson(
      `${suite.web.url}/api/public`,
      suite.project,
      'GET',
      `/v3/scores?queueId=${queueId}&limit=100`,
    );
    expect(scores.body['data']).toHaveLength(8);
  });
});
