/**
 * The web UI in Debian's chromium (playwright-core) against `observatory web` and `observatory
 * worker` in `events_only` on real PostgreSQL, Redis and the analytics server, with traces the JS
 * SDK (v5, OpenTelemetry) sent and users from `observatory create-user`. A person's path through
 * the pages: sign in, the projects, the observations table, full-text search and its highlight,
 * a trace (tree, waterfall, input and output), a score and a comment added from the page and read
 * back through the public API, the sessions and users lists, a password change on the account
 * page, sign-out, a viewer's page, another project's trace. A `legacy` web on the same stores
 * shows the version 3 experience of the sessions and users lists over traces the `langfuse` 3.x
 * SDK sent through it. Assertions read what the page shows (text, roles, accessible names).
 */
import { propagateAttributes, startObservation } from '@langfuse/tracing';
import { Langfuse } from 'langfuse';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { basicAuth, MODE_ENV, type Project, startWeb, type WebServer } from '../fixtures/service.ts';
import { createProjectMember, openBrowser, request } from '../fixtures/ui-client.ts';
import { bodyRows, screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, type Person, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner' | 'viewer'>;
let legacyWeb: WebServer;
let projectA: Project;
let projectB: Project;
const users = {} as Record<'owner' | 'viewer' | 'outsider', Person>;

/** What the SDK was asked to send, per trace: the model the pages are compared with. */
interface Sent {
  traceId: string;
  name: string;
  startMs: number;
  userId: string;
  sessionId: string;
  /** The root's searchable fields as the table names them (input, metadata.<key>), with their text. */
  rootFields: [string, string][];
  genOutput: string;
}
const sent: Sent[] = [];
const TRACES = 8;
const T0 = Date.now() - 30 * 60_000;
const CHAT = [
  { role: 'system', content: 'You answer questions about animals.' },
  { role: 'user', content: 'What does a pangolin eat?' },
];

function sendTraces(p: Project) {
  return traceWithJsSdk({ ...p, baseUrl: suite.web.url }, () => {
    for (let i = 0; i < TRACES; i++) {
      const startMs = T0 + i * 1000;
      const userId = `user-${i % 3}`;
      const sessionId = `session-${i % 4}`;
      const input = { question: i === 3 ? 'Where does the Aardvark sleep?' : `question ${i}` };
      const metadata = i === 5 ? { note: 'an aardvark was here' } : undefined;
      const genOutput = i === 7 ? 'the aardvark sleeps in a burrow' : `answer ${i}`;
      propagateAttributes({ userId, sessionId, tags: ['browser'] }, () => {
        const root = startObservation(
          `request-${i}`,
          { input, ...(metadata ? { metadata } : {}) },
          { startTime: new Date(startMs) },
        );
        const gen = startObservation(
          'llm',
          {
            model: 'gpt-4o',
            input: i === 2 ? CHAT : { prompt: `prompt ${i}` },
            usageDetails: { input: 10 + i, output: 5, total: 15 + i },
          },
          {
            asType: 'generation',
            startTime: new Date(startMs + 100),
            parentSpanContext: root.otelSpan.spanContext(),
          },
        );
        gen.update({ output: genOutput });
        gen.end(new Date(startMs + 400));
        root.end(new Date(startMs + 500));
        sent.push({
          traceId: root.traceId,
          name: `request-${i}`,
          startMs,
          userId,
          sessionId,
          rootFields: [
            ['input', JSON.stringify(input)],
            ...Object.entries(metadata ?? {}).map(([k, v]): [string, string] => [`metadata.${k}`, v]),
          ],
          genOutput,
        });
      });
    }
  });
}

const tab = (who?: { email: string; password: string }) => suite.chromium.open(suite.web.url, who);

const byName = (name: string) => sent.find((s) => s.name === name)!;
const traceUrl = (p: Project, traceId: string) => `/project/${p.projectId}/traces/${traceId}`;
const newestFirst = (a: Sent, b: Sent) => b.startMs - a.startMs;

/** The value shown under a section heading of the trace view (Input, Output, Metadata...). */
const section = (page: Page, heading: string) =>
  page.getByRole('heading', { name: heading, exact: true }).locator('xpath=following-sibling::*[1]');

async function publicApi<T>(path: string): Promise<T> {
  const res = await fetch(`${suite.web.url}${path}`, { headers: { authorization: basicAuth(projectA) } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

beforeAll(async () => {
  suite = await startBrowserSuite({
    project: 'browser-a',
    others: ['browser-b'],
    worker: true,
    people: { owner: 'owner', viewer: 'viewer' },
  });
  [projectA, projectB] = [suite.project, suite.others[0]!];
  [legacyWeb, users.outsider] = await Promise.all([
    startWeb({ ...suite.env, ...MODE_ENV.legacy }),
    createProjectMember(suite.env, 'outsider@example.com', projectB.projectId, 'owner'),
  ]);
  Object.assign(users, suite.people);
  await sendTraces(projectA);
});

afterAll(async () => {
  const left = await closeBrowserSuite(suite, legacyWeb);
  expect(left).toEqual({ blocked: [], errors: [] });
});

describe('the owner', () => {
  let page: Page;
  beforeAll(async () => {
    page = await tab();
  });

  it('signs in through the form, after a wrong password is refused, and sees only their projects', async () => {
    await page.goto(`/project/${projectA.projectId}/observations`);
    await page.getByRole('heading', { name: 'Sign in to Observatory' }).waitFor();
    await page.getByLabel('Email').fill(users.owner.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Invalid email or password').waitFor();
    await screenshot(page, 'sign-in-refused');

    await page.getByLabel('Password').fill(users.owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expect.poll(() => page.getByRole('banner').innerText()).toContain(users.owner.email);

    // With one project, the landing page is its observations; the list stays at /projects.
    await page.goto('/');
    await page.waitForURL(`**/project/${projectA.projectId}/observations`);
    await page.goto('/projects');
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    const rows = await bodyRows(page.getByRole('table'));
    expect(rows.map((r) => r.slice(1, 3))).toEqual([['browser-a', 'owner']]);
    await screenshot(page, 'projects');
  });

  it('opens the project: one row per trace, newest first, with what the SDK sent', async () => {
    await page.getByRole('link', { name: 'browser-a' }).click();
    await page.getByRole('heading', { name: /browser-a · observations · owner/ }).waitFor();
    expect(await page.getByLabel('Filter').inputValue()).toBe('isRootObservation = true');
    await page.getByRole('link', { name: 'request-0' }).waitFor();
    const rows = await bodyRows(page.getByRole('table'));
    const expected = [...sent].sort(newestFirst);
    // Name, type, user, session, tags: the columns the SDK decided.
    expect(rows.map((r) => [r[0], r[1], r[7], r[8], r[9]])).toEqual(
      expected.map((s) => [s.name, 'SPAN', s.userId, s.sessionId, 'browser']),
    );
    await screenshot(page, 'observations');
  });

  it('finds traces by full-text search and highlights the match under each row', async () => {
    await page.getByLabel('Full-text search').fill('aardvark');
    await page.getByRole('button', { name: 'Apply' }).click();
    const word = /\baardvark\b/i;
    const hits = [...sent]
      .sort(newestFirst)
      .flatMap((s) => s.rootFields.filter(([, text]) => word.test(text)).map((f) => ({ s, f })));
    expect(hits.length).toBe(2);
    await expect.poll(() => page.locator('mark').count()).toBe(hits.length);
    const rows = await bodyRows(page.getByRole('table'));
    // Each hit is a row followed by its match: the field and the value around the word.
    expect(rows.map((r) => r[0])).toEqual(
      hits.flatMap(({ s, f: [field, text] }) => [s.name, `${field}: ${text}`]),
    );
    expect(await page.locator('mark').allInnerTexts()).toEqual(
      hits.map(({ f: [, text] }) => text.match(word)![0]),
    );
    await screenshot(page, 'observations-search');

    // Without the root filter the search reaches a generation's output too.
    await page.getByLabel('Filter').fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText(`output: ${byName('request-7').genOutput}`).waitFor();
    expect(await page.locator('mark').count()).toBe(3);
    await screenshot(page, 'observations-search-all-types');
  });

  it('opens a trace: its tree with a waterfall, and each observation’s input and output', async () => {
    const s = byName('request-3');
    await page.getByRole('link', { name: s.name }).click();
    await page.waitForURL(`**${traceUrl(projectA, s.traceId)}`);
    await page.getByRole('heading', { name: `Trace ${s.traceId}` }).waitFor();
    // The trace's totals over all its observations, as the reference shows them.
    expect(await page.locator('.trace-totals').innerText()).toContain('13 → 5 (Σ 18)');
    const tree = page.getByRole('button', { name: /^(SPAN|GENERATION|EVENT) / });
    expect(await tree.allInnerTexts()).toEqual([
      expect.stringMatching(/^SPAN request-3\s+500ms$/),
      expect.stringMatching(/^GENERATION llm\s+300ms$/),
    ]);
    // The waterfall: the child's bar starts after the root's and ends before it.
    const [root, gen] = await Promise.all([0, 1].map((i) => tree.nth(i).locator('.bar').boundingBox()));
    expect(gen!.x).toBeGreaterThan(root!.x);
    expect(gen!.x + gen!.width).toBeLessThan(root!.x + root!.width);

    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe('request-3 SPAN');
    expect(JSON.parse(await section(page, 'Input').innerText())).toEqual({
      question: 'Where does the Aardvark sleep?',
    });
    await screenshot(page, 'trace-root');

    await tree.nth(1).click();
    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe('llm GENERATION');
    expect(await section(page, 'Output').innerText()).toBe(s.genOutput);
    const details = await page.getByRole('definition').allInnerTexts();
    expect(details).toContain('gpt-4o');
    expect(details).toContain('13 → 5 (Σ 18)');
    await screenshot(page, 'trace-generation');
  });

  it('shows chat messages as messages with their roles', async () => {
    await page.goto(traceUrl(projectA, byName('request-2').traceId));
    await page.getByRole('button', { name: /^GENERATION llm/ }).click();
    await expect
      .poll(() => section(page, 'Input').innerText())
      // Each message under its role, which the page shows in capitals.
      .toBe(CHAT.map((m) => `${m.role.toUpperCase()}\n${m.content}`).join('\n'));
    await screenshot(page, 'trace-chat');
  });

  it('adds a score and a comment from the page, stored as the public API reads them', async () => {
    const s = byName('request-3');
    await page.goto(traceUrl(projectA, s.traceId));
    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe('request-3 SPAN');
    await page.getByLabel('Score name').fill('helpfulness');
    await page.getByLabel('Score value').fill('0.75');
    await page.getByRole('button', { name: 'Add score' }).click();
    await page.getByText('helpfulness: 0.75').waitFor();
    await page.getByLabel('Comment').fill('needs a second look');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.getByText('needs a second look').waitFor();
    await screenshot(page, 'trace-scored');

    // A root observation stands for its trace: a trace-level score and a trace comment.
    const scores = await publicApi<{ data: Record<string, unknown>[] }>(
      `/api/public/v3/scores?traceId=${s.traceId}&fields=subject`,
    );
    expect(scores.data).toEqual([
      expect.objectContaining({
        name: 'helpfulness',
        value: 0.75,
        dataType: 'NUMERIC',
        subject: { kind: 'trace', id: s.traceId },
      }),
    ]);
    const comments = await publicApi<{ data: Record<string, unknown>[] }>(
      `/api/public/comments?objectType=TRACE&objectId=${s.traceId}`,
    );
    expect(comments.data).toEqual([
      expect.objectContaining({ content: 'needs a second look', authorUserId: users.owner.userId }),
    ]);

    // The table shows the score on the trace's row.
    await page.getByRole('link', { name: /← browser-a/ }).click();
    await page.getByText('helpfulness: 0.75').waitFor();
  });

  it('annotates with a score config: the config picks name and type, the value is chosen by label', async () => {
    const created = await fetch(`${suite.web.url}/api/public/score-configs`, {
      method: 'POST',
      headers: { authorization: basicAuth(projectA), 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'correctness',
        dataType: 'CATEGORICAL',
        categories: [
          { value: 1, label: 'correct' },
          { value: 0, label: 'wrong' },
        ],
      }),
    });
    expect(created.status).toBe(200);
    const config = (await created.json()) as { id: string };
    const s = byName('request-5');
    await page.goto(traceUrl(projectA, s.traceId));
    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe('request-5 SPAN');
    await page.getByLabel('Score config').selectOption({ label: 'correctness' });
    await page.getByLabel('Config value').selectOption({ label: 'wrong' });
    await page.getByRole('button', { name: 'Annotate' }).click();
    await page.getByText('correctness: wrong').waitFor();
    await screenshot(page, 'trace-annotated');

    const scores = await publicApi<{ data: Record<string, unknown>[] }>(
      `/api/public/v3/scores?traceId=${s.traceId}&fields=details,annotation,subject`,
    );
    expect(scores.data).toEqual([
      expect.objectContaining({
        name: 'correctness',
        value: 'wrong',
        dataType: 'CATEGORICAL',
        source: 'ANNOTATION',
        configId: config.id,
        authorUserId: users.owner.userId,
        subject: { kind: 'trace', id: s.traceId },
      }),
    ]);
  });

  it('lists the sessions and the users of the project, newest activity first', async () => {
    for (const [nav, heading, key] of [
      ['sessions', 'Sessions', 'sessionId'],
      ['users', 'Users', 'userId'],
    ] as const) {
      await page.getByRole('link', { name: nav, exact: true }).click();
      await page.getByRole('heading', { name: heading }).waitFor();
      await page.getByRole('cell', { name: sent[0]![key], exact: true }).waitFor();
      const lastSeen = new Map<string, number>();
      for (const s of sent) lastSeen.set(s[key], Math.max(lastSeen.get(s[key]) ?? 0, s.startMs));
      const rows = await bodyRows(page.getByRole('table'));
      expect(rows.map((r) => [r[0], r[3]])).toEqual(
        [...lastSeen]
          .sort((a, b) => b[1] - a[1])
          .map(([id]) => [id, String(sent.filter((s) => s[key] === id).length)]),
      );
      await screenshot(page, nav);
    }
  });

  it('changes the password on the account page: the policy, a wrong current password and a mistyped confirmation are refused; the new one signs in, the old one no longer', async () => {
    const fresh = 'Observatory kept 7 lanterns lit';
    const change = async (current: string, next: string, confirmation = next) => {
      await page.getByLabel('Current password').fill(current);
      await page.getByLabel('New password', { exact: true }).fill(next);
      await page.getByLabel('Confirm new password').fill(confirmation);
      await page.getByRole('button', { name: 'Change password' }).click();
    };
    await page.getByRole('banner').getByRole('link', { name: users.owner.email }).click();
    await page.getByRole('heading', { name: 'Change password' }).waitFor();

    await change(users.owner.password, 'aaaaaaaaaaaa');
    await page.getByRole('alert').filter({ hasText: 'newPassword: too easy to guess' }).waitFor();
    await change('not the password', fresh);
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
    await change(users.owner.password, fresh, `${fresh}!`);
    await page.getByRole('alert').filter({ hasText: 'confirmation differ' }).waitFor();
    await screenshot(page, 'password-refused');

    await change(users.owner.password, fresh);
    await page.getByRole('status').filter({ hasText: 'Password changed' }).waitFor();
    // This browser got the fresh session: still signed in, its writes carry the new CSRF token.
    expect((await page.request.get(`/api/ui/projects/${projectA.projectId}`)).status()).toBe(200);
    await screenshot(page, 'password-changed');
    const signIn = async (password: string) => {
      const b = await openBrowser(suite.web.url);
      const r = await request(b, 'POST', '/api/ui/auth/login', {
        body: { email: users.owner.email, password },
        headers: { 'x-csrf-token': b.csrf },
      });
      return r.status;
    };
    expect(await signIn(users.owner.password)).toBe(401);
    expect(await signIn(fresh)).toBe(200);
    users.owner.password = fresh;
  });

  it('signs out: back at the sign-in form, and the project is no longer readable', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Observatory' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.goto(`/project/${projectA.projectId}/observations`);
    await page.getByRole('heading', { name: 'Sign in to Observatory' }).waitFor();
    expect((await page.request.get(`/api/ui/projects/${projectA.projectId}`)).status()).toBe(401);
    await screenshot(page, 'signed-out');
  });
});

describe('roles and projects', () => {
  it('shows a viewer no write controls, and refuses a write the viewer sends from the page', async () => {
    const page = await tab(users.viewer);
    const s = byName('request-4');
    await page.goto(`/project/${projectA.projectId}/observations`);
    await page.getByRole('heading', { name: /browser-a · observations · viewer/ }).waitFor();
    await page.goto(traceUrl(projectA, s.traceId));
    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe('request-4 SPAN');
    expect(await page.getByRole('heading', { name: 'Scores' }).count()).toBe(1);
    for (const name of ['Add score', 'Add comment', 'Annotate']) {
      expect(await page.getByRole('button', { name }).count()).toBe(0);
    }
    for (const label of ['Score name', 'Score value', 'Comment']) {
      expect(await page.getByLabel(label).count()).toBe(0);
    }
    await screenshot(page, 'trace-viewer');

    const refused = await page.evaluate(
      async ({ projectId, traceId }) => {
        const session = (await (await fetch('/api/ui/session')).json()) as { csrfToken: string };
        const res = await fetch(`/api/ui/projects/${projectId}/scores`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
          body: JSON.stringify({ traceId, name: 'sneaky', value: 1 }),
        });
        return { status: res.status, body: await res.json() };
      },
      { projectId: projectA.projectId, traceId: s.traceId },
    );
    expect(refused).toEqual({
      status: 403,
      body: expect.objectContaining({ message: 'viewers cannot add scores' }),
    });
    const stored = await publicApi<{ data: unknown[] }>(`/api/public/v3/scores?traceId=${s.traceId}`);
    expect(stored.data).toEqual([]);

    // The migration page is for owners: a viewer is told so.
    await page.getByRole('link', { name: 'migration' }).click();
    await page.getByText('the background migrations page is for owners').waitFor();
    await screenshot(page, 'migration-viewer');
  });

  it("answers 404 for another project's trace URL, and the page says it was not found", async () => {
    const page = await tab(users.outsider);
    const s = byName('request-3');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes(`/api/ui/projects/${projectA.projectId}/traces/`)),
      page.goto(traceUrl(projectA, s.traceId)),
    ]);
    expect(answer.status()).toBe(404);
    await page.getByText(`project ${projectA.projectId} not found`).waitFor();
    expect(await page.getByText(s.name).count()).toBe(0);
    await screenshot(page, 'trace-other-project');

    await page.goto('/projects');
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect((await bodyRows(page.getByRole('table'))).map((r) => r[1])).toEqual(['browser-b']);
    await page.goto('/no/such/page');
    await page.getByText('Page not found.').waitFor();
    await screenshot(page, 'not-found');
  });
});

describe('the version 3 experience (write mode legacy)', () => {
  it('lists the sessions and users of the legacy traces, newest activity first', async () => {
    const { publicKey, secretKey } = projectA;
    const lf = new Langfuse({ publicKey, secretKey, baseUrl: legacyWeb.url });
    const traces = Array.from({ length: 5 }, (_, i) => ({
      sessionId: `v3-session-${i % 3}`,
      userId: `v3-user-${i % 2}`,
      timestampMs: T0 + 100_000 + i * 1000,
      usage: { input: 10 + i, output: 5, total: 15 + i },
    }));
    for (const t of traces) {
      const { sessionId, userId } = t;
      const trace = lf.trace({ name: 'v3', timestamp: new Date(t.timestampMs), sessionId, userId });
      trace.generation({ name: 'llm', startTime: new Date(t.timestampMs), usageDetails: t.usage });
    }
    await lf.shutdownAsync();

    const page = await suite.chromium.open(legacyWeb.url, users.owner);
    for (const [nav, heading, key, other] of [
      ['sessions', 'Sessions', 'sessionId', 'userId'],
      ['users', 'Users', 'userId', 'sessionId'],
    ] as const) {
      await page.goto(`/project/${projectA.projectId}/${nav}`);
      await page.getByRole('heading', { name: heading }).waitFor();
      await page.getByText('Version 3 experience').waitFor();
      await page.getByRole('cell', { name: traces[0]![key], exact: true }).waitFor();
      const ids = [...new Set(traces.map((t) => t[key]))];
      const want = ids
        .map((id) => {
          const ts = traces.filter((t) => t[key] === id);
          const sum = (f: (t: (typeof ts)[number]) => number) => ts.reduce((a, t) => a + f(t), 0);
          return {
            last: Math.max(...ts.map((t) => t.timestampMs)),
            row: [
              id,
              String(ts.length),
              String(ts.length),
              [...new Set(ts.map((t) => t[other]))].sort().join(', '),
              `${sum((t) => t.usage.input)} → ${sum((t) => t.usage.output)} (Σ ${sum((t) => t.usage.total)})`,
            ],
          };
        })
        .sort((a, b) => b.last - a.last)
        .map((r) => r.row);
      const rows = await bodyRows(page.getByRole('table'));
      expect(rows.map((r) => [r[0], r[3], r[4], r[5], r[6]])).toEqual(want);
      await screenshot(page, `${nav}-v3`);
    }
  });
});
