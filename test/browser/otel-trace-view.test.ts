/**
 * The trace view in Debian's chromium (playwright-core) against `observatory web` in `events_only`
 * on real PostgreSQL and the analytics server, with what the real OpenTelemetry JS SDKs sent: a
 * chat generation whose input and output came in log events (sent before the span) shows them,
 * with the log records as its events; a span with a link to another trace shows the link, which
 * leads to that trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../conformance/env.ts';
import { callApi } from '../fixtures/mode-webs.ts';
import { CHAT_QUESTION, sendChat, sendLinkedTraces } from '../fixtures/otel-producers.ts';
import { screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'viewer'>;
let chat: { traceId: string; spanId: string };
let linked: Awaited<ReturnType<typeof sendLinkedTraces>>;

beforeAll(async () => {
  suite = await startBrowserSuite({
    project: 'browser-otel-trace-view',
    people: { viewer: 'viewer' },
  });
  chat = await sendChat(suite.web, suite.project, true);
  linked = await sendLinkedTraces(suite.web, suite.project);
  // Rendered once stored: the generation with its output, the linked span.
  await eventually(
    'the generation and the linked span',
    async () => {
      const read = async (traceId: string) =>
        (
          await callApi(
            suite.web,
            suite.project,
            'GET',
            `/api/public/v2/observations?traceId=${traceId}&fields=core,io`,
          )
        ).body.data ?? [];
      const generation = (await read(chat.traceId)).find((o) => o['id'] === chat.spanId);
      const process = await read(linked.consumer.traceId);
      return generation?.['output'] && process.length === 1 ? true : undefined;
    },
    30_000,
  );
});

afterAll(async () => {
  expect(await closeBrowserSuite(suite)).toEqual({ blocked: [], errors: [] });
});

const traceUrl = (traceId: string) => `/project/${suite.project.projectId}/traces/${traceId}`;

describe('the trace view of OTLP producers', () => {
  it("shows a generation's input and output that came in log events, and the records as its events", async () => {
    const page = await suite.chromium.open(suite.web.url, suite.people.viewer);
    await page.goto(traceUrl(chat.traceId));
    await page.getByRole('heading', { name: `Trace ${chat.traceId}` }).waitFor();
    const detail = page.locator('section.detail');
    await detail.getByRole('heading', { name: /chat gpt-4o-mini/ }).waitFor();
    await detail.locator('.message.role-user').filter({ hasText: CHAT_QUESTION }).waitFor();
    // The answer is a tool call: shown as its JSON.
    await detail.locator('pre.value').filter({ hasText: 'get_weather' }).first().waitFor();
    for (const name of ['gen_ai.user.message', 'gen_ai.choice', 'WARN'])
      expect(await page.getByRole('button', { name }).count()).toBe(1);
    await screenshot(page, 'otel-generation-from-logs');
  });

  it("shows a span's link as a link to the other trace", async () => {
    const page = await suite.chromium.open(suite.web.url, suite.people.viewer);
    await page.goto(traceUrl(linked.consumer.traceId));
    const links = page.getByRole('list', { name: 'Span links' });
    await links.waitFor();
    expect(await links.getByText(`span ${linked.producer.spanId}`).count()).toBe(1);
    await screenshot(page, 'otel-span-link');
    await links.getByRole('link', { name: `trace ${linked.producer.traceId}` }).click();
    await page.getByRole('heading', { name: `Trace ${linked.producer.traceId}` }).waitFor();
    await page
      .locator('section.detail')
      .getByRole('heading', { name: /enqueue/ })
      .waitFor();
  });
});
