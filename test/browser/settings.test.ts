/**
 * A project's settings in Debian's chromium (playwright-core) against `observatory web` on real
 * PostgreSQL and the analytics server: an owner creates an API key on the page (its secret shown
 * once works with the real JS SDK, and is gone after a reload), revokes it, sets the data
 * retention on the projects page, and invites a person whose one-time link, opened in another
 * browser, creates the account and lands in the project with the role given. It creates masking
 * rules on the page (spans sent next arrive masked; a rule switched off stops applying) and runs the
 * dry run. Last it rotates the project's key: a new one made on the page, the original revoked and
 * refused, the new one working.
 */
import { LangfuseClient } from '@langfuse/client';
import { startActiveObservation } from '@langfuse/tracing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { bodyRows, screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner'>;
let page: Page;

beforeAll(async () => {
  suite = await startBrowserSuite({ project: 'browser-settings', people: { owner: 'owner' } });
  page = await suite.chromium.open(suite.web.url, suite.people.owner);
});

afterAll(async () => {
  expect(await closeBrowserSuite(suite)).toEqual({ blocked: [], errors: [] });
});

const sdk = (publicKey: string, secretKey: string) =>
  new LangfuseClient({ publicKey, secretKey, baseUrl: suite.web.url });

describe('project settings', () => {
  it('creates an API key whose secret is shown once and works, then revokes it', async () => {
    await page.goto(`/project/${suite.project.projectId}/settings`);
    const keys = page.getByRole('table', { name: 'API keys' });
    await expect.poll(async () => (await bodyRows(keys)).length).toBe(1);
    await page.getByLabel('Note').fill('from the page');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const secretKey = await page.locator('.new-secret-key').innerText();
    await expect.poll(async () => (await bodyRows(keys)).length).toBe(2);
    const row = (await bodyRows(keys))[1]!;
    expect(row[2]).toBe('from the page');
    expect(row[1]).toBe(`${secretKey.slice(0, 10)}...${secretKey.slice(-4)}`);
    const publicKey = row[0]!;
    expect((await sdk(publicKey, secretKey).api.projects.get()).data[0]!.id).toBe(suite.project.projectId);
    await screenshot(page, 'settings-api-key');

    await page.reload();
    await expect.poll(async () => (await bodyRows(keys)).length).toBe(2);
    expect(await page.content()).not.toContain(secretKey);

    page.once('dialog', (d) => void d.accept());
    await keys
      .getByRole('row', { name: new RegExp(publicKey) })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await expect.poll(async () => (await bodyRows(keys)).length).toBe(1);
    await expect(sdk(publicKey, secretKey).api.projects.get()).rejects.toMatchObject({ statusCode: 401 });
  });

  it('sets the data retention on the projects page; a bound is refused with the reason', async () => {
    await page.goto('/projects');
    const form = page.getByRole('form', { name: 'Data retention of browser-settings' });
    await form.getByLabel('Retention in days').fill('2');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('alert').getByText('at least 3 days').waitFor();
    await form.getByLabel('Retention in days').fill('30');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('30 days').waitFor();
    expect(
      (await sdk(suite.project.publicKey, suite.project.secretKey).api.projects.get()).data[0],
    ).toMatchObject({
      retentionDays: 30,
    });
  });

  it('invites a person whose link creates the account and lands in the project as a viewer', async () => {
    await page.goto(`/project/${suite.project.projectId}/settings`);
    const invite = page.getByRole('form', { name: 'Invite' });
    await invite.getByLabel('Email').fill('invited@example.com');
    await invite.getByLabel('Role').selectOption('viewer');
    await invite.getByRole('button', { name: 'Invite' }).click();
    const link = await page.locator('.invitation-link').innerText();
    expect(link).toMatch(new RegExp(`^${suite.web.url}/invite/`));
    await page.getByRole('table', { name: 'Pending invitations' }).getByText('invited@example.com').waitFor();

    const guest = await suite.chromium.open(suite.web.url);
    await guest.goto(link);
    await guest.getByRole('heading', { name: 'Join browser-settings' }).waitFor();
    await guest.getByText('invited@example.com is invited as viewer.').waitFor();
    await guest.getByLabel('Name').fill('Invited Person');
    await guest.getByLabel('Password').fill('a long enough passphrase 42');
    await guest.getByRole('button', { name: 'Create account and join' }).click();
    await guest.waitForURL(`**/project/${suite.project.projectId}/observations`);
    await guest.getByRole('button', { name: 'Sign out' }).waitFor();
    await screenshot(guest, 'invitation-accepted');

    await page.reload();
    const members = page.getByRole('table', { name: 'Members' });
    await members.getByRole('cell', { name: 'invited@example.com', exact: true }).waitFor();
    expect((await bodyRows(members)).find((r) => r[0] === 'invited@example.com')?.slice(0, 2)).toEqual([
      'invited@example.com',
      'Invited Person',
    ]);
    expect(await page.getByRole('table', { name: 'Pending invitations' }).count()).toBe(0);
    await guest.goto(link);
    await guest.getByText('does not exist, was used or has expired').waitFor();
  });

  it('creates masking rules on the page: the next spans arrive masked, and the dry run shows what a rule would change', async () => {
    await page.goto(`/project/${suite.project.projectId}/settings`);
    const rules = page.getByRole('table', { name: 'Masking rules' });
    const form = page.getByRole('form', { name: 'New masking rule' });
    await form.getByLabel('Rule name').fill('emails');
    await form.getByRole('button', { name: 'Create masking rule' }).click();
    await expect.poll(async () => (await bodyRows(rules)).map((r) => r[0])).toEqual(['emails']);
    await form.getByLabel('Rule name').fill('orders');
    await form.getByLabel('Detector').selectOption('custom');
    await form.getByLabel('RE2 pattern').fill('(?=ORD)');
    await form.getByRole('button', { name: 'Create masking rule' }).click();
    await form.getByRole('alert').getByText('pattern').waitFor();
    await form.getByLabel('RE2 pattern').fill(String.raw`ORD-\d{4}`);
    await form.getByLabel('Replacement').fill('[ORDER]');
    await form.getByRole('button', { name: 'Create masking rule' }).click();
    await expect
      .poll(async () => (await bodyRows(rules)).map((r) => r.slice(0, 3)))
      .toEqual([
        ['emails', 'email', 'default'],
        ['orders', String.raw`ORD-\d{4}`, '[ORDER]'],
      ]);

    const traceId = await withSdkTracer(suite.project, suite.web.url, () =>
      startActiveObservation('masked', async (span) => {
        span.update({ input: 'mail jane@example.org about ORD-1234' });
        return span.traceId;
      }),
    );
    const auth = `Basic ${Buffer.from(`${suite.project.publicKey}:${suite.project.secretKey}`).toString('base64')}`;
    await expect
      .poll(
        async () => {
          const res = await fetch(
            `${suite.web.url}/api/public/v2/observations?traceId=${traceId}&fields=core,io`,
            {
              headers: { authorization: auth },
            },
          );
          return ((await res.json()) as { data?: { input?: unknown }[] }).data?.[0]?.input;
        },
        { timeout: 30_000 },
      )
      .toBe('mail [REDACTED EMAIL] about [ORDER]');

    // A rule switched off no longer applies; the dry run still shows what the others change.
    // The box follows the stored rule: it changes once the update is saved and the list read again.
    await rules.getByLabel('Enable orders').click();
    await expect.poll(() => rules.getByLabel('Enable orders').isChecked()).toBe(false);
    await page.getByRole('button', { name: 'Preview on recent observations' }).click();
    const preview = page.getByRole('status', { name: 'Masking preview' });
    await preview.getByText(/of \d+ recent observations would change/).waitFor();
    await screenshot(page, 'settings-masking');
    await rules.getByRole('button', { name: 'Delete orders' }).click();
    await expect.poll(async () => (await bodyRows(rules)).map((r) => r[0])).toEqual(['emails']);
  });

  it('rotates the project key: a new key from the page takes over, the old one revoked is refused', async () => {
    await page.goto(`/project/${suite.project.projectId}/settings`);
    const keys = page.getByRole('table', { name: 'API keys' });
    await expect.poll(async () => (await bodyRows(keys)).map((r) => r[0])).toEqual([suite.project.publicKey]);
    await page.getByLabel('Note').fill('rotated');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const secretKey = await page.locator('.new-secret-key').innerText();
    await expect.poll(async () => (await bodyRows(keys)).length).toBe(2);
    const publicKey = (await bodyRows(keys)).find((r) => r[2] === 'rotated')![0]!;
    expect((await sdk(publicKey, secretKey).api.projects.get()).data[0]!.id).toBe(suite.project.projectId);

    page.once('dialog', (d) => void d.accept());
    await keys
      .getByRole('row', { name: new RegExp(suite.project.publicKey) })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await expect.poll(async () => (await bodyRows(keys)).map((r) => r[0])).toEqual([publicKey]);
    await screenshot(page, 'settings-api-key-rotated');
    await expect(
      sdk(suite.project.publicKey, suite.project.secretKey).api.projects.get(),
    ).rejects.toMatchObject({
      statusCode: 401,
    });
    expect((await sdk(publicKey, secretKey).api.projects.get()).data[0]!.id).toBe(suite.project.projectId);
  });
});
