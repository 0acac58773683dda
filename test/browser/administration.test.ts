/**
 * Administration on the projects and account pages in Debian's chromium (playwright-core) against
 * `observatory web` on real PostgreSQL and the analytics server: an owner creates an organization,
 * renames it, creates a project in it, renames the project and deletes it once its name is typed,
 * then deletes the organization (refused, saying why, until the worker's pass has removed the
 * project); then, signed in from a second browser, lists both sessions on the account page and revokes the
 * other one, which is signed out at its next request.
 */
import pgLib from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectDeletionPass } from '../fixtures/project-deletion.ts';
import { bodyRows, screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner'>;
let page: Page;

beforeAll(async () => {
  suite = await startBrowserSuite({ project: 'browser-admin', people: { owner: 'owner' } });
  page = await suite.chromium.open(suite.web.url, suite.people.owner);
});

afterAll(async () => {
  expect(await closeBrowserSuite(suite)).toEqual({ blocked: [], errors: [] });
});

const projectNames = async (p: Page) =>
  (await bodyRows(p.getByRole('table', { name: 'Projects' }))).map((r) => r[1]);

describe('organizations and projects', () => {
  it('creates and renames an organization, creates a project in it, renames it and deletes it after typing its name', async () => {
    await page.goto('/projects');
    const newOrg = page.getByRole('form', { name: 'New organization' });
    await newOrg.getByLabel('New organization name').fill('Acme');
    await newOrg.getByRole('button', { name: 'Create organization' }).click();
    const orgs = page.getByRole('table', { name: 'Organizations' });
    await expect.poll(async () => (await bodyRows(orgs)).map((r) => r[1])).toEqual(['owner']);

    const orgName = page.getByRole('form', { name: 'Name of organization Acme' });
    await orgName.getByRole('textbox').fill('Acme Inc');
    await orgName.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('form', { name: 'Name of organization Acme Inc' }).waitFor();

    await page.getByLabel('Organization of the new project').selectOption({ label: 'Acme Inc' });
    const newProject = page.getByRole('form', { name: 'New project' });
    await newProject.getByLabel('New project name').fill('shop');
    await newProject.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(() => projectNames(page)).toContain('shop');
    await screenshot(page, 'administration-created');

    const rename = page.getByRole('form', { name: 'Name of project shop' });
    await rename.getByRole('textbox').fill('shop-eu');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('form', { name: 'Name of project shop-eu' }).waitFor();
    // A reload shows what the server kept.
    await page.reload();
    await expect.poll(() => projectNames(page)).toEqual(expect.arrayContaining(['browser-admin', 'shop-eu']));
    const row = page.getByRole('table', { name: 'Projects' }).getByRole('row', { name: /Acme Inc/ });
    expect(
      (await bodyRows(page.getByRole('table', { name: 'Projects' }))).find((r) => r[1] === 'shop-eu')?.[0],
    ).toBe('Acme Inc');

    await row.getByRole('button', { name: 'Delete…' }).click();
    const confirm = page.getByRole('form', { name: 'Delete project shop-eu' });
    const remove = confirm.getByRole('button', { name: 'Delete project' });
    await confirm.getByLabel('Project name to confirm').fill('shop');
    expect(await remove.isDisabled()).toBe(true);
    await confirm.getByLabel('Project name to confirm').fill('shop-eu');
    await screenshot(page, 'administration-delete-confirm');
    await remove.click();
    await expect.poll(() => projectNames(page)).toEqual(['browser-admin']);
    await page.reload();
    await expect.poll(() => projectNames(page)).toEqual(['browser-admin']);

    // The organization, now listing no project: refused until the worker has removed the project.
    const orgRow = orgs.getByRole('row', { name: /Acme Inc/ });
    await orgRow.getByRole('button', { name: 'Delete…' }).click();
    const confirmOrg = page.getByRole('form', { name: 'Delete organization Acme Inc' });
    await confirmOrg.getByLabel('Organization name to confirm').fill('Acme Inc');
    await confirmOrg.getByRole('button', { name: 'Delete organization' }).click();
    await expect.poll(() => confirmOrg.getByRole('alert').textContent()).toContain('still holds 1 project');
    const pool = new pgLib.Pool({ connectionString: suite.pg.url, max: 1 });
    try {
      expect(await projectDeletionPass(pool, suite.ch.client)).toHaveLength(1);
      await confirmOrg.getByRole('button', { name: 'Delete organization' }).click();
      await confirmOrg.waitFor({ state: 'detached' });
      await screenshot(page, 'administration-org-deleted');
      const left = await pool.query(`SELECT id FROM organizations WHERE name = 'Acme Inc'`);
      expect(left.rows).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});

describe('sessions', () => {
  it('lists the sessions of two browsers, marks this one, and revokes the other, which is signed out', async () => {
    const other = await suite.chromium.open(suite.web.url, suite.people.owner);
    await page.goto('/account');
    const sessions = page.getByRole('region', { name: 'Sessions' }).getByRole('table');
    await expect.poll(async () => (await bodyRows(sessions)).length).toBe(2);
    const rows = await bodyRows(sessions);
    expect(rows.filter((r) => r[4] === 'This session')).toHaveLength(1);
    expect(rows.every((r) => /Chrome/.test(r[2] ?? ''))).toBe(true);
    await screenshot(page, 'administration-sessions');

    await sessions.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(async () => (await bodyRows(sessions)).length).toBe(1);
    // The other browser's next page finds no session and asks it to sign in.
    await other.goto('/projects');
    await other.getByRole('button', { name: 'Sign in' }).waitFor();
    await screenshot(other, 'administration-revoked');
    await page.reload();
    await expect.poll(async () => (await bodyRows(sessions)).length).toBe(1);
  });
});
