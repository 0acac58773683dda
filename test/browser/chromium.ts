/**
 * Debian's chromium driven by playwright-core for the browser suite. Playwright's own browser
 * download cannot work on a closed network, so the system binary runs with the flags such a
 * network needs; every host name but loopback resolves to nothing, and each context aborts (and
 * records) any request that would leave 127.0.0.1. Screenshots go to .cache/browser-artifacts/.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = resolve(import.meta.dirname, '../../.cache/browser-artifacts');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** Bounds of every wait: one action or assertion, one navigation, the browser's start. */
export const ACTION_TIMEOUT_MS = 15_000;
const NAVIGATION_TIMEOUT_MS = 30_000;
const LAUNCH_TIMEOUT_MS = 60_000;

export const chromiumVersion = () =>
  execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: LAUNCH_TIMEOUT_MS });
}

export interface Chromium {
  /** A page in a context of its own (one person's cookies), signed in as `who` when given. */
  open(baseURL: string, who?: { email: string; password: string }): Promise<Page>;
  /** Closes every context and the browser; what the guard blocked and the pages' uncaught errors. */
  close(): Promise<{ blocked: string[]; errors: string[] }>;
}

export async function startChromium(): Promise<Chromium> {
  const browser = await launchChromium();
  const tabs: Tab[] = [];
  return {
    async open(baseURL, who) {
      const t = await openTab(browser, baseURL);
      tabs.push(t);
      if (who) await signIn(t.page, who);
      return t.page;
    },
    async close() {
      await Promise.allSettled(tabs.map((t) => t.context.close()));
      await browser.close().catch(() => {});
      return { blocked: tabs.flatMap((t) => t.blocked), errors: tabs.flatMap((t) => t.errors) };
    },
  };
}

const isLoopback = (url: string) => {
  const { protocol, hostname } = new URL(url);
  return protocol === 'data:' || protocol === 'blob:' || hostname === '127.0.0.1';
};

interface Tab {
  context: BrowserContext;
  page: Page;
  /** Requests the guard aborted because they would have left loopback. */
  blocked: string[];
  /** Uncaught errors of the page's scripts. */
  errors: string[];
}

/** A fresh context with one page on `baseURL`, behind the loopback guard. */
async function openTab(browser: Browser, baseURL: string): Promise<Tab> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1400, height: 900 } });
  context.setDefaultTimeout(ACTION_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT_MS);
  const blocked: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLoopback(url)) return route.continue();
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, blocked, errors };
}

/** A full-page screenshot kept for people to look at: .cache/browser-artifacts/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Signs in through the form as a person would, and waits for the signed-in top bar. */
export async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The visible text of a table's body rows, cell by cell. */
export function bodyRows(table: Locator): Promise<string[][]> {
  return table.evaluate((t: HTMLTableElement) =>
    [...t.tBodies].flatMap((b) => [...b.rows].map((r) => [...r.cells].map((c) => c.innerText.trim()))),
  );
}
