/**
 * Dashboards in Debian's chromium (playwright-core) against `observatory web` in `events_only` on
 * real PostgreSQL and the analytics server, with traces the JS SDK (v5, OpenTelemetry) sent: the
 * built-in home dashboard and a custom dashboard built through the page (create, add a widget in
 * the editor with its live preview, resize it). Each checked tile shows the numbers that
 * `GET /api/public/v2/metrics` answers for the query the tile ran.
 */
import { propagateAttributes, startObservation } from '@langfuse/tracing';
import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { basicAuth } from '../fixtures/service.ts';
import { screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

type Row = Record<string, unknown>;
const TRACES = 9;
const T0 = Date.now() - 40 * 60_000;

function sendTraces() {
  return traceWithJsSdk({ ...suite.project, baseUrl: suite.web.url }, () => {
    for (let i = 0; i < TRACES; i++) {
      const startMs = T0 + i * 60_000;
      propagateAttributes({ userId: `user-${i % 3}`, sessionId: `session-${i % 2}` }, () => {
        const root = startObservation(`request-${i}`, { input: { q: i } }, { startTime: new Date(startMs) });
        const gen = startObservation(
          'llm',
          {
            model: i % 3 ? 'gpt-4o-mini' : 'gpt-4o',
            usageDetails: { input: 100 + i, output: 20 + i },
            costDetails: { input: 0.001 * (i + 1), output: 0.0005 },
            ...(i === 4 ? { level: 'ERROR' as const, statusMessage: 'rate limited' } : {}),
          },
          {
            asType: 'generation',
            startTime: new Date(startMs + 50),
            parentSpanContext: root.otelSpan.spanContext(),
          },
        );
        gen.end(new Date(startMs + 300 + i * 20));
        root.end(new Date(startMs + 400 + i * 20));
      });
    }
  });
}

async function metricsV2(query: unknown): Promise<Row[]> {
  const res = await fetch(
    `${suite.web.url}/api/public/v2/metrics?query=${encodeURIComponent(JSON.stringify(query))}`,
    {
      headers: { authorization: basicAuth(suite.project) },
    },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Row[] }).data;
}

/** The tile data responses a page receives, by placement id. */
function recordTiles(page: Page): Map<string, { query: unknown; data: Row[] }> {
  const seen = new Map<string, { query: unknown; data: Row[] }>();
  page.on('response', (res: Response) => {
    const m = res.url().match(/\/widgets\/([^/]+)\/data$/);
    if (m && res.ok()) void res.json().then((b) => seen.set(decodeURIComponent(m[1]!), b));
  });
  return seen;
}

const tile = (page: Page, id: string) => page.locator(`[data-tile="${id}"]`);

let suite: BrowserSuite<'owner'>;

beforeAll(async () => {
  suite = await startBrowserSuite({
    project: 'browser-dash',
    people: { owner: 'owner' },
  });
  await sendTraces();
});

afterAll(async () => {
  expect(await closeBrowserSuite(suite)).toEqual({ blocked: [], errors: [] });
});

describe('dashboards in the browser', () => {
  let page: Page;
  let tiles: Map<string, { query: unknown; data: Row[] }>;
  beforeAll(async () => {
    page = await suite.chromium.open(suite.web.url, suite.people.owner);
    tiles = recordTiles(page);
  });

  it("draws the home dashboard, each checked tile showing the API's numbers", async () => {
    await page.goto(`/project/${suite.project.projectId}/dashboards`);
    await page.getByRole('link', { name: 'Home', exact: true }).click();
    await page.getByRole('heading', { name: 'Home', exact: true }).waitFor();
    for (const id of ['total-traces', 'total-cost', 'top-users', 'latency-percentiles', 'traces-over-time']) {
      await tile(page, id).and(page.locator('[data-loaded="true"]')).waitFor();
    }
    await expect.poll(() => tiles.has('top-users') && tiles.has('total-traces')).toBe(true);

    const traces = await metricsV2(tiles.get('total-traces')!.query);
    expect(traces).toEqual([{ count_count: TRACES }]);
    expect(await tile(page, 'total-traces').locator('.big-number').getAttribute('data-value')).toBe(
      String(TRACES),
    );
    expect(await tile(page, 'total-traces').locator('.big-number').innerText()).toBe(String(TRACES));

    const cost = await metricsV2(tiles.get('total-cost')!.query);
    const shownCost = await tile(page, 'total-cost').locator('.big-number').getAttribute('data-value');
    expect(Number(shownCost)).toBe(cost[0]!['sum_totalCost']);

    // Top users: one labelled bar per user, with the API's values printed beside it.
    const users = await metricsV2(tiles.get('top-users')!.query);
    expect(users.map((r) => r['userId']).sort()).toEqual(['user-0', 'user-1', 'user-2']);
    const labels = await tile(page, 'top-users').locator('.bar-label').allInnerTexts();
    expect(labels).toEqual(users.map((r) => r['userId']));
    const values = await tile(page, 'top-users')
      .locator('.bar-value')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
    expect(values).toEqual(users.flatMap((r) => [r['sum_totalCost'], r['count_count']]));
    // Each value names its metric as a reader says it, not by the API's key.
    const named = await tile(page, 'top-users').locator('.bar-value').allInnerTexts();
    expect(named.slice(0, 2).map((t) => t.split(':')[0])).toEqual(['Total cost', 'Observations']);
    expect(await tile(page, 'latency-percentiles').locator('th.num').allInnerTexts()).toEqual([
      'p50 latency',
      'p90 latency',
      'p95 latency',
      'p99 latency',
    ]);

    // The time series lists each series' total: the API's buckets summed.
    const overTime = await metricsV2(tiles.get('traces-over-time')!.query);
    const total = overTime.reduce((a, r) => a + Number(r['count_count']), 0);
    expect(total).toBe(TRACES);
    await expect.poll(() => tile(page, 'traces-over-time').locator('td.num').innerText()).toBe(`Σ ${TRACES}`);
    await screenshot(page, 'dashboard-home');
  });

  it('builds a custom dashboard: a widget from the editor, resized, equal to the API', async () => {
    await page.getByRole('link', { name: 'dashboards', exact: true }).click();
    await page.getByPlaceholder('name').fill('Models');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Models' }).waitFor();

    await page.getByRole('button', { name: 'Add widget' }).click();
    const editor = page.getByRole('region', { name: 'widget editor' });
    await editor.getByRole('textbox', { name: 'Name' }).fill('Tokens by model');
    // A select's accessible name includes its selected option (`Group by (none)`): match by role.
    await editor.getByRole('combobox', { name: 'Group by' }).selectOption('providedModelName');
    await editor.getByRole('combobox', { name: 'Measure' }).selectOption('totalTokens');
    await editor.getByRole('combobox', { name: 'Aggregation' }).selectOption('sum');
    await editor.getByRole('combobox', { name: 'Chart' }).selectOption('HORIZONTAL_BAR');
    // The live preview draws the unsaved widget.
    await editor.locator('.bar-label', { hasText: 'gpt-4o-mini' }).waitFor();
    await screenshot(page, 'dashboard-editor');
    await editor.getByRole('button', { name: 'Save widget' }).click();

    const placed = page.locator('[data-tile][data-loaded="true"]');
    await placed.waitFor();
    const placementId = (await placed.getAttribute('data-tile'))!;
    await expect.poll(() => tiles.has(placementId)).toBe(true);
    const rows = await metricsV2(tiles.get(placementId)!.query);
    expect(rows.length).toBeGreaterThan(1);
    expect(await placed.locator('.bar-label').allInnerTexts()).toEqual(
      rows.map((r) => String(r['providedModelName'] || '(none)')),
    );
    const shown = await placed
      .locator('.bar-value')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
    expect(shown).toEqual(rows.map((r) => r['sum_totalTokens']));

    // Wider by one column, as the public API then reads the layout.
    await placed.getByRole('button', { name: 'wider' }).click();
    await expect
      .poll(async () => {
        const list = (await (
          await fetch(`${suite.web.url}/api/public/unstable/dashboards`, {
            headers: { authorization: basicAuth(suite.project) },
          })
        ).json()) as { data: { name: string; definition: { widgets: { width: number }[] } }[] };
        return list.data.find((d) => d.name === 'Models')?.definition.widgets[0]?.width;
      })
      .toBe(7);
    await screenshot(page, 'dashboard-custom');
  });
});
