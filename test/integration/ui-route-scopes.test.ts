/**
 * Every route the web app registers under `/api/ui`, found as Fastify registers it (an `onRoute`
 * hook on the root, added before the plugins load), in a legacy and an events_only deployment,
 * served over HTTP in process on real stores (PostgreSQL, the embedded ClickHouse engine). Each
 * route must refuse a request without a session (401), except the three sign-in routes, and must
 * show a signed-in owner of project B nothing of project A: a route naming A in its path refuses
 * (403 or 404), and no answer carries A's public key, its trace, or (unasked) its id. A route added later is walked as well,
 * so one that forgets its scope fails here.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProducerRecorder } from '../../server/features/producers/recorder.ts';
import { createProject } from '../../server/features/projects/keys.ts';
import { provisionUser } from '../../server/features/users/provision.ts';
import { localBlobStore } from '../../server/platform/blobs/local.ts';
import { LEGACY_ENV } from '../fixtures/service.ts';
import { type Browser, openBrowser, request, signIn } from '../fixtures/ui-client.ts';
import { type InProcessWeb, type Stores, serveWeb, startStores } from '../fixtures/web-in-process.ts';

const DEPLOYMENTS = {
  legacy: LEGACY_ENV,
  events_only: { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' },
} as const;
type Deployment = keyof typeof DEPLOYMENTS;

/** The routes a browser uses before it has a session. */
const SIGN_IN = new Set([
  'GET /api/ui/session',
  'HEAD /api/ui/session',
  'POST /api/ui/auth/login',
  'POST /api/ui/auth/logout',
  // An invitation link is opened before its account exists; the token is the credential.
  'GET /api/ui/invitations/:token',
  'HEAD /api/ui/invitations/:token',
  'POST /api/ui/invitations/:token/accept',
]);

interface Served extends InProcessWeb {
  routes: { method: string; url: string }[];
}

let stores: Stores;
let recorder: ProducerRecorder;
const served = {} as Record<Deployment, Served>;
type Made = Awaited<ReturnType<typeof createProject>>;
let projectA: Made;
let projectB: Made;
const ownerB = { email: 'owner-b@example.com', password: 'route-scopes-owner-b-password' };

async function serve(d: Deployment): Promise<Served> {
  const blobs = (bucket: string) =>
    localBlobStore({ dir: join(stores.dir, bucket), bucket, baseUrl: () => 'http://127.0.0.1' });
  const routes: Served['routes'] = [];
  const web = await serveWeb(
    stores,
    DEPLOYMENTS[d],
    { producers: recorder, mediaBlobs: blobs('media'), exportBlobs: blobs('exports') },
    (app) =>
      app.addHook('onRoute', (r) => {
        for (const method of [r.method].flat()) {
          if (r.url.startsWith('/api/ui/')) routes.push({ method, url: r.url });
        }
      }),
  );
  return { ...web, routes };
}

/** The route's path with A's id for `:projectId` and a placeholder for any other parameter. */
const pathOf = (url: string) => url.replace(':projectId', projectA.projectId).replace(/:[A-Za-z]+/g, 'x');

/** Whether an answer shows something of A; its id counts only where the request did not name it. */
const leaksA = (text: string, namedA: boolean) =>
  text.includes(projectA.publicKey) ||
  text.includes('only-a') ||
  (!namedA && text.includes(projectA.projectId));

beforeAll(async () => {
  stores = await startStores();
  const { pool } = stores;
  recorder = new ProducerRecorder(pool, 60_000);
  [projectA, projectB] = [await createProject(pool, 'scopes-a'), await createProject(pool, 'scopes-b')];
  await provisionUser(pool, { ...ownerB, role: 'owner', projectId: projectB.projectId });
  served.legacy = await serve('legacy');
  served.events_only = await serve('events_only');
  // Project A has data on every surface a page could show: a trace through the legacy write path,
  // recorded as a producer that events_only would refuse.
  const res = await fetch(`${served.legacy.url}/api/public/traces`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${projectA.publicKey}:${projectA.secretKey}`).toString('base64')}`,
      'content-type': 'application/json',
      'x-langfuse-sdk-name': 'python',
      'x-langfuse-sdk-version': '2.0.0',
    },
    body: JSON.stringify({ id: 'a-trace', name: 'only-a' }),
  });
  expect(res.status, await res.text()).toBe(200);
  await recorder.flush();
  const recorded = await stores.pool.query('SELECT public_key FROM producer_activity');
  expect(recorded.rows).toEqual([{ public_key: projectA.publicKey }]);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(served).map((s) => s.app.close()));
  await recorder?.close();
  await stores?.stop();
});

describe.each(Object.keys(DEPLOYMENTS) as Deployment[])('%s', (d) => {
  it('registers the UI routes the pages use', () => {
    const names = served[d].routes.map((r) => `${r.method} ${r.url}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'GET /api/ui/projects',
        'GET /api/ui/migration',
        'GET /api/ui/projects/:projectId/observations',
        'POST /api/ui/projects/:projectId/scores',
        'PUT /api/ui/preferences/v4-preview',
        'PUT /api/ui/projects/:projectId/llm-connections',
        'POST /api/ui/projects/:projectId/evaluation-rules',
        'POST /api/ui/projects/:projectId/evaluation-rules/preview',
        'GET /api/ui/projects/:projectId/evaluation-rules/:evaluationRuleId/executions',
      ]),
    );
  });

  it('refuses every route but sign-in without a session', async () => {
    const stranger: Browser = await openBrowser(served[d].url);
    const answers: string[] = [];
    for (const r of served[d].routes) {
      if (SIGN_IN.has(`${r.method} ${r.url}`)) continue;
      const res = await request(stranger, r.method, pathOf(r.url), {
        headers: { 'x-csrf-token': stranger.csrf },
        ...(['GET', 'HEAD'].includes(r.method) ? {} : { body: {} }),
      });
      answers.push(`${r.method} ${r.url} ${res.status}`);
    }
    expect(
      answers.every((a) => a.endsWith(' 401')),
      answers.join('\n'),
    ).toBe(true);
  });

  it("shows another project's owner nothing of project A on any route", async () => {
    const b = await signIn(served[d].url, ownerB);
    const wrong: string[] = [];
    for (const r of served[d].routes) {
      if (r.url.startsWith('/api/ui/auth/')) continue;
      const res = await fetch(`${served[d].url}${pathOf(r.url)}`, {
        method: r.method,
        headers: {
          cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          'x-csrf-token': b.csrf,
          ...(['GET', 'HEAD'].includes(r.method) ? {} : { 'content-type': 'application/json' }),
        },
        ...(['GET', 'HEAD'].includes(r.method) ? {} : { body: '{}' }),
      });
      const text = await res.text();
      const namesA = r.url.includes(':projectId');
      if ((namesA && ![403, 404].includes(res.status)) || leaksA(text, namesA)) {
        wrong.push(`${r.method} ${r.url}: ${res.status} ${text.slice(0, 300)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
