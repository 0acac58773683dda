/**
 * The public API surface the SDKs call besides tracing, in every write mode, against
 * `observatory web` on real PostgreSQL and the ClickHouse engine: projects with their
 * organization, dataset items with explicit nulls, score writes and deletes (read back through
 * scores v3 and the legacy reads), score configs and the checks they impose, prompt management,
 * and comments. Each family is driven by raw HTTP and by a real SDK (`langfuse` 3.x,
 * `@langfuse/client` 5.x), and checked through the server's read APIs; another project's key
 * sees and changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { LangfuseClient } from '@langfuse/client';
import { Langfuse } from 'langfuse';
import { beforeAll, describe, expect, it } from 'vitest';
import { callApi, MODES, modeWebsForSuite } from '../fixtures/mode-webs.ts';
import { basicAuth, type Mode, type Project } from '../fixtures/service.ts';

const env = modeWebsForSuite('api');
const { webs, projects } = env;
let other: Project;
beforeAll(() => {
  other = env.other;
});

const hex = (n: number) => randomBytes(n).toString('hex');

const call = (mode: Mode, method: string, path: string, body?: unknown, p: Project = projects[mode]) =>
  callApi(webs[mode], p, method, path, body);

const client5 = (mode: Mode, p: Project = projects[mode]) =>
  new LangfuseClient({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: webs[mode].url });
const client3 = (mode: Mode, p: Project = projects[mode]) =>
  new Langfuse({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: webs[mode].url, flushAt: 1 });

describe('projects', () => {
  it.each(MODES)('%s: the key’s project with its organization, as the SDK model requires', async (mode) => {
    const res = await client5(mode).api.projects.get();
    expect(res.data).toEqual([
      {
        id: projects[mode].projectId,
        name: `api-${mode}`,
        organization: { id: 'default', name: 'Default organization' },
        metadata: {},
      },
    ]);
  });
});

describe('dataset items', () => {
  it.each(MODES)('%s: accepts the explicit nulls every SDK sends', async (mode) => {
    expect(
      (
        await call(mode, 'POST', '/api/public/datasets', {
          name: 'imports',
          description: null,
          metadata: null,
        })
      ).status,
    ).toBe(200);
    const created = await call(mode, 'POST', '/api/public/dataset-items', {
      datasetName: 'imports',
      id: `row-${mode}`,
      input: { q: 1 },
      expectedOutput: null,
      metadata: null,
      sourceTraceId: null,
      sourceObservationId: null,
      status: null,
    });
    expect(created.status).toBe(200);
    const read = await call(mode, 'GET', `/api/public/dataset-items/row-${mode}`);
    expect(read.body).toMatchObject({
      id: `row-${mode}`,
      status: 'ACTIVE',
      input: { q: 1 },
      expectedOutput: null,
      metadata: null,
      sourceTraceId: null,
      datasetName: 'imports',
    });
    expect((await call(mode, 'GET', `/api/public/dataset-items/row-${mode}`, undefined, other)).status).toBe(
      404,
    );
  });

  it('langfuse 3.x createDataset / createDatasetItem land as the reads show', async () => {
    const lf = client3('events_only');
    await lf.createDataset({ name: 'sdk3-ds' });
    const item = await lf.createDatasetItem({ datasetName: 'sdk3-ds', input: { a: 1 }, id: 'sdk3-item' });
    expect(item.id).toBe('sdk3-item');
    await lf.shutdownAsync();
    const read = await call('events_only', 'GET', '/api/public/dataset-items?datasetName=sdk3-ds');
    expect(read.body.data?.map((i) => [i['id'], i['input'], i['status']])).toEqual([
      ['sdk3-item', { a: 1 }, 'ACTIVE'],
    ]);
  });
});

async function v3Scores(mode: Mode, query: string, p: Project = projects[mode]) {
  const res = await call(mode, 'GET', `/api/public/v3/scores?fields=details&${query}`, undefined, p);
  expect(res.status).toBe(200);
  return res.body.data!;
}

describe('scores', () => {
  it.each(MODES)(
    '%s: one score and an array (as Python SDK 5.x sends) reach the reads; delete removes',
    async (mode) => {
      const traceId = hex(16);
      const single = await call(mode, 'POST', '/api/public/scores', {
        id: `s1-${mode}`,
        traceId,
        name: 'accuracy',
        value: 0.9,
        comment: 'good',
        environment: 'default',
      });
      expect(single).toEqual({ status: 200, body: { id: `s1-${mode}` } });
      const batch = await call(mode, 'POST', '/api/public/scores', [
        {
          id: `s2-${mode}`,
          traceId,
          name: 'helpful',
          value: 1,
          dataType: 'BOOLEAN',
          timestamp: new Date().toISOString(),
        },
        { id: `s3-${mode}`, traceId, name: 'label', value: 'yes', dataType: 'CATEGORICAL' },
      ]);
      expect(batch).toEqual({ status: 202, body: { message: 'Accepted' } });
      const partial = await call(mode, 'POST', '/api/public/scores', [
        { id: `s4-${mode}`, traceId, name: 'ok', value: 2 },
        { id: `s5-${mode}`, traceId, name: 'bad', value: 'x', dataType: 'NUMERIC' },
        { id: `s6-${mode}`, name: 'orphan', value: 1 },
        { id: `s7-${mode}`, traceId, name: 'naive', value: 1, timestamp: '2026-01-01T10:00:00' },
      ]);
      expect(partial.status).toBe(207);
      expect(partial.body).toMatchObject({ accepted: 1, rejected: 3 });
      expect((partial.body['errors'] as { message: string }[]).map((e) => e.message)).toEqual([
        'value: NUMERIC scores need a number value',
        'traceId: one of traceId, sessionId, datasetRunId is required',
        'timestamp: must be an ISO 8601 date-time with a UTC offset',
      ]);
      const bad = await call(mode, 'POST', '/api/public/scores', {
        traceId,
        name: 'n',
        value: 1,
        source: 'EVAL',
      });
      expect(bad.status).toBe(400);
      expect(bad.body['message']).toContain('source');

      const rows = await v3Scores(mode, `traceId=${traceId}`);
      expect(rows.map((r) => [r['id'], r['name'], r['value'], r['dataType']]).sort()).toEqual([
        [`s1-${mode}`, 'accuracy', 0.9, 'NUMERIC'],
        [`s2-${mode}`, 'helpful', true, 'BOOLEAN'],
        [`s3-${mode}`, 'label', 'yes', 'CATEGORICAL'],
        [`s4-${mode}`, 'ok', 2, 'NUMERIC'],
      ]);
      if (mode !== 'events_only') {
        const legacy = await call(mode, 'GET', `/api/public/scores/s1-${mode}`);
        expect(legacy.body).toMatchObject({
          id: `s1-${mode}`,
          name: 'accuracy',
          value: 0.9,
          comment: 'good',
        });
      }

      expect((await call(mode, 'DELETE', `/api/public/scores/s1-${mode}`, undefined, other)).status).toBe(
        404,
      );
      expect((await v3Scores(mode, `id=s1-${mode}`, other)).length).toBe(0);
      expect((await call(mode, 'DELETE', `/api/public/scores/s1-${mode}`)).status).toBe(202);
      expect((await v3Scores(mode, `traceId=${traceId}`)).map((r) => r['id']).sort()).toEqual([
        `s2-${mode}`,
        `s3-${mode}`,
        `s4-${mode}`,
      ]);
      expect((await call(mode, 'DELETE', `/api/public/scores/s1-${mode}`)).status).toBe(404);
    },
  );

  it('@langfuse/client 5.x api.scores.create and api.scores.delete, read through scores v3', async () => {
    const lf = client5('events_only');
    const traceId = hex(16);
    const { id } = await lf.api.scores.create({ traceId, name: 'sdk-score', value: 0.25 });
    const rows = await v3Scores('events_only', `id=${id}`);
    expect(rows.map((r) => [r['name'], r['value']])).toEqual([['sdk-score', 0.25]]);
    await lf.api.legacy.scoreV1.delete(id);
    expect(await v3Scores('events_only', `id=${id}`)).toEqual([]);
  });
});

describe('score configs', () => {
  it.each(MODES)(
    '%s: configs are created, listed and fetched; scores naming one are checked against it',
    async (mode) => {
      const numeric = await call(mode, 'POST', '/api/public/score-configs', {
        name: 'quality',
        dataType: 'NUMERIC',
        minValue: 0,
        maxValue: 1,
        description: null,
      });
      expect(numeric.status).toBe(200);
      const cat = await call(mode, 'POST', '/api/public/score-configs', {
        name: 'tone',
        dataType: 'CATEGORICAL',
        categories: [
          { label: 'friendly', value: 1 },
          { label: 'rude', value: 0 },
        ],
      });
      const bool = await call(mode, 'POST', '/api/public/score-configs', {
        name: 'correct',
        dataType: 'BOOLEAN',
      });
      expect(bool.body['categories']).toEqual([
        { value: 1, label: 'True' },
        { value: 0, label: 'False' },
      ]);
      const refused = await call(mode, 'POST', '/api/public/score-configs', {
        name: 'x',
        dataType: 'CATEGORICAL',
      });
      expect(refused.status).toBe(400);
      expect(String(refused.body['error'])).toContain('categories');

      const traceId = hex(16);
      const score = (body: Record<string, unknown>) =>
        call(mode, 'POST', '/api/public/scores', { traceId, name: 'checked', ...body });
      const tooHigh = await score({ value: 1.5, configId: numeric.body['id'] });
      expect(tooHigh.status).toBe(400);
      expect(tooHigh.body['message']).toMatch(/^value: 1.5 is above the maximum 1 of score config/);
      const wrongType = await score({ value: 'friendly', dataType: 'TEXT', configId: cat.body['id'] });
      expect(wrongType.body['message']).toMatch(/^dataType: TEXT does not match the data type CATEGORICAL/);
      expect((await score({ value: 'grumpy', configId: cat.body['id'] })).status).toBe(400);
      expect((await score({ value: 0.5, configId: `missing-${mode}` })).body['message']).toContain(
        'not found',
      );
      const ok = await score({ id: `cfg-${mode}`, value: 'friendly', configId: cat.body['id'] });
      expect(ok.status).toBe(200);
      const [row] = await v3Scores(mode, `id=cfg-${mode}`);
      expect(row).toMatchObject({ dataType: 'CATEGORICAL', value: 'friendly', configId: cat.body['id'] });

      const list = await call(mode, 'GET', '/api/public/score-configs?limit=2');
      expect(list.body['meta']).toEqual({ page: 1, limit: 2, totalItems: 3, totalPages: 2 });
      expect(list.body.data?.map((c) => c['name'])).toEqual(['correct', 'tone']);
      const got = await call(mode, 'GET', `/api/public/score-configs/${numeric.body['id']}`);
      expect(got.body).toMatchObject({
        name: 'quality',
        dataType: 'NUMERIC',
        minValue: 0,
        maxValue: 1,
        isArchived: false,
      });
      expect(
        (await call(mode, 'GET', `/api/public/score-configs/${numeric.body['id']}`, undefined, other)).status,
      ).toBe(404);
      const stranger = await call(
        mode,
        'POST',
        '/api/public/scores',
        { traceId, name: 'x', value: 0.5, configId: numeric.body['id'] },
        other,
      );
      expect(stranger.body['message']).toContain('not found');
    },
  );

  it('@langfuse/client 5.x api.scoreConfigs.create / get / list', async () => {
    const lf = client5('dual');
    const created = await lf.api.scoreConfigs.create({
      name: 'sdk config',
      dataType: 'NUMERIC',
      minValue: 1,
    });
    expect(await lf.api.scoreConfigs.getById(created.id)).toMatchObject({ name: 'sdk config', minValue: 1 });
    const listed = await lf.api.scoreConfigs.get({ limit: 100 });
    expect(listed.data.map((c) => c.id)).toContain(created.id);
    const read = await call('dual', 'GET', `/api/public/score-configs/${created.id}`);
    expect(read.body['name']).toBe('sdk config');
  });
});

describe('prompts', () => {
  it.each(MODES)(
    '%s: versions per name, labels on one version at a time, latest, folders, list, 404',
    async (mode) => {
      const create = (body: Record<string, unknown>) => call(mode, 'POST', '/api/public/v2/prompts', body);
      const v1 = await create({
        name: 'team/greet',
        prompt: 'Hi {{name}}',
        labels: ['production'],
        config: { t: 0 },
        tags: ['a'],
      });
      expect(v1.status).toBe(200);
      expect(v1.body).toMatchObject({
        name: 'team/greet',
        version: 1,
        type: 'text',
        labels: ['production', 'latest'],
        tags: ['a'],
      });
      const v2 = await create({
        name: 'team/greet',
        type: 'text',
        prompt: 'Hello {{name}}',
        labels: ['staging'],
        commitMessage: 'warmer',
      });
      expect(v2.body).toMatchObject({
        version: 2,
        labels: ['staging', 'latest'],
        tags: ['a'],
        commitMessage: 'warmer',
        config: {},
      });
      const enc = encodeURIComponent('team/greet');
      expect((await call(mode, 'GET', `/api/public/v2/prompts/${enc}`)).body).toMatchObject({
        version: 1,
        prompt: 'Hi {{name}}',
      });
      expect((await call(mode, 'GET', `/api/public/v2/prompts/${enc}?label=latest`)).body['version']).toBe(2);
      expect((await call(mode, 'GET', `/api/public/v2/prompts/${enc}?version=1`)).body['labels']).toEqual([
        'production',
      ]);

      const moved = await call(mode, 'PATCH', `/api/public/v2/prompts/${enc}/versions/2`, {
        newLabels: ['production'],
      });
      expect(moved.body['labels']).toEqual(['staging', 'latest', 'production']);
      expect((await call(mode, 'GET', `/api/public/v2/prompts/${enc}?version=1`)).body['labels']).toEqual([]);
      expect((await call(mode, 'GET', `/api/public/v2/prompts/${enc}`)).body['version']).toBe(2);
      expect(
        (await call(mode, 'PATCH', `/api/public/v2/prompts/${enc}/versions/2`, { newLabels: ['latest'] }))
          .status,
      ).toBe(400);
      expect(
        (await call(mode, 'PATCH', `/api/public/v2/prompts/${enc}/versions/9`, { newLabels: ['x'] })).status,
      ).toBe(404);

      const chat = await create({
        name: 'chat-bot',
        type: 'chat',
        prompt: [
          { role: 'system', content: 'Be brief' },
          { type: 'placeholder', name: 'history' },
        ],
      });
      expect(chat.body).toMatchObject({ version: 1, type: 'chat', labels: ['latest'] });
      expect((await create({ name: 'bad', type: 'chat', prompt: 'not a list' })).status).toBe(400);

      const missing = await call(mode, 'GET', '/api/public/v2/prompts/chat-bot');
      expect(missing).toEqual({
        status: 404,
        body: { message: "Prompt not found: 'chat-bot' with label 'production'" },
      });
      const list = await call(mode, 'GET', '/api/public/v2/prompts?limit=10');
      expect(list.body['meta']).toEqual({ page: 1, limit: 10, totalItems: 2, totalPages: 1 });
      const greet = list.body.data?.find((p) => p['name'] === 'team/greet');
      expect(greet).toMatchObject({
        type: 'text',
        versions: [1, 2],
        labels: ['latest', 'production', 'staging'],
        tags: ['a'],
        lastConfig: {},
      });
      const byLabel = await call(mode, 'GET', '/api/public/v2/prompts?label=staging');
      expect(byLabel.body.data?.map((p) => [p['name'], p['versions']])).toEqual([['team/greet', [2]]]);

      expect((await call(mode, 'GET', `/api/public/v2/prompts/${enc}`, undefined, other)).status).toBe(404);
      expect(
        (await call(mode, 'PATCH', `/api/public/v2/prompts/${enc}/versions/1`, { newLabels: ['x'] }, other))
          .status,
      ).toBe(404);
      expect((await call(mode, 'GET', '/api/public/v2/prompts', undefined, other)).body.data).toEqual([]);
    },
  );

  it('folder names sent with bare slashes (Python SDK 2.x quotes names keeping `/`) reach the same prompt', async () => {
    const create = (prompt: string) =>
      call('legacy', 'POST', '/api/public/v2/prompts', { name: 'a/b/c', prompt, labels: ['production'] });
    await create('one');
    await create('two');
    expect((await call('legacy', 'GET', '/api/public/v2/prompts/a/b/c?version=1')).body['prompt']).toBe(
      'one',
    );
    const patched = await call('legacy', 'PATCH', '/api/public/v2/prompts/a/b/c/versions/1', {
      newLabels: ['production'],
    });
    expect(patched.body).toMatchObject({ name: 'a/b/c', version: 1, labels: ['production'] });
    const encoded = await call('legacy', 'GET', `/api/public/v2/prompts/${encodeURIComponent('a/b/c')}`);
    expect(encoded.body).toMatchObject({ version: 1, prompt: 'one' });
    expect((await call('legacy', 'GET', '/api/public/v2/prompts/a/b/x')).status).toBe(404);
    expect(
      (await call('legacy', 'PATCH', '/api/public/v2/prompts/a/b/c/versions/0', { newLabels: ['x'] })).status,
    ).toBe(400);
  });

  it('concurrent creates of one name get consecutive versions and one latest', async () => {
    const all = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call('dual', 'POST', '/api/public/v2/prompts', { name: 'race', prompt: `p${i}` }),
      ),
    );
    expect(all.map((r) => r.body['version']).sort((a, b) => Number(a) - Number(b))).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
    const list = await call('dual', 'GET', '/api/public/v2/prompts?name=race');
    expect(list.body.data?.[0]).toMatchObject({ versions: [1, 2, 3, 4, 5, 6, 7, 8], labels: ['latest'] });
  });

  it('langfuse 3.x createPrompt / getPrompt / updatePrompt', async () => {
    const lf = client3('legacy');
    await lf.createPrompt({
      name: 'sdk3/prompt',
      prompt: 'one {{x}}',
      labels: ['production'],
      config: { model: 'm' },
    });
    await lf.createPrompt({ name: 'sdk3/prompt', prompt: 'two {{x}}', labels: [] });
    const prod = await lf.getPrompt('sdk3/prompt', undefined, { cacheTtlSeconds: 0 });
    expect([prod.version, prod.prompt, prod.compile({ x: 'y' }), prod.config]).toEqual([
      1,
      'one {{x}}',
      'one y',
      { model: 'm' },
    ]);
    const latest = await lf.getPrompt('sdk3/prompt', undefined, { label: 'latest', cacheTtlSeconds: 0 });
    expect(latest.version).toBe(2);
    await lf.updatePrompt({ name: 'sdk3/prompt', version: 2, newLabels: ['production'] });
    const read = await call('legacy', 'GET', `/api/public/v2/prompts/${encodeURIComponent('sdk3/prompt')}`);
    expect(read.body['version']).toBe(2);
    await lf.shutdownAsync();
  });

  it('@langfuse/client 5.x prompt.create / get, chat prompts with placeholders', async () => {
    const lf = client5('events_only');
    await lf.prompt.create({
      name: 'sdk5-chat',
      type: 'chat',
      prompt: [
        { role: 'system', content: 'You help {{who}}' },
        { type: 'placeholder', name: 'history' },
      ],
      labels: ['production'],
    });
    const got = await lf.prompt.get('sdk5-chat', { type: 'chat', cacheTtlSeconds: 0 });
    expect(got.version).toBe(1);
    expect(got.compile({ who: 'me' }, { history: [{ role: 'user', content: 'hi' }] })).toEqual([
      { role: 'system', content: 'You help me' },
      { role: 'user', content: 'hi' },
    ]);
    const read = await call('events_only', 'GET', '/api/public/v2/prompts?name=sdk5-chat');
    expect(read.body.data?.[0]).toMatchObject({
      type: 'chat',
      versions: [1],
      labels: ['latest', 'production'],
    });
  });
});

/** OTLP/JSON spans: a root span (with a session) and a child, as the OTel SDKs export them. */
function otlpTrace(traceId: string, rootId: string, childId: string, sessionId: string) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const span = (spanId: string, parentSpanId?: string) => ({
    traceId,
    spanId,
    ...(parentSpanId ? { parentSpanId } : {}),
    name: spanId,
    kind: 1,
    startTimeUnixNano: `${now}`,
    endTimeUnixNano: `${now + 1_000_000n}`,
    attributes: [{ key: 'langfuse.session.id', value: { stringValue: sessionId } }],
  });
  return {
    resourceSpans: [
      { scopeSpans: [{ scope: { name: 'langfuse-sdk' }, spans: [span(rootId), span(childId, rootId)] }] },
    ],
  };
}

/** A trace with one child observation in a session, through the mode's own write path. */
async function seedTrace(mode: Mode, traceId: string, rootId: string, childId: string, sessionId: string) {
  if (mode === 'events_only') {
    const res = await fetch(`${webs[mode].url}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: {
        authorization: basicAuth(projects[mode]),
        'content-type': 'application/json',
        'x-langfuse-ingestion-version': '4',
      },
      body: JSON.stringify(otlpTrace(traceId, rootId, childId, sessionId)),
    });
    expect(res.status).toBe(200);
    return;
  }
  const at = new Date().toISOString();
  const res = await call(mode, 'POST', '/api/public/ingestion', {
    batch: [
      { id: hex(8), type: 'trace-create', timestamp: at, body: { id: traceId, sessionId } },
      { id: hex(8), type: 'span-create', timestamp: at, body: { id: childId, traceId } },
    ],
  });
  expect(res.status).toBe(207);
  expect(res.body['errors']).toEqual([]);
}

describe('comments', () => {
  it.each(MODES)('%s: created on each object type, listed and fetched, project-scoped', async (mode) => {
    const traceId = hex(16);
    const childId = hex(8);
    const sessionId = `sess-${hex(4)}`;
    await seedTrace(mode, traceId, hex(8), childId, sessionId);
    const prompt = await call(mode, 'POST', '/api/public/v2/prompts', {
      name: `commented-${mode}`,
      prompt: 'p',
    });
    const made: string[] = [];
    for (const [objectType, objectId] of [
      ['trace', traceId],
      ['OBSERVATION', childId],
      ['SESSION', sessionId],
      ['PROMPT', String(prompt.body['id'])],
    ]) {
      const res = await call(mode, 'POST', '/api/public/comments', {
        projectId: other.projectId,
        objectType,
        objectId,
        content: `on ${objectId}`,
        authorUserId: null,
      });
      expect(res.status).toBe(200);
      made.push(String(res.body['id']));
    }
    const got = await call(mode, 'GET', `/api/public/comments/${made[0]}`);
    expect(got.body).toMatchObject({
      id: made[0],
      projectId: projects[mode].projectId,
      objectType: 'TRACE',
      objectId: traceId,
      content: `on ${traceId}`,
      authorUserId: null,
    });
    const onSession = await call(
      mode,
      'GET',
      `/api/public/comments?objectType=session&objectId=${sessionId}`,
    );
    expect(onSession.body.data?.map((c) => c['id'])).toEqual([made[2]]);
    const prompts = await call(mode, 'GET', '/api/public/comments?objectType=PROMPT');
    expect(prompts.body.data?.map((c) => c['id'])).toEqual([made[3]]);
    expect((await call(mode, 'GET', `/api/public/comments?objectId=${sessionId}`)).status).toBe(400);
    const refusals = [
      { objectType: 'DATASET', objectId: 'x', content: 'c' },
      { objectType: 'TRACE', objectId: traceId, content: '' },
    ];
    for (const body of refusals)
      expect((await call(mode, 'POST', '/api/public/comments', body)).status).toBe(400);
    const missing = await call(mode, 'POST', '/api/public/comments', {
      objectType: 'TRACE',
      objectId: hex(16),
      content: 'c',
    });
    expect(missing.status).toBe(404);
    expect(missing.body['message']).toMatch(/^objectId: no trace /);
    // A historic trace's virtual root span shows the trace's comments.
    const onRoot = await call(
      mode,
      'GET',
      `/api/public/comments?objectType=OBSERVATION&objectId=t-${traceId}`,
    );
    expect(onRoot.body.data?.map((c) => c['id'])).toEqual([made[0]]);

    expect((await call(mode, 'GET', `/api/public/comments/${made[0]}`, undefined, other)).status).toBe(404);
    expect((await call(mode, 'GET', '/api/public/comments', undefined, other)).body.data).toEqual([]);
    const foreign = { objectType: 'TRACE', objectId: traceId, content: 'from elsewhere' };
    expect((await call(mode, 'POST', '/api/public/comments', foreign, other)).status).toBe(404);
  });

  it('a trace comment is listed for the trace’s root observation (OTLP trace, events_only), via @langfuse/client 5.x', async () => {
    const traceId = hex(16);
    const rootId = hex(8);
    const childId = hex(8);
    await seedTrace('events_only', traceId, rootId, childId, `sess-${hex(4)}`);
    const lf = client5('events_only');
    const { id } = await lf.api.comments.create({
      projectId: projects.events_only.projectId,
      objectType: 'TRACE',
      objectId: traceId,
      content: 'looks wrong',
    });
    const onRoot = await lf.api.comments.get({ objectType: 'OBSERVATION', objectId: rootId });
    expect(onRoot.data.map((c) => [c.id, c.objectType, c.objectId])).toEqual([[id, 'TRACE', traceId]]);
    const onChild = await call(
      'events_only',
      'GET',
      `/api/public/comments?objectType=OBSERVATION&objectId=${childId}`,
    );
    expect(onChild.body.data).toEqual([]);
    expect((await lf.api.comments.getById(id)).content).toBe('looks wrong');
  });
});
