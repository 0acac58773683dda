/**
 * The web UI's sessions and users lists and its background migrations page, through HTTP against
 * `observatory web` on real PostgreSQL and the ClickHouse engine. The lists are compared row by row
 * with a model of what the JS SDK (v5, OpenTelemetry) was asked to send, across keyset pages, per
 * project; they answer 404 where the version 4 read path is not served. The migration page is
 * compared with what `observatory backfill run` records while it runs the chain's first step.
 */
import { propagateAttributes, startObservation } from '@langfuse/tracing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import {
  basicAuth,
  cli,
  createProject,
  DUAL_ENV,
  type Project,
  startWebPerMode,
  type WebServer,
} from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { createUiUser, keysetPages, type Row, request, signIn } from '../fixtures/ui-client.ts';

let stores: Stores;
let web: WebServer;
let dual: WebServer;
let legacy: WebServer;
let projectA: Project;
let projectB: Project;
const users = {} as Record<'owner' | 'member' | 'other', { email: string; password: string }>;

/** One observation the SDK was asked to send: the model the lists are compared with. */
interface SentObservation {
  project: string;
  traceId: string;
  userId: string;
  sessionId: string;
  startMs: number;
  tokens: { input: number; output: number; total: number };
  cost: number;
}
const sent: SentObservation[] = [];
const T0 = Date.now() - 20 * 60_000;

async function sendTraces(p: Project, count: number, offset: number) {
  await withSdkTracer(p, web.url, () => {
    for (let i = 0; i < count; i++) {
      const userId = `user-${i % 3}`;
      const sessionId = `session-${i % 5}`;
      const startMs = T0 + (offset + i) * 1000;
      const tokens = { input: 10 + i, output: 5, total: 15 + i };
      const cost = 0.25 * (i + 1);
      propagateAttributes({ userId, sessionId }, () => {
        const root = startObservation(`request-${i}`, { input: { i } }, { startTime: new Date(startMs) });
        const gen = startObservation(
          'llm',
          { model: 'gpt-4o', usageDetails: tokens, costDetails: { total: cost } },
          {
            asType: 'generation',
            startTime: new Date(startMs + 10),
            parentSpanContext: root.otelSpan.spanContext(),
          },
        );
        gen.end(new Date(startMs + 200));
        root.end(new Date(startMs + 300));
        const common = { project: p.projectId, traceId: root.traceId, userId, sessionId };
        const none = { input: 0, output: 0, total: 0 };
        sent.push({ ...common, startMs, tokens: none, cost: 0 });
        sent.push({ ...common, startMs: startMs + 10, tokens, cost });
      });
    }
  });
}

/** The rows a list should show, computed from what was sent, newest last-seen first. */
function expected(projectId: string, grouping: 'session' | 'user'): Row[] {
  const groups = new Map<string, SentObservation[]>();
  for (const o of sent.filter((s) => s.project === projectId)) {
    const key = grouping === 'session' ? o.sessionId : o.userId;
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  const rows = [...groups].map(([id, os]) => {
    const related = [...new Set(os.map((o) => (grouping === 'session' ? o.userId : o.sessionId)))].sort();
    const sum = (f: (o: SentObservation) => number) => os.reduce((a, o) => a + f(o), 0);
    return {
      id,
      firstSeen: new Date(Math.min(...os.map((o) => o.startMs))).toISOString(),
      lastSeen: new Date(Math.max(...os.map((o) => o.startMs))).toISOString(),
      traceCount: new Set(os.map((o) => o.traceId)).size,
      observationCount: os.length,
      [grouping === 'session' ? 'userIds' : 'sessionIds']: related,
      inputTokens: sum((o) => o.tokens.input),
      outputTokens: sum((o) => o.tokens.output),
      totalTokens: sum((o) => o.tokens.total),
      totalCost: sum((o) => o.cost),
    };
  });
  return rows.sort((a, b) =>
    a.lastSeen === b.lastSeen ? (a.id < b.id ? 1 : -1) : a.lastSeen < b.lastSeen ? 1 : -1,
  );
}

const createUser = (email: string, args: string[]) => createUiUser(stores.env, email, args);

beforeAll(async () => {
  stores = await startStores();
  // Run as an operator runs it: the events_only web knows its ObservabilityService.
  const webs = await startWebPerMode(stores.env, {
    events_only: { SERVICE_OPERATOR_OBJECT: 'observability/demo' },
  });
  [legacy, dual, web] = [webs.legacy, webs.dual, webs.events_only];
  [projectA, projectB] = await Promise.all([
    createProject(stores.env, 'lists-a'),
    createProject(stores.env, 'lists-b'),
  ]);
  const made = await Promise.all([
    // An owner of the deployment's organization: a deployment admin, who sees the backfill chain.
    createUser('owner@example.com', ['--role', 'owner']),
    createUser('member@example.com', ['--project', projectA.projectId, '--role', 'member']),
    createUser('other@example.com', ['--project', projectB.projectId, '--role', 'viewer']),
  ]);
  [users.owner, users.member, users.other] = made;
  await sendTraces(projectA, 11, 0);
  // Project B shares session and user ids with A: its rows must never join A's.
  await sendTraces(projectB, 3, 100);
});

afterAll(async () => {
  await stopStores(stores, web, dual, legacy);
});

describe('sessions and users lists', () => {
  for (const grouping of ['session', 'user'] as const) {
    it(`lists the ${grouping}s the SDK sent, row by row, across keyset pages`, async () => {
      const b = await signIn(web.url, users.member);
      const { rows, pages } = await keysetPages(b, `/api/ui/projects/${projectA.projectId}/${grouping}s`, 2);
      const want = expected(projectA.projectId, grouping);
      expect(pages).toBe(Math.ceil(want.length / 2));
      expect(rows.map((r) => ({ ...r, totalCost: Number(r.totalCost.toFixed(9)) }))).toEqual(want);
    });
  }

  it('keeps each project to its own observations', async () => {
    const b = await signIn(web.url, users.other);
    const { rows } = await keysetPages(b, `/api/ui/projects/${projectB.projectId}/sessions`, 50);
    expect(rows.map((r) => ({ ...r, totalCost: Number(r.totalCost.toFixed(9)) }))).toEqual(
      expected(projectB.projectId, 'session'),
    );
    const foreign = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/users`);
    expect(foreign.status).toBe(404);
  });

  it('narrows to a time range', async () => {
    const b = await signIn(web.url, users.owner);
    const from = new Date(T0 + 5 * 1000).toISOString();
    const r = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/users?fromStartTime=${from}`);
    expect(r.status).toBe(200);
    const inRange = sent.filter((o) => o.project === projectA.projectId && o.startMs >= T0 + 5000);
    expect(r.body.data.map((u: Row) => u.id).sort()).toEqual(
      [...new Set(inRange.map((o) => o.userId))].sort(),
    );
    for (const u of r.body.data) {
      expect(u.observationCount).toBe(inRange.filter((o) => o.userId === u.id).length);
    }
  });

  it('refuses a cursor it did not make, naming the field', async () => {
    const b = await signIn(web.url, users.owner);
    const r = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/sessions?cursor=bm9wZQ`);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('cursor');
  });

  it('answers 404 where the version 4 read path is not served', async () => {
    const b = await signIn(legacy.url, users.owner);
    const r = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/sessions`);
    expect(r.status).toBe(404);
    expect(r.body.message).toContain('SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN');
  });

  it('requires a signed-in user', async () => {
    const res = await fetch(`${web.url}/api/ui/projects/${projectA.projectId}/sessions`);
    expect(res.status).toBe(401);
  });
});

describe('the per-user version 4 preview', () => {
  it('in dual with the opt-in, serves the version 4 pages only to a user who turned it on', async () => {
    const member = await signIn(dual.url, users.member);
    const owner = await signIn(dual.url, users.owner);
    const before = await request(member, 'GET', '/api/ui/session');
    expect(before.body.deployment).toMatchObject({
      v4Reads: false,
      readPath: { path: 'v3', canToggle: true },
    });
    const path = `/api/ui/projects/${projectA.projectId}/sessions`;
    const refused = await request(member, 'GET', path);
    expect(refused.status).toBe(404);
    expect(refused.body.message).toContain('version 4 preview');
    const turnOn = await request(member, 'PUT', '/api/ui/preferences/v4-preview', {
      body: { enabled: true },
      headers: { 'x-csrf-token': member.csrf },
    });
    expect(turnOn.status, JSON.stringify(turnOn.body)).toBe(200);
    const after = await request(member, 'GET', '/api/ui/session');
    expect(after.body.deployment).toMatchObject({ v4Reads: true, readPath: { path: 'v4', canToggle: true } });
    const served = await request(member, 'GET', path);
    expect(served.status).toBe(200);
    expect(served.body.data.map((r: Row) => r.id)).toEqual(
      expected(projectA.projectId, 'session').map((r) => r.id),
    );
    // The choice is the member's own: the owner still has the version 3 experience.
    expect((await request(owner, 'GET', path)).status).toBe(404);
    // It holds across sign-ins, and turns off again.
    const again = await signIn(dual.url, users.member);
    expect((await request(again, 'GET', path)).status).toBe(200);
    const turnOff = await request(again, 'PUT', '/api/ui/preferences/v4-preview', {
      body: { enabled: false },
      headers: { 'x-csrf-token': again.csrf },
    });
    expect(turnOff.status).toBe(200);
    expect((await request(again, 'GET', path)).status).toBe(404);
  });

  it('is refused where the deployment fixes the read path, naming why', async () => {
    for (const [url, why] of [
      [web.url, 'events_only has only the version 4 read path'],
      [legacy.url, 'legacy has only the version 3 read path'],
    ] as const) {
      const b = await signIn(url, users.owner);
      const r = await request(b, 'PUT', '/api/ui/preferences/v4-preview', {
        body: { enabled: true },
        headers: { 'x-csrf-token': b.csrf },
      });
      expect(r.status).toBe(409);
      expect(r.body.message).toContain(why);
    }
  });

  it('needs the CSRF token and a boolean', async () => {
    const b = await signIn(dual.url, users.owner);
    const noToken = await request(b, 'PUT', '/api/ui/preferences/v4-preview', { body: { enabled: true } });
    expect(noToken.status).toBe(403);
    const bad = await request(b, 'PUT', '/api/ui/preferences/v4-preview', {
      body: { enabled: 'yes' },
      headers: { 'x-csrf-token': b.csrf },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('enabled');
  });
});

describe('the background migrations page', () => {
  it('is for owners only', async () => {
    for (const who of [users.member, users.other]) {
      const b = await signIn(dual.url, who);
      expect((await request(b, 'GET', '/api/ui/migration')).status).toBe(403);
    }
  });

  it('shows the chain as the backfill records it, before and after a step runs', async () => {
    const b = await signIn(dual.url, users.owner);
    // A historic trace in the legacy tables gives step 1 something to read.
    const ingest = await fetch(`${dual.url}/api/public/ingestion`, {
      method: 'POST',
      headers: { authorization: basicAuth(projectA), 'content-type': 'application/json' },
      body: JSON.stringify({
        batch: [
          {
            id: 'ev-1',
            type: 'trace-create',
            timestamp: new Date().toISOString(),
            body: { id: 'historic-1', name: 'historic', timestamp: new Date(T0).toISOString() },
          },
        ],
      }),
    });
    expect(ingest.status).toBe(207);
    const before = await request(b, 'GET', '/api/ui/migration');
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body).toMatchObject({ release: '4', writeMode: 'dual', backfillMayRun: true });
    expect(before.body.steps.map((s: Row) => [s.step, s.status, s.chunksDone])).toEqual([
      [1, 'pending', 0],
      [2, 'pending', 0],
      [3, 'pending', 0],
      [4, 'pending', 0],
      [5, 'dormant', 0],
    ]);
    const run = await cli(['backfill', 'run', '--step', '1'], { ...stores.env, ...DUAL_ENV });
    expect(run.code, run.stderr).toBe(0);
    const after = await request(b, 'GET', '/api/ui/migration');
    const status = await cli(['backfill', 'status', '--json'], { ...stores.env, ...DUAL_ENV });
    const recorded = (JSON.parse(status.stdout) as { steps: Row[] }).steps;
    expect(after.body.steps).toEqual(recorded.map((s) => ({ ...s, retry: null })));
    expect(after.body.steps[0]).toMatchObject({ status: 'finished', failedReason: null });
    expect(after.body.steps[0].chunksDone).toBe(after.body.steps[0].chunksTotal);
    expect(after.body.steps[0].chunksTotal).toBeGreaterThan(0);
  });

  it('names the failure and the command that retries it', async () => {
    const b = await signIn(dual.url, users.owner);
    await stores.ch.client.command({ query: 'RENAME TABLE observations TO observations_away' });
    try {
      const run = await cli(['backfill', 'run', '--step', '2'], { ...stores.env, ...DUAL_ENV });
      expect(run.code).toBe(1);
    } finally {
      await stores.ch.client.command({ query: 'RENAME TABLE observations_away TO observations' });
    }
    const page = await request(b, 'GET', '/api/ui/migration');
    const step2 = page.body.steps[1];
    expect(step2.status).toBe('failed');
    expect(step2.failedReason).toContain('observations');
    expect(step2.retry).toEqual({
      command: 'observatory backfill retry --step 2',
      annotation: 'observatory.dev/retry-backfill',
      value: '2',
      kubectl: null,
    });
    // Under an operator the page names the object and its namespace.
    const operated = await request(await signIn(web.url, users.owner), 'GET', '/api/ui/migration');
    expect(operated.body.steps[1].retry.kubectl).toBe(
      'kubectl -n observability annotate obsvc/demo observatory.dev/retry-backfill=2 --overwrite',
    );
    // The command the page names is the one that clears the failure.
    const [cmd, ...args] = step2.retry.command.split(' ').slice(1);
    const retried = await cli([cmd, ...args], { ...stores.env, ...DUAL_ENV });
    expect(retried.code, retried.stderr).toBe(0);
    const after = await request(b, 'GET', '/api/ui/migration');
    expect(after.body.steps[1]).toMatchObject({ failedReason: null, retry: null });
  });
});

describe('trace totals', () => {
  it("the root row of the observations table and the trace view sum the trace's usage and cost", async () => {
    const calls = [
      { tokens: { input: 3, output: 4, total: 7 }, cost: 0.5 },
      { tokens: { input: 10, output: 1, total: 11 }, cost: 0.25 },
    ];
    const startMs = T0 + 500_000;
    let twoCalls = '';
    await withSdkTracer(projectA, web.url, () => {
      const root = startObservation('two-calls', { input: {} }, { startTime: new Date(startMs) });
      calls.forEach(({ tokens, cost }, i) => {
        const at = startMs + 10 * (i + 1);
        startObservation(
          'llm',
          { model: 'gpt-4o', usageDetails: tokens, costDetails: { total: cost } },
          { asType: 'generation', startTime: new Date(at), parentSpanContext: root.otelSpan.spanContext() },
        ).end(new Date(at + 5));
        sent.push({
          project: projectA.projectId,
          traceId: root.traceId,
          userId: '',
          sessionId: '',
          startMs: at,
          tokens,
          cost,
        });
      });
      root.end(new Date(startMs + 100));
      twoCalls = root.traceId;
    });
    // The model: per trace, the sums of what the SDK was asked to send.
    const want = new Map<string, { usageDetails: Record<string, number>; totalCost: number }>();
    for (const o of sent.filter((s) => s.project === projectA.projectId && s.tokens.total > 0)) {
      const t = want.get(o.traceId) ?? { usageDetails: { input: 0, output: 0, total: 0 }, totalCost: 0 };
      for (const k of ['input', 'output', 'total'] as const) t.usageDetails[k]! += o.tokens[k];
      t.totalCost += o.cost;
      want.set(o.traceId, t);
    }
    expect(want.get(twoCalls)).toEqual({
      usageDetails: { input: 13, output: 5, total: 18 },
      totalCost: 0.75,
    });

    const b = await signIn(web.url, users.member);
    const page = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/observations?limit=200`);
    expect(page.status).toBe(200);
    const roots = page.body.data.filter((r: Row) => r.isRootObservation);
    const shown = new Map(
      roots.map((r: Row) => [
        r.traceId,
        {
          ...r.traceTotals,
          totalCost: r.traceTotals.totalCost && Number(r.traceTotals.totalCost.toFixed(9)),
        },
      ]),
    );
    expect(new Map([...shown].filter(([id]) => want.has(id as string)))).toEqual(want);
    // The backfill test's historic trace carries no usage: its totals say so instead of 0.
    for (const [id, totals] of shown) {
      if (!want.has(id as string)) expect(totals).toEqual({ usageDetails: {}, totalCost: null });
    }
    expect(page.body.data.filter((r: Row) => !r.isRootObservation && r.traceTotals)).toEqual([]);

    const view = await request(b, 'GET', `/api/ui/projects/${projectA.projectId}/traces/${twoCalls}`);
    expect(view.body.totals).toEqual(want.get(twoCalls));
  });
});
