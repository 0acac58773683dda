/**
 * The web UI through HTTP against `observatory web` (events_only, and legacy for the page that
 * says the table is not served) on real PostgreSQL and the ClickHouse engine: the served bundle
 * and its cache headers, sign-in, sessions, CSRF refusals, login rate limiting, role and project
 * isolation, and the observations table compared with the traces the JS SDK (v5, OpenTelemetry)
 * sent: rows, keyset pages without duplicates or gaps, sort orders, filter bar parity with the
 * Observations API v2 and full-text search with its highlighted match. Users come from the real
 * `observatory create-user` CLI.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { propagateAttributes, startObservation } from '@langfuse/tracing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUiBuilt, UI_DIST } from '../../scripts/build-ui.ts';
import { type ColumnKind, parseFilterText } from '../../server/app/ui/src/shared/filter-syntax.ts';
import { type SentTrace, withSdkTracer } from '../fixtures/sdk-tracer.ts';
import {
  basicAuth,
  cli,
  createProject,
  MODE_ENV,
  type Project,
  startWeb,
  type WebServer,
} from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import {
  type Browser,
  cookieHeader,
  createUiUser,
  keysetPages,
  openBrowser as openAt,
  type Row,
  request,
  signIn as signInAt,
} from '../fixtures/ui-client.ts';

let stores: Stores;
let web: WebServer;
let legacy: WebServer;
let projectA: Project;
let projectB: Project;
let ownerId: string;
const users = {} as Record<
  'owner' | 'viewer' | 'outsider' | 'throttled',
  { email: string; password: string }
>;

/** What the SDK was asked to send, per trace: the model the table is compared with. */
interface Sent extends SentTrace {
  model: string;
  usage: { input: number; output: number; total: number };
}
const sent: Sent[] = [];
const TRACES = 24;
const T0 = Date.now() - 30 * 60_000;

async function sendTraces(p: Project) {
  await withSdkTracer(p, web.url, () => {
    for (let i = 0; i < TRACES; i++) {
      const s = {
        name: `request-${i}`,
        userId: `user-${i % 3}`,
        sessionId: `session-${i % 4}`,
        tags: [i % 2 ? 'odd' : 'even', 'ui-test'],
        model: i % 2 ? 'gpt-4o' : 'gpt-4o-mini',
        usage: { input: 10 + i, output: 5, total: 15 + i },
      };
      const start = new Date(T0 + i * 1000);
      propagateAttributes({ userId: s.userId, sessionId: s.sessionId, tags: s.tags }, () => {
        const root = startObservation(
          s.name,
          {
            input: { question: i === 3 ? 'Where does the Aardvark sleep?' : `question ${i}` },
            ...(i === 5 ? { metadata: { note: 'an aardvark was here' } } : {}),
          },
          { startTime: start },
        );
        const gen = startObservation(
          'llm',
          { model: s.model, usageDetails: s.usage, costDetails: { total: 0.001 * (i + 1) } },
          {
            asType: 'generation',
            startTime: new Date(start.getTime() + 10),
            parentSpanContext: root.otelSpan.spanContext(),
          },
        );
        gen.update({ output: i === 7 ? 'the aardvark sleeps in a burrow' : `answer ${i}` });
        gen.end(new Date(start.getTime() + 10 + 100 * ((i * 7) % 11)));
        root.end(new Date(start.getTime() + 50 + 100 * ((i * 5) % 13)));
        sent.push({ ...s, traceId: root.traceId, rootId: root.id, genId: gen.id });
      });
    }
  });
}

const createUser = (email: string, args: string[]) => createUiUser(stores.env, email, args);

const openBrowser = (url = web.url) => openAt(url);
const signIn = (who: { email: string; password: string }, url = web.url) => signInAt(url, who);

/** Every page of the observations table for a query, following the cursor. */
const allPages = (b: Browser, projectId: string, query: Record<string, string>, limit: number) =>
  keysetPages(b, `/api/ui/projects/${projectId}/observations`, limit, query);

async function apiIds(p: Project, filter: unknown[]) {
  const res = await fetch(
    `${web.url}/api/public/v2/observations?limit=1000&filter=${encodeURIComponent(JSON.stringify(filter))}`,
    { headers: { authorization: basicAuth(p) } },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { id: string }[] }).data.map((o) => o.id);
}

beforeAll(async () => {
  await ensureUiBuilt();
  stores = await startStores();
  web = await startWeb({ ...stores.env, ...MODE_ENV.events_only });
  legacy = await startWeb({ ...stores.env, ...MODE_ENV.legacy });
  [projectA, projectB] = await Promise.all([
    createProject(stores.env, 'ui-a'),
    createProject(stores.env, 'ui-b'),
  ]);
  const made = await Promise.all([
    createUser('Owner@Example.com', ['--project', projectA.projectId, '--role', 'owner']),
    createUser('viewer@example.com', ['--project', projectA.projectId, '--role', 'viewer']),
    createUser('outsider@example.com', ['--project', projectB.projectId, '--role', 'owner']),
    createUser('throttled@example.com', ['--project', projectB.projectId]),
  ]);
  users.owner = made[0];
  ownerId = made[0].userId;
  users.viewer = made[1];
  users.outsider = made[2];
  users.throttled = made[3];
  await sendTraces(projectA);
  const score = await fetch(`${web.url}/api/public/scores`, {
    method: 'POST',
    headers: { authorization: basicAuth(projectA), 'content-type': 'application/json' },
    body: JSON.stringify({ traceId: sent[3]!.traceId, name: 'accuracy', value: 0.9 }),
  });
  expect(score.status, await score.text()).toBeLessThan(300);
});

afterAll(async () => {
  await stopStores(stores, web, legacy);
});

describe('the served bundle', () => {
  it('answers every page path with index.html, never cached, and the hashed assets as immutable', async () => {
    const files = readdirSync(join(UI_DIST, 'assets'));
    const js = files.find((f) => f.endsWith('.js'))!;
    expect(js).toMatch(/^index-[A-Za-z0-9_-]{8}\.js$/);
    for (const path of ['/', '/login', `/project/${projectA.projectId}/observations`]) {
      const res = await fetch(`${web.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await res.text()).toContain(`/assets/${js}`);
    }
    const asset = await fetch(`${web.url}/assets/${js}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(Buffer.from(await asset.arrayBuffer()).equals(readFileSync(join(UI_DIST, 'assets', js)))).toBe(
      true,
    );
    expect((await fetch(`${web.url}/assets/index-nothere.js`)).status).toBe(404);
  });

  it('keeps unknown API paths JSON 404s', async () => {
    const res = await fetch(`${web.url}/api/public/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'Route GET /api/public/nothing-here not found' });
  });
});

describe('sign-in and sessions', () => {
  it('signs in with the email in any case, sets an HttpOnly SameSite session cookie, and signs out', async () => {
    const b = await openBrowser();
    const login = await fetch(`${web.url}/api/ui/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: cookieHeader(b), 'x-csrf-token': b.csrf },
      body: JSON.stringify({ email: 'OWNER@example.com', password: users.owner.password }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith('obs_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Max-Age=604800/);
    // No public URL configured and the request came over plain HTTP: no Secure flag.
    expect(cookie).not.toMatch(/Secure/);
    b.cookies.set('obs_session', cookie.split(';')[0]!.split('=')[1]!);
    b.csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
    const session = await request(b, 'GET', '/api/ui/session');
    expect(session.body.user).toMatchObject({ email: 'owner@example.com' });
    expect(session.headers.get('cache-control')).toBe('no-store');

    const stolen = b.cookies.get('obs_session')!;
    expect(
      (await request(b, 'POST', '/api/ui/auth/logout', { headers: { 'x-csrf-token': b.csrf } })).status,
    ).toBe(200);
    expect((await request(b, 'GET', '/api/ui/session')).body.user).toBeNull();
    // The server forgot the session: the old cookie no longer signs anyone in.
    const replay = await fetch(`${web.url}/api/ui/projects`, {
      headers: { cookie: `obs_session=${stolen}` },
    });
    expect(replay.status).toBe(401);
  });

  it('refuses a wrong password and an unknown email alike', async () => {
    const b = await openBrowser();
    for (const body of [
      { email: users.viewer.email, password: 'not the password' },
      { email: 'nobody@example.com', password: 'whatever-it-is' },
    ]) {
      const r = await request(b, 'POST', '/api/ui/auth/login', { body, headers: { 'x-csrf-token': b.csrf } });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ message: 'Invalid email or password' });
    }
    expect((await request(b, 'GET', '/api/ui/projects')).status).toBe(401);
  });

  it('rate limits failed sign-ins per email, the right password included, with Retry-After', async () => {
    const b = await openBrowser();
    const attempt = (password: string) =>
      request(b, 'POST', '/api/ui/auth/login', {
        body: { email: users.throttled.email, password },
        headers: { 'x-csrf-token': b.csrf },
      });
    for (let i = 0; i < 5; i++) expect((await attempt(`wrong-${i}`)).status).toBe(401);
    const refused = await attempt(users.throttled.password);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('CSRF', () => {
  it('refuses a sign-in without the double-submit token or with another one', async () => {
    const b = await openBrowser();
    const body = { email: users.viewer.email, password: users.viewer.password };
    expect((await request(b, 'POST', '/api/ui/auth/login', { body })).status).toBe(403);
    const forged = await request(b, 'POST', '/api/ui/auth/login', {
      body,
      headers: { 'x-csrf-token': 'x'.repeat(43) },
    });
    expect(forged.status).toBe(403);
    expect(forged.body.message).toMatch(/CSRF/);
    // The token of another browser does not match this browser's cookie.
    const other = await openBrowser();
    expect(
      (await request(b, 'POST', '/api/ui/auth/login', { body, headers: { 'x-csrf-token': other.csrf } }))
        .status,
    ).toBe(403);
  });

  it('refuses a signed-in state change without the session token, with the pre-session one, or from another origin', async () => {
    const b = await signIn(users.viewer);
    const preSession = b.cookies.get('obs_csrf')!;
    expect((await request(b, 'POST', '/api/ui/auth/logout')).status).toBe(403);
    expect(
      (await request(b, 'POST', '/api/ui/auth/logout', { headers: { 'x-csrf-token': preSession } })).status,
    ).toBe(403);
    const crossOrigin = await request(b, 'POST', '/api/ui/auth/logout', {
      headers: { 'x-csrf-token': b.csrf, origin: 'https://evil.example' },
    });
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.body.message).toMatch(/cross-origin/);
    // Still signed in: none of the refused requests did anything.
    expect((await request(b, 'GET', '/api/ui/session')).body.user.email).toBe(users.viewer.email);
    const sameOrigin = await request(b, 'POST', '/api/ui/auth/logout', {
      headers: { 'x-csrf-token': b.csrf, origin: web.url },
    });
    expect(sameOrigin.status).toBe(200);
  });
});

describe('projects and roles', () => {
  it('lists only the projects a user belongs to, with the role', async () => {
    const owner = await signIn(users.owner);
    const viewer = await signIn(users.viewer);
    const outsider = await signIn(users.outsider);
    const names = async (b: Browser) =>
      (await request(b, 'GET', '/api/ui/projects')).body.data.map((p: Row) => [p.name, p.role]);
    expect(await names(owner)).toEqual([['ui-a', 'owner']]);
    expect(await names(viewer)).toEqual([['ui-a', 'viewer']]);
    expect(await names(outsider)).toEqual([['ui-b', 'owner']]);
  });

  it("answers 404 for another user's project, its observations included", async () => {
    const outsider = await signIn(users.outsider);
    for (const path of [
      `/api/ui/projects/${projectA.projectId}`,
      `/api/ui/projects/${projectA.projectId}/observations`,
    ]) {
      const r = await request(outsider, 'GET', path);
      expect(r.status).toBe(404);
      expect(r.body.message).toBe(`project ${projectA.projectId} not found`);
    }
    expect((await request(outsider, 'GET', '/api/ui/projects/no-such-project')).status).toBe(404);
    // The project's own members read it (a viewer too).
    expect(
      (
        await request(
          await signIn(users.viewer),
          'GET',
          `/api/ui/projects/${projectA.projectId}/observations`,
        )
      ).status,
    ).toBe(200);
  });

  it('create-user refuses a second user with the same email and a role that does not exist', async () => {
    const again = await cli(['create-user', '--email', 'OWNER@example.com', '--json'], stores.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('a user with email owner@example.com exists');
    const badRole = await cli(['create-user', '--email', 'x@example.com', '--role', 'admin'], stores.env);
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('--role must be one of owner, member, viewer');
  });
});

describe('the observations table', () => {
  let owner: Browser;
  let columns: Record<string, ColumnKind>;
  const rootFilter = () =>
    JSON.stringify([{ type: 'boolean', column: 'isRootObservation', operator: '=', value: true }]);

  beforeAll(async () => {
    owner = await signIn(users.owner);
    columns = (await request(owner, 'GET', `/api/ui/projects/${projectA.projectId}`)).body.columns;
  });

  it('shows one row per trace with the root filter: the traces the SDK sent, newest first', async () => {
    const { rows } = await allPages(owner, projectA.projectId, { filter: rootFilter() }, 200);
    expect(rows.map((r) => r.traceId)).toEqual([...sent].reverse().map((s) => s.traceId));
    expect(
      rows.map((r) => ({
        id: r.id,
        name: r.name,
        userId: r.userId,
        sessionId: r.sessionId,
        tags: [...r.tags].sort(),
      })),
    ).toEqual(
      [...sent].reverse().map((s) => ({
        id: s.rootId,
        name: s.name,
        userId: s.userId,
        sessionId: s.sessionId,
        tags: [...s.tags].sort(),
      })),
    );
    for (const r of rows)
      expect(r).toMatchObject({ type: 'SPAN', level: 'DEFAULT', isRootObservation: true });
    // The trace's score is shown on its root observation.
    const scored = rows.find((r) => r.traceId === sent[3]!.traceId)!;
    expect(scored.scores).toEqual([
      expect.objectContaining({ name: 'accuracy', value: 0.9, dataType: 'NUMERIC' }),
    ]);
    expect(rows.filter((r) => r.scores.length > 0)).toHaveLength(1);
  });

  it('shows model, tokens, cost and latency of generations as sent', async () => {
    const filter = JSON.stringify([{ type: 'string', column: 'type', operator: '=', value: 'GENERATION' }]);
    const { rows } = await allPages(owner, projectA.projectId, { filter }, 200);
    expect(rows).toHaveLength(TRACES);
    for (const s of sent) {
      const r = rows.find((x) => x.id === s.genId)!;
      const i = sent.indexOf(s);
      expect(r).toMatchObject({ model: s.model, usageDetails: s.usage, traceId: s.traceId });
      expect(r.totalCost).toBeCloseTo(0.001 * (i + 1));
      expect(r.latency).toBeCloseTo((100 * ((i * 7) % 11)) / 1000, 3);
    }
  });

  it.each([
    ['start time, newest first', {}],
    ['latency, shortest first', { orderBy: 'latency', order: 'asc' }],
    ['cost, highest first', { orderBy: 'totalCost', order: 'desc' }],
    ['tokens, fewest first', { orderBy: 'totalTokens', order: 'asc' }],
    ['name, A to Z', { orderBy: 'name', order: 'asc' }],
  ])('pages by %s without duplicates or gaps', async (_, order) => {
    const whole = await allPages(owner, projectA.projectId, { filter: '[]', ...order }, 200);
    expect(whole.pages).toBe(1);
    expect(whole.rows).toHaveLength(2 * TRACES);
    const paged = await allPages(owner, projectA.projectId, { filter: '[]', ...order }, 7);
    expect(paged.pages).toBe(Math.ceil((2 * TRACES) / 7));
    expect(paged.rows.map((r) => r.id)).toEqual(whole.rows.map((r) => r.id));
    expect(new Set(paged.rows.map((r) => r.id)).size).toBe(2 * TRACES);
  });

  it('sorts by the column asked for', async () => {
    const { rows } = await allPages(
      owner,
      projectA.projectId,
      { filter: rootFilter(), orderBy: 'latency', order: 'asc' },
      200,
    );
    const latencies = rows.map((r) => r.latency as number);
    expect(latencies).toEqual([...latencies].sort((a, b) => a - b));
    const byName = await allPages(
      owner,
      projectA.projectId,
      { filter: rootFilter(), orderBy: 'name', order: 'desc' },
      200,
    );
    expect(byName.rows.map((r) => r.name)).toEqual(
      sent
        .map((s) => s.name)
        .sort()
        .reverse(),
    );
  });

  it.each([
    'isRootObservation = true',
    'type = GENERATION AND model = "gpt-4o"',
    'totalTokens > 25 AND type = GENERATION',
    'userId any of ["user-1"] AND isRootObservation = true',
    'tags any of [even] AND name starts with "request-1"',
    'latency >= 0.5',
    'sessionId != "session-0" AND type = SPAN',
    'input matches "aardvark"',
    'output matches "burrow"',
  ])('filter bar "%s" gives the rows API v2 gives for the same filter', async (text) => {
    const parsed = parseFilterText(text, columns);
    if (!parsed.ok) throw new Error(parsed.error);
    const ui = await allPages(owner, projectA.projectId, { filter: JSON.stringify(parsed.filters) }, 200);
    const api = await apiIds(projectA, parsed.filters);
    expect(ui.rows.map((r) => r.id)).toEqual(api);
    expect(api.length).toBeGreaterThan(0);
  });

  it('searches input, output and metadata values, and shows where it matched', async () => {
    const { rows } = await allPages(owner, projectA.projectId, { filter: '[]', search: 'aardvark' }, 200);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect([...byId.keys()].sort()).toEqual([sent[3]!.rootId, sent[5]!.rootId, sent[7]!.genId].sort());
    expect(byId.get(sent[3]!.rootId)!.match).toEqual({
      field: 'input',
      before: '{"question":"Where does the ',
      match: 'Aardvark',
      after: ' sleep?"}',
    });
    expect(byId.get(sent[7]!.genId)!.match).toMatchObject({
      field: 'output',
      match: 'aardvark',
      after: ' sleeps in a burrow',
    });
    expect(byId.get(sent[5]!.rootId)!.match).toMatchObject({
      field: expect.stringMatching(/^metadata/),
      match: 'aardvark',
    });
    // Whole words only, as the API's `matches`: a prefix of a word finds nothing.
    expect((await allPages(owner, projectA.projectId, { filter: '[]', search: 'aardv' }, 200)).rows).toEqual(
      [],
    );
    // With the root filter the search keeps one row per trace.
    const roots = await allPages(
      owner,
      projectA.projectId,
      { filter: rootFilter(), search: 'aardvark' },
      200,
    );
    expect(roots.rows.map((r) => r.id).sort()).toEqual([sent[3]!.rootId, sent[5]!.rootId].sort());
  });

  it('narrows to a time range', async () => {
    const from = new Date(T0 + 20_000).toISOString();
    const { rows } = await allPages(
      owner,
      projectA.projectId,
      { filter: rootFilter(), fromStartTime: from },
      200,
    );
    expect(rows.map((r) => r.id)).toEqual(
      sent
        .slice(20)
        .reverse()
        .map((s) => s.rootId),
    );
  });

  it('refuses a filter outside the API language with the API message', async () => {
    const filter = JSON.stringify([{ type: 'string', column: 'nope', operator: '=', value: 'x' }]);
    const r = await request(
      owner,
      'GET',
      `/api/ui/projects/${projectA.projectId}/observations?filter=${encodeURIComponent(filter)}`,
    );
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('filter: unknown column nope');
  });

  it('is not served in write mode legacy, and the session says why', async () => {
    const b = await signIn(users.owner, legacy.url);
    const session = await request(b, 'GET', '/api/ui/session');
    expect(session.body.deployment).toMatchObject({ writeMode: 'legacy', v4Reads: false });
    expect(session.body.deployment.v4ReadsUnavailable).toMatch(/only available in a version 4 write mode/);
    expect((await request(b, 'GET', '/api/ui/projects')).body.data.map((p: Row) => p.name)).toEqual(['ui-a']);
    const r = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/observations`);
    expect(r.status).toBe(404);
  });
});

describe('the trace view', () => {
  it('shows every observation of a trace with full values, scores and comments', async () => {
    const owner = await signIn(users.owner);
    const s = sent[3]!;
    const r = await request(owner, 'GET', `/api/ui/projects/${projectA.projectId}/traces/${s.traceId}`);
    expect(r.status).toBe(200);
    expect(r.body.observations.map((o: Row) => [o.id, o.parentObservationId])).toEqual([
      [s.rootId, null],
      [s.genId, s.rootId],
    ]);
    const [root, gen] = r.body.observations;
    expect(JSON.parse(root.input)).toEqual({ question: 'Where does the Aardvark sleep?' });
    expect(gen).toMatchObject({ model: s.model, usageDetails: s.usage, output: 'answer 3' });
    expect(root.scores).toEqual([expect.objectContaining({ name: 'accuracy', value: 0.9 })]);
    expect(r.body.truncated).toBe(false);
  });

  it('adds a score and a comment through the services of the public API; viewers cannot', async () => {
    const owner = await signIn(users.owner);
    const s = sent[8]!;
    const base = `/api/ui/projects/${projectA.projectId}`;
    const score = await request(owner, 'POST', `${base}/scores`, {
      body: { traceId: s.traceId, observationId: s.genId, name: 'helpful', value: 1 },
      headers: { 'x-csrf-token': owner.csrf },
    });
    expect(score.status, JSON.stringify(score.body)).toBe(200);
    const comment = await request(owner, 'POST', `${base}/comments`, {
      body: { objectType: 'TRACE', objectId: s.traceId, content: 'looked at this' },
      headers: { 'x-csrf-token': owner.csrf },
    });
    expect(comment.status, JSON.stringify(comment.body)).toBe(200);

    const trace = await request(owner, 'GET', `${base}/traces/${s.traceId}`);
    const gen = trace.body.observations.find((o: Row) => o.id === s.genId);
    expect(gen.scores).toEqual([expect.objectContaining({ id: score.body.id, name: 'helpful', value: 1 })]);
    expect(trace.body.comments).toEqual([
      expect.objectContaining({ id: comment.body.id, objectType: 'TRACE', content: 'looked at this' }),
    ]);
    // The public API reads what the page wrote.
    const auth = { authorization: basicAuth(projectA) };
    const apiScores = await (
      await fetch(`${web.url}/api/public/v3/scores?traceId=${s.traceId}`, { headers: auth })
    ).json();
    expect((apiScores as { data: Row[] }).data.map((x) => x.id)).toEqual([score.body.id]);
    const apiComments = await (
      await fetch(`${web.url}/api/public/comments?objectType=TRACE&objectId=${s.traceId}`, { headers: auth })
    ).json();
    expect((apiComments as { data: Row[] }).data).toEqual([
      expect.objectContaining({ id: comment.body.id, authorUserId: ownerId }),
    ]);

    const viewer = await signIn(users.viewer);
    const refused = await request(viewer, 'POST', `${base}/scores`, {
      body: { traceId: s.traceId, name: 'helpful', value: 0 },
      headers: { 'x-csrf-token': viewer.csrf },
    });
    expect(refused.status).toBe(403);
    const noToken = await request(owner, 'POST', `${base}/comments`, {
      body: { objectType: 'TRACE', objectId: s.traceId, content: 'x' },
    });
    expect(noToken.status).toBe(403);
    expect((await request(owner, 'GET', `${base}/traces/${s.traceId}`)).body.comments).toHaveLength(1);
  });

  it('annotates with a score config as the reference does: ANNOTATION, the config, the user who scored', async () => {
    const auth = { authorization: basicAuth(projectA), 'content-type': 'application/json' };
    const createConfig = async (body: Record<string, unknown>) => {
      const res = await fetch(`${web.url}/api/public/score-configs`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(200);
      return (await res.json()) as { id: string };
    };
    const quality = await createConfig({
      name: 'quality',
      dataType: 'CATEGORICAL',
      categories: [
        { value: 1, label: 'good' },
        { value: 0, label: 'bad' },
      ],
    });
    const archived = await createConfig({ name: 'old-scale', dataType: 'NUMERIC', minValue: 0, maxValue: 5 });
    const db = new pg.Pool({ connectionString: stores.pg.url, max: 1 });
    try {
      await db.query('UPDATE score_configs SET is_archived = true WHERE id = $1', [archived.id]);
    } finally {
      await db.end();
    }
    const owner = await signIn(users.owner);
    const base = `/api/ui/projects/${projectA.projectId}`;
    const listed = await request(owner, 'GET', `${base}/score-configs`);
    expect(listed.status).toBe(200);
    expect((listed.body.data as Row[]).map((c) => [c.id, c.name, c.dataType])).toEqual([
      [quality.id, 'quality', 'CATEGORICAL'],
    ]);

    const s = sent[9]!;
    const post = (body: Record<string, unknown>) =>
      request(owner, 'POST', `${base}/scores`, { body, headers: { 'x-csrf-token': owner.csrf } });
    const annotated = await post({
      traceId: s.traceId,
      configId: quality.id,
      name: 'quality',
      value: 'good',
    });
    expect(annotated.status, JSON.stringify(annotated.body)).toBe(200);
    // Free-form, with a source the page may not choose: stored as API, still by the user.
    const free = await post({ traceId: s.traceId, name: 'note', value: 2, source: 'EVAL' });
    expect(free.status, JSON.stringify(free.body)).toBe(200);
    const outside = await post({ traceId: s.traceId, configId: quality.id, name: 'quality', value: 'meh' });
    expect(outside.status).toBe(400);
    expect(outside.body.message).toMatch(/"meh" is not a category of score config/);

    const apiScores = (await (
      await fetch(`${web.url}/api/public/v3/scores?traceId=${s.traceId}&fields=details,annotation`, {
        headers: auth,
      })
    ).json()) as { data: Row[] };
    const byId = new Map(apiScores.data.map((x) => [x.id, x]));
    expect(apiScores.data).toHaveLength(2);
    expect(byId.get(annotated.body.id)).toMatchObject({
      name: 'quality',
      source: 'ANNOTATION',
      configId: quality.id,
      dataType: 'CATEGORICAL',
      value: 'good',
      authorUserId: ownerId,
    });
    expect(byId.get(free.body.id)).toMatchObject({
      name: 'note',
      source: 'API',
      configId: null,
      authorUserId: ownerId,
    });

    // Another project's user sees no config of this one.
    const outsider = await signIn(users.outsider);
    expect((await request(outsider, 'GET', `${base}/score-configs`)).status).toBe(404);
  });

  it("answers 404 for a trace of another user's project and for a trace that does not exist", async () => {
    const outsider = await signIn(users.outsider);
    const r = await request(
      outsider,
      'GET',
      `/api/ui/projects/${projectA.projectId}/traces/${sent[0]!.traceId}`,
    );
    expect(r.status).toBe(404);
    const owner = await signIn(users.owner);
    expect((await request(owner, 'GET', `/api/ui/projects/${projectA.projectId}/traces/nope`)).status).toBe(
      404,
    );
    const outsiderOwn = await request(
      outsider,
      'GET',
      `/api/ui/projects/${projectB.projectId}/traces/${sent[0]!.traceId}`,
    );
    expect(outsiderOwn.status).toBe(404);
  });
});
