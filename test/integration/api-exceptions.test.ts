/**
 * Requests the reference answers with a 4xx (or a documented status) that once made this server
 * answer 500 or another status, in every write mode: date parameters that are not ISO 8601 dates,
 * numbers beyond what the stores hold, NUL bytes in names, undeclared methods (405), score deletes
 * (202 with a message) and score config updates (PATCH); dataset versions and run items linked by
 * an observation alone through the JS SDK and raw HTTP, and through the Python SDKs that send them.
 */
import { randomBytes } from 'node:crypto';
import { LangfuseClient } from '@langfuse/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPython } from '../conformance/env.ts';
import { ensurePythonSdk } from '../conformance/python-sdks.ts';
import { callApi, MODES, modeWebsForSuite } from '../fixtures/mode-webs.ts';
import type { Mode } from '../fixtures/service.ts';

const env = modeWebsForSuite('exceptions');
const { webs, projects } = env;
const hex = (n: number) => randomBytes(n).toString('hex');
const call = (mode: Mode, method: string, path: string, body?: unknown) =>
  callApi(webs[mode], projects[mode], method, path, body);

const notDates = ['0.5', '1', '2024', 'May 5 2024', '2024-13-01T00:00:00Z', '1800-01-01T00:00:00Z', ''];

describe.each(MODES)('%s', (mode) => {
  it.each([
    '/api/public/v2/prompts?toUpdatedAt=',
    '/api/public/v3/scores?fromTimestamp=',
    '/api/public/traces?fromTimestamp=',
    '/api/public/observations?fromStartTime=',
    '/api/public/sessions?toTimestamp=',
  ])('%s<not a date> answers 400 naming the parameter', async (prefix) => {
    const param = /[?&](\w+)=$/.exec(prefix)![1]!;
    for (const bad of notDates) {
      const res = await call(mode, 'GET', `${prefix}${encodeURIComponent(bad)}`);
      if (res.status === 404 && mode === 'events_only') return; // a legacy read, gone after cutover
      expect(res.status, `${param}=${bad}`).toBe(400);
      expect(JSON.stringify(res.body)).toContain(param);
    }
  });

  it('accepts the ISO 8601 forms the SDKs send', async () => {
    for (const good of [
      '2024-05-01T10:00:00Z',
      '2024-05-01T10:00:00.123+02:00',
      '2024-05-01T10:00:00.123456',
    ]) {
      const res = await call(mode, 'GET', `/api/public/v2/prompts?toUpdatedAt=${encodeURIComponent(good)}`);
      expect(res.status, good).toBe(200);
    }
  });

  it('numeric score filters beyond Float64 precision answer 200 or 400, never 500', async () => {
    for (const v of ['1e16', '1e308', '-1e16', '9007199254740993']) {
      const res = await call(mode, 'GET', `/api/public/v3/scores?dataType=NUMERIC&value=${v}`);
      expect([200, 400], `value=${v}: ${JSON.stringify(res.body)}`).toContain(res.status);
      const legacy = await call(mode, 'GET', `/api/public/v2/scores?value=${v}`);
      expect([200, 400, 404], `v2 value=${v}`).toContain(legacy.status);
    }
  });

  it('prompt versions beyond 32 bits answer 400 naming version', async () => {
    const name = `p-${hex(4)}`;
    const created = await call(mode, 'POST', '/api/public/v2/prompts', { name, type: 'text', prompt: 'hi' });
    expect(created.status).toBe(200);
    for (const path of [
      `/api/public/v2/prompts/${name}?version=4294967297`,
      `/api/public/v2/prompts/${name}?version=99999999999999999999`,
    ]) {
      const res = await call(mode, 'GET', path);
      expect(res.status, path).toBe(400);
      expect(JSON.stringify(res.body)).toContain('version');
    }
    const patch = await call(mode, 'PATCH', `/api/public/v2/prompts/${name}/versions/4294967297`, {
      newLabels: ['x'],
    });
    expect(patch.status).toBe(400);
  });

  it('NUL bytes in names answer 400 naming the field and store nothing', async () => {
    const bad = `a\u0000b-${hex(3)}`;
    const prompt = await call(mode, 'POST', '/api/public/v2/prompts', {
      name: bad,
      type: 'text',
      prompt: 'x',
    });
    expect(prompt.status).toBe(400);
    expect(JSON.stringify(prompt.body)).toContain('name');
    const dataset = await call(mode, 'POST', '/api/public/v2/datasets', { name: bad });
    expect(dataset.status).toBe(400);
    expect(JSON.stringify(dataset.body)).toContain('name');
    const ok = `d-${hex(4)}`;
    expect((await call(mode, 'POST', '/api/public/v2/datasets', { name: ok })).status).toBe(200);
    const item = await call(mode, 'POST', '/api/public/dataset-items', {
      datasetName: ok,
      input: 'x',
      id: bad,
    });
    expect(item.status).toBe(400);
    const got = await call(mode, 'GET', `/api/public/v2/datasets/${encodeURIComponent(bad)}`);
    expect(got.status).toBe(400);
    const prompts = await call(mode, 'GET', `/api/public/v2/prompts?name=${encodeURIComponent(bad)}`);
    expect(prompts.status).toBe(400);
  });

  it('an undeclared method on a served path answers 405 with Allow', async () => {
    const res = await fetch(`${webs[mode].url}/api/public/v2/prompts`, {
      method: 'PUT',
      headers: {
        authorization: `Basic ${Buffer.from(`${projects[mode].publicKey}:${projects[mode].secretKey}`).toString('base64')}`,
      },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')?.split(/,\s*/).sort()).toEqual(['GET', 'HEAD', 'POST'].sort());
    expect((await fetch(`${webs[mode].url}/api/public/no-such-family`)).status).toBe(404);
  });

  it('DELETE /api/public/scores/{id} answers 202 with a message', async () => {
    const id = `s-${hex(6)}`;
    const created = await call(mode, 'POST', '/api/public/scores', {
      id,
      traceId: `t-${hex(6)}`,
      name: 'q',
      value: 1,
    });
    expect(created.status).toBe(200);
    const res = await call(mode, 'DELETE', `/api/public/scores/${id}`);
    expect(res.status).toBe(202);
    expect(typeof res.body['message']).toBe('string');
  });

  it('PATCH /api/public/score-configs/{id} updates the fields the reference allows', async () => {
    const created = await call(mode, 'POST', '/api/public/score-configs', {
      name: `c-${hex(4)}`,
      dataType: 'NUMERIC',
      minValue: 0,
      maxValue: 1,
    });
    expect(created.status).toBe(200);
    const id = created.body['id'] as string;
    const patched = await call(mode, 'PATCH', `/api/public/score-configs/${id}`, {
      isArchived: true,
      description: 'now archived',
      maxValue: 5,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id,
      isArchived: true,
      description: 'now archived',
      maxValue: 5,
      minValue: 0,
    });
    const read = await call(mode, 'GET', `/api/public/score-configs/${id}`);
    expect(read.body).toMatchObject({ isArchived: true, description: 'now archived', maxValue: 5 });
    const bad = await call(mode, 'PATCH', `/api/public/score-configs/${id}`, { minValue: 10 });
    expect(bad.status).toBe(400);
    const missing = await call(mode, 'PATCH', `/api/public/score-configs/no-such-${hex(4)}`, {
      isArchived: false,
    });
    expect(missing.status).toBe(404);
  });
});

describe.each(['legacy', 'dual'] as const)('%s: dataset run items', (mode) => {
  it('a run item sent with an observation id alone carries that observation trace, in the answer and on reads', async () => {
    const [dataset, itemId, runName] = [`ds-${hex(4)}`, `it-${hex(4)}`, `run-${hex(4)}`];
    const { traceId, spanId } = await tracedSpan(mode);
    const ds = await call(mode, 'POST', '/api/public/v2/datasets', { name: dataset });
    expect(ds.status).toBe(200);
    expect(
      (
        await call(mode, 'POST', '/api/public/dataset-items', {
          datasetName: dataset,
          id: itemId,
          input: 'q',
        })
      ).status,
    ).toBe(200);

    const linked = await call(mode, 'POST', '/api/public/dataset-run-items', {
      runName,
      datasetItemId: itemId,
      observationId: spanId,
    });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({
      traceId,
      observationId: spanId,
      datasetItemId: itemId,
      datasetRunName: runName,
    });

    const listed = await call(
      mode,
      'GET',
      `/api/public/dataset-run-items?datasetId=${ds.body['id']}&runName=${runName}`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.data?.map((r) => [r['traceId'], r['observationId']])).toEqual([[traceId, spanId]]);

    const unknown = await call(mode, 'POST', '/api/public/dataset-run-items', {
      runName,
      datasetItemId: itemId,
      observationId: `none-${hex(4)}`,
    });
    expect(unknown.status).toBe(404);
  });
});

describe.each(MODES)('%s: dataset versions', (mode) => {
  it('the SDK reads a dataset as it was at a time: later edits, deletions and additions unseen', async () => {
    const name = `versioned-${hex(4)}`;
    const client = new LangfuseClient({
      publicKey: projects[mode].publicKey,
      secretKey: projects[mode].secretKey,
      baseUrl: webs[mode].url,
    });
    await client.api.datasets.create({ name });
    for (const id of ['a', 'b', 'c']) {
      await client.api.datasetItems.create({
        datasetName: name,
        id: `${name}-${id}`,
        input: `${id}1`,
        expectedOutput: id,
      });
    }
    const pause = () => new Promise((r) => setTimeout(r, 20));
    await pause();
    const then = new Date();
    await pause();
    await client.api.datasetItems.create({ datasetName: name, id: `${name}-a`, input: 'a2' });
    await client.api.datasetItems.delete(`${name}-b`);
    await client.api.datasetItems.create({ datasetName: name, id: `${name}-d`, input: 'd1' });

    const inputs = (d: { items: { id: string; input?: unknown; expectedOutput?: unknown }[] }) =>
      d.items.map((i) => [i.id.slice(name.length + 1), i.input, i.expectedOutput]).sort();
    expect(inputs(await client.dataset.get(name, { version: then.toISOString() }))).toEqual([
      ['a', 'a1', 'a'],
      ['b', 'b1', 'b'],
      ['c', 'c1', 'c'],
    ]);
    expect(inputs(await client.dataset.get(name))).toEqual([
      ['a', 'a2', 'a'],
      ['c', 'c1', 'c'],
      ['d', 'd1', null],
    ]);
    const before = await call(
      mode,
      'GET',
      `/api/public/dataset-items?datasetName=${name}&version=2000-01-01T00:00:00Z`,
    );
    expect(before.body.data).toEqual([]);
  });
});

/** A trace with one span, sent through the batch API as an SDK before version 3 sends it. */
async function tracedSpan(mode: Mode) {
  const [traceId, spanId] = [hex(16), hex(8)];
  const at = new Date().toISOString();
  const sent = await call(mode, 'POST', '/api/public/ingestion', {
    batch: [
      { id: hex(8), type: 'trace-create', timestamp: at, body: { id: traceId } },
      { id: hex(8), type: 'span-create', timestamp: at, body: { id: spanId, traceId } },
    ],
  });
  expect(sent.status).toBe(207);
  return { traceId, spanId };
}

describe('through the Python SDK', () => {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // Version 5 reads datasets by version; the run items API left the generated client with it.
  beforeAll(async () => {
    await ensurePythonSdk('5.0.4', log);
    await ensurePythonSdk('4.7.1', log);
  }, 900_000);
  const server = (mode: Mode) => ({ url: webs[mode].url, ...projects[mode] });

  it.each(MODES)('%s: get_dataset(name, version=...) reads the items as they were then', async (mode) => {
    const out = await runPython('5.0.4', 'dataset_versions', server(mode), {
      CONFORMANCE_CASE: `pyv-${hex(3)}`,
    });
    expect(out).toMatchObject({
      past: [
        ['a', 'a1'],
        ['b', 'b1'],
      ],
      now: [
        ['a', 'a2'],
        ['b', 'b1'],
        ['c', 'c1'],
      ],
    });
  });

  it.each(['legacy', 'dual'] as const)(
    '%s: dataset_run_items.create with an observation id alone gets the trace id, kept on reads',
    async (mode) => {
      const { traceId, spanId } = await tracedSpan(mode);
      const id = `pyr-${hex(3)}`;
      const out = await runPython('4.7.1', 'dataset_run_item', server(mode), {
        CONFORMANCE_CASE: id,
        CONFORMANCE_OBSERVATION_ID: spanId,
      });
      expect(out).toMatchObject({ traceId, observationId: spanId, runName: `${id}-run` });
      const ds = await call(mode, 'GET', `/api/public/v2/datasets/${id}-linked`);
      const listed = await call(
        mode,
        'GET',
        `/api/public/dataset-run-items?datasetId=${ds.body['id']}&runName=${id}-run`,
      );
      expect(listed.body.data?.map((r) => [r['traceId'], r['observationId']])).toEqual([[traceId, spanId]]);
    },
  );
});
