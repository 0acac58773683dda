/**
 * The sessions and users lists of the version 3 experience (`/api/ui/projects/:id/legacy/...`)
 * through HTTP against `observatory web` on real PostgreSQL and the ClickHouse engine. The npm
 * `langfuse` 3.x SDK sends traces with spans and generations (usage and cost) through the public
 * ingestion API: project A's to a `legacy` web, project B's (sharing A's session and user ids) to
 * a `dual` web without the preview opt-in. Both webs list them from the legacy tables, and the
 * rows are compared with a model of what was sent (ids, first and last seen, trace and observation
 * counts, related ids, tokens, cost) across keyset pages, per project; the session ids agree with
 * the deprecated `GET /api/public/sessions`. `events_only` does not serve these routes (404).
 */
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  basicAuth,
  createProject,
  type Project,
  startWebPerMode,
  type WebServer,
} from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { createUiUser, keysetPages, type Row, request, signIn } from '../fixtures/ui-client.ts';

let stores: Stores;
let legacy: WebServer;
let dual: WebServer;
let eventsOnly: WebServer;
let projectA: Project;
let projectB: Project;
const users = {} as Record<'memberA' | 'viewerB', { email: string; password: string }>;

/** One trace the SDK was asked to send, with its observations: the model the lists are compared with. */
interface SentTrace {
  project: string;
  traceId: string;
  userId?: string;
  sessionId?: string;
  timestampMs: number;
  observations: { input: number; output: number; cost: number }[];
}
const sent: SentTrace[] = [];
const T0 = Date.now() - 30 * 60_000;

/**
 * `count` traces through the SDK: most with a span and a generation, every fourth with only a
 * span; the last one without a user or session (it belongs to no row), and, when `bare`, one
 * more with a session and a user but no observation at all.
 */
async function sendTraces(p: Project, web: WebServer, count: number, offset: number, bare: boolean) {
  const lf = new Langfuse({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: web.url });
  for (let i = 0; i < count; i++) {
    const timestampMs = T0 + (offset + i) * 1000;
    const anonymous = i === count - 1;
    const ids = anonymous ? {} : { userId: `user-${i % 3}`, sessionId: `session-${i % 4}` };
    const trace = lf.trace({ name: `request-${i}`, timestamp: new Date(timestampMs), ...ids });
    const observations: SentTrace['observations'] = [];
    trace.span({ name: 'retrieve', startTime: new Date(timestampMs), endTime: new Date(timestampMs + 50) });
    observations.push({ input: 0, output: 0, cost: 0 });
    if (i % 4 !== 3) {
      const usage = { input: 10 + i, output: 5 + (i % 2) };
      const cost = 0.125 * (i + 1);
      trace.generation({
        name: 'llm',
        model: 'gpt-4o',
        startTime: new Date(timestampMs + 60),
        endTime: new Date(timestampMs + 400),
        usageDetails: { ...usage, total: usage.input + usage.output },
        costDetails: { total: cost },
      });
      observations.push({ ...usage, cost });
    }
    sent.push({ project: p.projectId, traceId: trace.id, ...ids, timestampMs, observations });
  }
  if (bare) {
    const timestampMs = T0 + (offset + count) * 1000;
    const ids = { userId: 'user-bare', sessionId: 'session-bare' };
    const trace = lf.trace({ name: 'bare', timestamp: new Date(timestampMs), ...ids });
    sent.push({ project: p.projectId, traceId: trace.id, ...ids, timestampMs, observations: [] });
  }
  await lf.shutdownAsync();
}

/** The rows a list should show, from what was sent, newest last-seen first. */
function expected(projectId: string, grouping: 'session' | 'user', fromMs = 0): Row[] {
  const groups = new Map<string, SentTrace[]>();
  for (const t of sent.filter((s) => s.project === projectId && s.timestampMs >= fromMs)) {
    const key = grouping === 'session' ? t.sessionId : t.userId;
    if (key) groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const rows = [...groups].map(([id, ts]) => {
    const observations = ts.flatMap((t) => t.observations);
    const sum = (f: (o: SentTrace['observations'][number]) => number) =>
      observations.reduce((a, o) => a + f(o), 0);
    const times = ts.map((t) => t.timestampMs);
    return {
      id,
      firstSeen: new Date(Math.min(...times)).toISOString(),
      lastSeen: new Date(Math.max(...times)).toISOString(),
      traceCount: ts.length,
      observationCount: observations.length,
      [grouping === 'session' ? 'userIds' : 'sessionIds']: [
        ...new Set(ts.map((t) => (grouping === 'session' ? t.userId : t.sessionId))),
      ].sort(),
      inputTokens: sum((o) => o.input),
      outputTokens: sum((o) => o.output),
      totalTokens: sum((o) => o.input + o.output),
      totalCost: sum((o) => o.cost),
    };
  });
  return rows.sort((a, b) =>
    a.lastSeen === b.lastSeen ? (a.id < b.id ? 1 : -1) : a.lastSeen < b.lastSeen ? 1 : -1,
  );
}

const rounded = (rows: Row[]) => rows.map((r) => ({ ...r, totalCost: Number(r.totalCost.toFixed(9)) }));

const createUser = (email: string, args: string[]) => createUiUser(stores.env, email, args);

beforeAll(async () => {
  stores = await startStores();
  const webs = await startWebPerMode(stores.env, {
    dual: { SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: 'false' },
  });
  [legacy, dual, eventsOnly] = [webs.legacy, webs.dual, webs.events_only];
  [projectA, projectB] = await Promise.all([
    createProject(stores.env, 'v3-a'),
    createProject(stores.env, 'v3-b'),
  ]);
  [users.memberA, users.viewerB] = await Promise.all([
    createUser('member@example.com', ['--project', projectA.projectId, '--role', 'member']),
    createUser('viewer@example.com', ['--project', projectB.projectId, '--role', 'viewer']),
  ]);
  await Promise.all([sendTraces(projectA, legacy, 13, 0, true), sendTraces(projectB, dual, 5, 100, false)]);
});

afterAll(async () => {
  await stopStores(stores, legacy, dual, eventsOnly);
});

describe('the version 3 sessions and users lists', () => {
  for (const grouping of ['session', 'user'] as const) {
    for (const mode of ['legacy', 'dual'] as const) {
      it(`${mode}: lists the ${grouping}s the SDK sent, row by row, across keyset pages`, async () => {
        const b = await signIn(mode === 'legacy' ? legacy.url : dual.url, users.memberA);
        const session = await request(b, 'GET', '/api/ui/session');
        expect(session.body.deployment.readPath.path).toBe('v3');
        const path = `/api/ui/projects/${projectA.projectId}/legacy/${grouping}s`;
        const { rows, pages } = await keysetPages(b, path, 2);
        const want = expected(projectA.projectId, grouping);
        expect(want.length).toBeGreaterThan(3);
        expect(pages).toBe(Math.ceil(want.length / 2));
        expect(rounded(rows)).toEqual(want);
      });
    }
  }

  it('shows a session whose trace has no observation yet with zeros', async () => {
    const b = await signIn(legacy.url, users.memberA);
    const r = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/legacy/sessions?limit=1`);
    expect(r.body.data).toEqual([
      {
        id: 'session-bare',
        firstSeen: new Date(T0 + 13_000).toISOString(),
        lastSeen: new Date(T0 + 13_000).toISOString(),
        traceCount: 1,
        observationCount: 0,
        userIds: ['user-bare'],
        inputTokens: 0,
        outputTokens: 0,
        totalTokens: 0,
        totalCost: 0,
      },
    ]);
  });

  it('agrees with the deprecated public sessions endpoint on which sessions exist', async () => {
    const res = await fetch(`${legacy.url}/api/public/sessions?limit=100`, {
      headers: { authorization: basicAuth(projectA) },
    });
    expect(res.status).toBe(200);
    const publicIds = ((await res.json()) as { data: Row[] }).data.map((s) => s.id).sort();
    const b = await signIn(legacy.url, users.memberA);
    const { rows } = await keysetPages(b, `/api/ui/projects/${projectA.projectId}/legacy/sessions`, 50);
    expect(rows.map((r) => r.id).sort()).toEqual(publicIds);
  });

  it("keeps each project to its own traces: B's rows, never A's, and A's URL is 404 to B", async () => {
    const b = await signIn(dual.url, users.viewerB);
    for (const grouping of ['session', 'user'] as const) {
      const { rows } = await keysetPages(b, `/api/ui/projects/${projectB.projectId}/legacy/${grouping}s`, 50);
      expect(rounded(rows)).toEqual(expected(projectB.projectId, grouping));
    }
    const foreign = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/legacy/sessions`);
    expect(foreign.status).toBe(404);
  });

  it('narrows to a time range of the trace timestamps', async () => {
    const b = await signIn(legacy.url, users.memberA);
    const fromMs = T0 + 6_000;
    const { rows } = await keysetPages(b, `/api/ui/projects/${projectA.projectId}/legacy/users`, 2, {
      fromStartTime: new Date(fromMs).toISOString(),
    });
    expect(rounded(rows)).toEqual(expected(projectA.projectId, 'user', fromMs));
  });

  it('refuses a cursor it did not make, naming the field', async () => {
    const b = await signIn(legacy.url, users.memberA);
    const r = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/legacy/users?cursor=bm9wZQ`);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('cursor');
  });

  it('requires a signed-in user', async () => {
    const res = await fetch(`${legacy.url}/api/ui/projects/${projectA.projectId}/legacy/sessions`);
    expect(res.status).toBe(401);
  });

  it('is not served in events_only, where the pages read only version 4', async () => {
    const b = await signIn(eventsOnly.url, users.memberA);
    for (const grouping of ['sessions', 'users']) {
      const r = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/legacy/${grouping}`);
      expect(r.status).toBe(404);
      expect(r.body.message).toContain('events_only');
    }
  });
});
