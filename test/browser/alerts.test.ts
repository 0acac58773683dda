/**
 * The alerts page in Debian's chromium (playwright-core) against `observatory web` and a worker in
 * `events_only` on real PostgreSQL, Redis and the analytics server, with generations the JS SDK
 * (v5, OpenTelemetry) sent: a webhook channel made through the page shows its signing secret once
 * and its "send test" reaches a real receiver on 127.0.0.1 with a valid signature; a rule made
 * through the page is evaluated by the worker, shows its state in words, notifies the receiver,
 * shows its history, and pauses.
 */
import { startObservation } from '@langfuse/tracing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { llmConnectionEnv } from '../fixtures/llm-connection-env.ts';
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from '../fixtures/webhook-receiver.ts';
import { screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner'>;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  suite = await startBrowserSuite({
    project: 'browser-alerts',
    worker: true,
    env: { ...llmConnectionEnv(), SERVICE_ALERT_TICK_SECONDS: '1' },
    people: { owner: 'owner' },
  });
  const end = Date.now() - 1000;
  await traceWithJsSdk({ ...suite.project, baseUrl: suite.web.url }, () => {
    for (const ms of [400, 900, 2500]) {
      startObservation(
        'llm',
        { model: 'alert-model' },
        { asType: 'generation', startTime: new Date(end - ms) },
      ).end(new Date(end));
    }
  });
});

afterAll(async () => {
  expect(await closeBrowserSuite(suite, receiver)).toEqual({ blocked: [], errors: [] });
});

describe('alerts in the browser', () => {
  let page: Page;
  let secret: string;
  beforeAll(async () => {
    page = await suite.chromium.open(suite.web.url, suite.people.owner);
  });

  it('makes a webhook channel, shows its signing secret once, and sends a signed test', async () => {
    await page.goto(`/project/${suite.project.projectId}/alerts`);
    await page.getByRole('heading', { name: 'Alerts', exact: true }).waitFor();
    const form = page.getByRole('form', { name: 'New alert channel' });
    await form.getByLabel('Channel name').fill('on-call hook');
    await form.getByLabel('URL').fill(`${receiver.url}/hook`);
    await form.getByRole('button', { name: 'Create channel' }).click();
    secret = await form.locator('.signing-secret').innerText();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);

    const row = page
      .getByRole('table', { name: 'Alert channels' })
      .getByRole('row', { name: /^on-call hook/ });
    await row.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => row.getByRole('status').innerText()).toBe('test delivered (HTTP 200)');
    const [test] = receiver.on('/hook');
    expect(JSON.parse(test!.body)).toMatchObject({ type: 'alert.test', projectId: suite.project.projectId });
    const ts = test!.headers['x-observatory-timestamp'] as string;
    expect(verifySignature(secret, ts, test!.body, test!.headers['x-observatory-signature'] as string)).toBe(
      true,
    );
    // Shown once: a reload lists the channel without its secret.
    await page.reload();
    await page.getByRole('table', { name: 'Alert channels' }).waitFor();
    expect(await page.locator('.signing-secret').count()).toBe(0);
  });

  it('makes a rule the worker evaluates: its state in words, a signed notification, its history, pause', async () => {
    const form = page.getByRole('form', { name: 'New alert rule' });
    await form.getByLabel('Name').fill('slow generations');
    await form.getByLabel('Measure').fill('latency');
    await form.getByLabel('Aggregation').selectOption('max');
    await form.getByLabel('Alert threshold').fill('2000');
    await form.getByLabel('Warning threshold').fill('1000');
    await form.getByLabel('Window').fill('1h');
    await form.getByLabel('Frequency').fill('1s');
    await form.getByLabel('on-call hook').check();
    await form.getByRole('button', { name: 'Create rule' }).click();

    const rules = page.getByRole('table', { name: 'Alert rules' });
    const row = rules.getByRole('row', { name: /^slow generations/ });
    await expect
      .poll(
        async () => {
          await page.reload();
          await rules.waitFor();
          return row.locator('.alert-state').innerText();
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toMatch(/^Alerting/);
    expect(await row.innerText()).toContain('max(latency) of observations over 1h, every 1s');
    expect(await row.getByRole('cell').nth(4).innerText()).toBe('2500');
    await expect
      .poll(() => receiver.on('/hook').filter((r) => JSON.parse(r.body).type !== 'alert.test').length)
      .toBe(1);
    const alert = receiver.on('/hook').find((r) => JSON.parse(r.body).type !== 'alert.test')!;
    expect(JSON.parse(alert.body)).toMatchObject({ state: 'alerting', value: 2500 });
    expect(
      verifySignature(
        secret,
        alert.headers['x-observatory-timestamp'] as string,
        alert.body,
        alert.headers['x-observatory-signature'] as string,
      ),
    ).toBe(true);

    await row.getByRole('button', { name: 'History' }).click();
    await expect
      .poll(() => page.getByRole('list', { name: 'History of slow generations' }).innerText())
      .toMatch(/none → Alerting at 2500/);
    await screenshot(page, 'alerts');

    await row.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => row.locator('.alert-state').innerText()).toBe('Paused');
    expect(await row.getByRole('button', { name: 'Resume' }).count()).toBe(1);
  });
});
