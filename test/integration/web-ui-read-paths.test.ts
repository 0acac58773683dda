/**
 * The web UI's two read paths and its dataset pages, through HTTP against `observatory web` on
 * real PostgreSQL, Redis and the ClickHouse engine, with data the real JS SDK (v5) sent:
 * - `dual` with the preview opt-in off gives every user the version 3 experience: the traces table
 *   and trace view over the legacy tables, and dataset runs linked through dataset-run-items;
 * - `events_only` gives only version 4: experiments of the SDK's experiment runner side by side;
 * - the migration page shows the propagation report the worker gives the operator and the
 *   producers `events_only` would refuse;
 * - no page and no `/api/ui` route of `events_only` reads a legacy table: the legacy tables are
 *   renamed away under the running services, every page and route still answers, while a
 *   version 3 route of the dual web now fails (the control that the rename hides them).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LangfuseClient } from '@langfuse/client';
import { propagateAttributes, startObservation } from '@langfuse/tracing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SentTrace, withSdkTracer } from '../fixtures/sdk-tracer.ts';
import {
  cli,
  createProject,
  DUAL_ENV,
  MODE_ENV,
  type Project,
  ROOT,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { type Browser, type Row, request, signIn } from '../fixtures/ui-client.ts';

let stores: Stores & Given<{ redis: true }>;
let dual: WebServer;
let eventsOnly: WebServer;
let worker: WebServer;
let project: Project;
const users = {} as Record<'owner' | 'viewer', { email: string; password: string }>;
const SDK_VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules/@langfuse/client/package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** A user with `role` in `of`, or in the deployment's organization (an owner there is a deployment admin). */
async function createUser(email: string, role: string, of: Project | 'deployment' = project) {
  const scope = of === 'deployment' ? [] : ['--project', of.projectId];
  const r = await cli(['create-user', '--email', email, '--json', ...scope, '--role', role], stores.env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim()) as { email: string; password: string };
}

const client = (web: WebServer) =>
  new LangfuseClient({ publicKey: project.publicKey, secretKey: project.secretKey, baseUrl: web.url });

/** Polls `probe` until it returns a value, for at most `ms`. */
async function eventually<T>(probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A stored value (JSON text or plain text) as the value the SDK was given. */
const parsed = (text: string | null) => {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const get = async (b: Browser, path: string) => {
  const r = await request(b, 'GET', path);
  expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

interface SentIo extends SentTrace {
  input: unknown;
  output: unknown;
}

/** Traces through the SDK's OpenTelemetry path, with trace-level input and output. */
function sendTraces(web: WebServer, specs: { name: string; input: unknown; output: unknown }[]) {
  return withSdkTracer(project, web.url, () =>
    specs.map((s, i) => {
      const attrs = { userId: `user-${i % 2}`, sessionId: `session-${i}`, tags: ['v3', `n${i}`] };
      return propagateAttributes(attrs, () => {
        const root = startObservation(s.name, { input: s.input });
        root.setTraceIO({ input: s.input, output: s.output });
        const gen = startObservation(
          'llm',
          { model: 'gpt-4o' },
          { asType: 'generation', parentSpanContext: root.otelSpan.spanContext() },
        );
        gen.update({ output: s.output });
        gen.end();
        root.update({ output: s.output });
        root.end();
        return { ...s, ...attrs, traceId: root.traceId, rootId: root.id, genId: gen.id } as SentIo;
      });
    }),
  );
}

beforeAll(async () => {
  stores = await startStores({ redis: true });
  const dualEnv = { ...stores.env, ...DUAL_ENV, SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: 'false' };
  dual = await startWeb(dualEnv);
  [eventsOnly, worker] = await Promise.all([
    startWeb({ ...stores.env, ...MODE_ENV.events_only }),
    startWorker({ ...dualEnv, SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1' }),
  ]);
  project = await createProject(stores.env, 'read-paths');
  users.owner = await createUser('owner@example.com', 'owner', 'deployment');
  users.viewer = await createUser('viewer@example.com', 'viewer');
});

afterAll(async () => {
  await stopStores(stores, dual, eventsOnly, worker);
});

describe('the version 3 experience (dual, preview opt-in off)', () => {
  let sent: SentIo[];
  beforeAll(async () => {
    sent = await sendTraces(dual, [
      { name: 'greet', input: { q: 'hello' }, output: 'hi there' },
      { name: 'sum', input: { a: 1, b: 2 }, output: { sum: 3 } },
    ]);
  });

  it('gives no choice and no version 4 page', async () => {
    const b = await signIn(dual.url, users.owner);
    const session = await get(b, '/api/ui/session');
    expect(session.deployment.readPath).toMatchObject({ path: 'v3', canToggle: false });
    const pref = await request(b, 'PUT', '/api/ui/preferences/v4-preview', {
      body: { enabled: true },
      headers: { 'x-csrf-token': b.csrf },
    });
    expect(pref.status).toBe(409);
    expect((await request(b, 'GET', `/api/ui/projects/${project.projectId}/observations`)).status).toBe(404);
  });

  it('lists the traces the SDK sent from the legacy tables', async () => {
    const b = await signIn(dual.url, users.viewer);
    const page = await get(b, `/api/ui/projects/${project.projectId}/legacy/traces`);
    const rows = page.data.map((r: Row) => ({
      traceId: r.traceId,
      name: r.name,
      userId: r.userId,
      sessionId: r.sessionId,
      tags: [...r.tags].sort(),
      isRootObservation: r.isRootObservation,
    }));
    const want = sent.map((s) => ({
      traceId: s.traceId,
      name: s.name,
      userId: s.userId,
      sessionId: s.sessionId,
      tags: [...s.tags].sort(),
      isRootObservation: true,
    }));
    expect(rows.sort((a: Row, c: Row) => a.name.localeCompare(c.name))).toEqual(want);
    const filtered = await get(b, `/api/ui/projects/${project.projectId}/legacy/traces?userId=user-1`);
    expect(filtered.data.map((r: Row) => r.name)).toEqual(['sum']);
  });

  it('lists the sessions and users of those traces from the legacy tables', async () => {
    const b = await signIn(dual.url, users.viewer);
    for (const [grouping, key, other, related] of [
      ['sessions', 'sessionId', 'userId', 'userIds'],
      ['users', 'userId', 'sessionId', 'sessionIds'],
    ] as const) {
      const page = await get(b, `/api/ui/projects/${project.projectId}/legacy/${grouping}`);
      const rows = page.data.map((r: Row) => [r.id, r.traceCount, r.observationCount, r[related]]);
      // Each trace is a root span and a generation: two observations.
      const want = sent.map((s) => [s[key], 1, 2, [s[other]]]);
      expect(rows.sort()).toEqual(want.sort());
    }
  });

  it('shows a trace as its tree: the trace, its root span, the generation', async () => {
    const b = await signIn(dual.url, users.viewer);
    const s = sent[1]!;
    const t = await get(b, `/api/ui/projects/${project.projectId}/legacy/traces/${s.traceId}`);
    expect(
      t.observations.map((o: Row) => [o.id, o.type, o.name, o.parentObservationId, parsed(o.output)]),
    ).toEqual([
      [s.traceId, 'TRACE', 'sum', null, s.output],
      [s.rootId, 'SPAN', 'sum', s.traceId, s.output],
      [s.genId, 'GENERATION', 'llm', s.rootId, s.output],
    ]);
    expect(parsed(t.observations[0].input)).toEqual(s.input);
    expect(t.observations[2].model).toBe('gpt-4o');
  });

  it('compares dataset runs linked through dataset-run-items, with their scores', async () => {
    const lf = client(dual);
    await lf.api.datasets.create({ name: 'capitals' });
    const items = [
      { id: 'fr', input: 'France', expectedOutput: 'Paris', metadata: { continent: 'Europe' } },
      { id: 'de', input: 'Germany', expectedOutput: 'Berlin', metadata: null },
    ];
    for (const it of items) await lf.api.datasetItems.create({ datasetName: 'capitals', ...it });
    // run-a answers both items (one wrong), run-b only France.
    const answers = { 'run-a': { fr: 'Paris', de: 'Bonn' }, 'run-b': { fr: 'Paris' } } as Record<
      string,
      Record<string, string>
    >;
    const results: Record<string, Record<string, { traceId: string; output: string; exact: number }>> = {};
    for (const [run, byItem] of Object.entries(answers)) {
      results[run] = {};
      const traces = await sendTraces(
        dual,
        Object.entries(byItem).map(([item, output]) => ({ name: `${run}-${item}`, input: item, output })),
      );
      for (const [i, [item, output]] of Object.entries(byItem).entries()) {
        const traceId = traces[i]!.traceId;
        await lf.api.datasetRunItems.create({ runName: run, datasetItemId: item, traceId });
        const exact = output === items.find((x) => x.id === item)!.expectedOutput ? 1 : 0;
        lf.score.create({ traceId, name: 'exact', value: exact });
        results[run]![item] = { traceId, output, exact };
      }
    }
    await lf.score.flush();

    const b = await signIn(dual.url, users.viewer);
    const list = await get(b, `/api/ui/projects/${project.projectId}/datasets`);
    expect(list.data.map((d: Row) => d.name)).toEqual(['capitals']);
    const ds = await get(b, `/api/ui/projects/${project.projectId}/datasets/${list.data[0].id}`);
    expect(
      ds.items.data.map((i: Row) => ({
        id: i.id,
        input: i.input,
        expectedOutput: i.expectedOutput,
        metadata: i.metadata,
      })),
    ).toEqual([...items].reverse());
    expect(ds.runs.map((r: Row) => r.name)).toEqual(['run-b', 'run-a']);
    const ids = ds.runs.map((r: Row) => r.id).reverse();
    const cmp = await eventually(async () => {
      const c = await get(
        b,
        `/api/ui/projects/${project.projectId}/datasets/${list.data[0].id}/compare?runs=${ids.join(',')}`,
      );
      const scored = c.rows
        .flatMap((r: Row) => r.results.filter(Boolean))
        .every((x: Row) => x.scores.length > 0);
      return scored ? c : undefined;
    });
    expect(cmp.runs.map((r: Row) => r.name)).toEqual(['run-a', 'run-b']);
    const view = cmp.rows.map((r: Row) => [
      r.item.id,
      r.results.map(
        (x: Row | null) =>
          x && {
            traceId: x.traceId,
            output: parsed(x.output),
            exact: x.scores.map((s: Row) => [s.name, s.value]),
          },
      ),
    ]);
    const want = [...items].reverse().map((it) => [
      it.id,
      ['run-a', 'run-b'].map((run) => {
        const r = results[run]![it.id];
        return r ? { traceId: r.traceId, output: r.output, exact: [['exact', r.exact]] } : null;
      }),
    ]);
    expect(view).toEqual(want);
    expect(cmp.means).toEqual([{ exact: 0.5 }, { exact: 1 }]);
  });
});

describe('version 4 only (events_only)', () => {
  it('compares two experiments the SDK runner wrote, item by item with their scores', async () => {
    const lf = client(eventsOnly);
    await lf.api.datasets.create({ name: 'quiz' });
    await lf.api.datasetItems.create({
      datasetName: 'quiz',
      id: 'q-fr',
      input: 'France',
      expectedOutput: 'Paris',
    });
    await lf.api.datasetItems.create({
      datasetName: 'quiz',
      id: 'q-de',
      input: 'Germany',
      expectedOutput: 'Berlin',
    });
    const dataset = await lf.dataset.get('quiz');
    const run = (runName: string, answer: (country: unknown) => string) =>
      withSdkTracer(
        project,
        eventsOnly.url,
        () =>
          dataset.runExperiment({
            name: 'quiz',
            runName,
            task: async (item) => answer(item.input),
            evaluators: [
              async ({ output, expectedOutput }) => ({
                name: 'exact',
                value: output === expectedOutput ? 1 : 0,
              }),
            ],
          }),
        { exportMode: 'immediate' },
      );
    const v1 = await run('v1', (c) => (c === 'France' ? 'Paris' : 'Bonn'));
    const v2 = await run('v2', (c) => (c === 'France' ? 'Paris' : 'Berlin'));

    const b = await signIn(eventsOnly.url, users.viewer);
    const session = await get(b, '/api/ui/session');
    expect(session.deployment.readPath).toMatchObject({ path: 'v4', canToggle: false });
    const list = await get(b, `/api/ui/projects/${project.projectId}/datasets`);
    const quiz = list.data.find((d: Row) => d.name === 'quiz');
    const ds = await get(b, `/api/ui/projects/${project.projectId}/datasets/${quiz.id}`);
    expect(ds.runs.map((r: Row) => [r.id, r.name, r.itemCount]).sort()).toEqual(
      [
        [v1.experimentId, 'v1', 2],
        [v2.experimentId, 'v2', 2],
      ].sort(),
    );
    const cmp = await eventually(async () => {
      const c = await get(
        b,
        `/api/ui/projects/${project.projectId}/datasets/${quiz.id}/compare?runs=${v1.experimentId},${v2.experimentId}`,
      );
      return c.rows.every((r: Row) => r.results.every((x: Row | null) => x && x.scores.length > 0))
        ? c
        : undefined;
    });
    const view = cmp.rows.map((r: Row) => [
      r.item.id,
      r.results.map((x: Row) => [parsed(x.output), x.scores.map((s: Row) => [s.name, s.value])]),
    ]);
    const byItem = (res: typeof v1, id: string) => {
      const r = res.itemResults.find((x) => (x.item as { id: string }).id === id)!;
      return [r.output, r.evaluations.map((e) => [e.name, e.value])];
    };
    expect(view).toEqual(['q-de', 'q-fr'].map((id) => [id, [byItem(v1, id), byItem(v2, id)]]));
    expect(cmp.means).toEqual([{ exact: 0.5 }, { exact: 1 }]);
  });
});

describe('migration page', () => {
  it('shows the propagation report the worker gives the operator', async () => {
    const b = await signIn(dual.url, users.owner);
    const page = await eventually(async () => {
      const m = await get(b, '/api/ui/migration');
      return m.propagation?.lastSuccessAt ? m : undefined;
    });
    const health = await (await fetch(`${worker.url}/api/health?failIfEventPropagationStuck=true`)).json();
    expect(page.propagation).toMatchObject({ enabled: true, stuck: false, thresholdSeconds: 15 * 60 });
    expect(health.eventPropagation.enabled).toBe(true);
    // Both read one record: the web's report can only trail the worker's by the runs in between.
    expect(Date.parse(health.eventPropagation.lastSuccessAt)).toBeGreaterThanOrEqual(
      Date.parse(page.propagation.lastSuccessAt),
    );
  });

  it('names the producers events_only would refuse, with what to change', async () => {
    const lf = client(dual);
    await lf.api.ingestion.batch({
      batch: [
        {
          id: 'evt-1',
          type: 'trace-create',
          timestamp: new Date().toISOString(),
          body: { id: 'batch-trace-1', name: 'from-batch' },
        },
      ],
    });
    const b = await signIn(dual.url, users.owner);
    const producer = await eventually(async () => {
      const m = await get(b, '/api/ui/migration');
      return m.producers.data.find((p: Row) => p.path === 'ingestion-api');
    });
    expect(producer).toMatchObject({
      projectId: project.projectId,
      publicKey: project.publicKey,
      sdkName: 'javascript',
      sdkVersion: SDK_VERSION,
      consequence: 'refused',
    });
    expect(producer.advice).toMatch(/events_only refuses/);
    const viewer = await signIn(dual.url, users.viewer);
    expect((await request(viewer, 'GET', '/api/ui/migration')).status).toBe(403);
  });

  it("shows a project owner their projects' producers and nothing of the deployment", async () => {
    const other = await createProject(stores.env, 'read-paths-other');
    const otherOwner = await createUser('other-owner@example.com', 'owner', other);
    const batch = (id: string) => ({
      batch: [{ id, type: 'trace-create' as const, timestamp: new Date().toISOString(), body: { id } }],
    });
    await client(dual).api.ingestion.batch(batch('leak-a'));
    const otherClient = new LangfuseClient({
      publicKey: other.publicKey,
      secretKey: other.secretKey,
      baseUrl: dual.url,
    });
    await otherClient.api.ingestion.batch(batch('leak-b'));
    const admin = await signIn(dual.url, users.owner);
    const keysOf = (m: Row) => new Set(m.producers.data.map((p: Row) => p.publicKey));
    // The deployment admin sees both projects' producers once the recorder has flushed them.
    await eventually(async () => {
      const keys = keysOf(await get(admin, '/api/ui/migration'));
      return keys.has(project.publicKey) && keys.has(other.publicKey) ? true : undefined;
    });
    const b = await signIn(dual.url, otherOwner);
    const page = await get(b, '/api/ui/migration');
    expect(page).toMatchObject({ deploymentAdmin: false, steps: null, propagation: null, writeMode: 'dual' });
    expect(page.producers.data.map((p: Row) => [p.projectId, p.publicKey])).toEqual(
      page.producers.data.map(() => [other.projectId, other.publicKey]),
    );
    expect(keysOf(page)).toEqual(new Set([other.publicKey]));
  });
});

describe('events_only reads no legacy table', () => {
  it('answers every page and /api/ui route with the legacy tables renamed away', async () => {
    const b = await signIn(eventsOnly.url, users.owner);
    const p = `/api/ui/projects/${project.projectId}`;
    const trace = (await get(b, `${p}/observations?limit=1&filter=[]`)).data[0];
    const quiz = (await get(b, `${p}/datasets`)).data.find((d: Row) => d.name === 'quiz');
    const runs = (await get(b, `${p}/datasets/${quiz.id}`)).runs.map((r: Row) => r.id).join(',');
    const dualOwner = await signIn(dual.url, users.owner);

    const existing = (
      await (
        await stores.ch.client.query({
          query:
            "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('traces', 'observations', 'dataset_run_items_rmt')",
          format: 'JSONEachRow',
        })
      ).json<{ name: string }>()
    ).map((t) => t.name);
    expect(existing).toContain('traces');
    for (const t of existing)
      await stores.ch.client.command({ query: `RENAME TABLE ${t} TO ${t}_hidden_by_test` });

    // The control: the version 3 pages of the dual web need them.
    for (const path of ['traces', 'sessions', 'users']) {
      expect((await request(dualOwner, 'GET', `${p}/legacy/${path}`)).status, path).toBe(500);
    }

    const reads = [
      '/api/ui/session',
      '/api/ui/projects',
      p,
      `${p}/observations`,
      `${p}/observations?search=Paris`,
      `${p}/observations?filter=${encodeURIComponent(JSON.stringify([{ type: 'string', column: 'name', operator: '=', value: 'quiz' }]))}`,
      `${p}/traces/${trace.traceId}`,
      `${p}/sessions`,
      `${p}/users`,
      `${p}/datasets`,
      `${p}/datasets/${quiz.id}`,
      `${p}/datasets/${quiz.id}/compare?runs=${runs}`,
      '/api/ui/migration',
    ];
    for (const path of reads) await get(b, path);
    const write = (path: string, body: unknown) =>
      request(b, 'POST', path, { body, headers: { 'x-csrf-token': b.csrf } });
    expect((await write(`${p}/scores`, { traceId: trace.traceId, name: 'ok', value: 1 })).status).toBe(200);
    const comment = await write(`${p}/comments`, {
      objectType: 'TRACE',
      objectId: trace.traceId,
      content: 'fine',
    });
    expect(comment.status, JSON.stringify(comment.body)).toBe(200);
    // The version 3 routes are not served at all here: 404, not a failed read.
    for (const path of ['traces', `traces/${trace.traceId}`, 'sessions', 'users']) {
      expect((await request(b, 'GET', `${p}/legacy/${path}`)).status, path).toBe(404);
    }
    for (const page of [
      '/',
      `/project/${project.projectId}/observations`,
      `/project/${project.projectId}/sessions`,
      `/project/${project.projectId}/users`,
      `/project/${project.projectId}/datasets`,
      '/migration',
    ]) {
      const res = await fetch(`${eventsOnly.url}${page}`);
      expect(res.status, page).toBe(200);
      expect(await res.text()).toContain('<div id="root">');
    }
  });
});
