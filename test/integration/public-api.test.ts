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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import {
  type AnalyticsServer,
  basicAuth,
  createProject,
  type Env,
  MODE_ENV,
  type Project,
  startAnalyticsServer,
  startWeb,
  type WebServer,
} from '../fixtures/service.ts';

type Mode = keyof typeof MODE_ENV;
const MODES = Object.keys(MODE_ENV) as Mode[];

let pg: PostgresFixture;
let ch: AnalyticsServer;
let base: Env;
const webs = {} as Record<Mode, WebServer>;
const projects = {} as Record<Mode, Project>;
let other: Project;

beforeAll(async () => {
  [pg, ch] = await Promise.all([startPostgres(), startAnalyticsServer()]);
  base = { DATABASE_URL: pg.url, CLICKHOUSE_URL: ch.url };
  webs.legacy = await startWeb({ ...base, ...MODE_ENV.legacy });
  [webs.dual, webs.events_only] = await Promise.all([
    startWeb({ ...base, ...MODE_ENV.dual }),
    startWeb({ ...base, ...MODE_ENV.events_only }),
  ]);
  for (const mode of MODES) projects[mode] = await createProject(base, `api-${mode}`);
  other = await createProject(base, 'api-other');
});

afterAll(async () => {
  await Promise.all(Object.values(webs).map((w) => w.stop()));
  await Promise.all([ch?.stop(), pg?.stop()]);
});

const hex = (n: number) => randomBytes(n).toString('hex');

type Body = Record<string, unknown> & { data?: Record<string, unknown>[] };

async function call(mode: Mode, method: string, path: string, body?: unknown, p: Project = projects[mode]) {
  const res = await fetch(`${webs[mode].url}${path}`, {
    method,
    headers: {
      authorization: basicAuth(p),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Body };
}

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
