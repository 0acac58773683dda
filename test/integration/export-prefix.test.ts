/**
 * An export's `prefix` stays inside the project's own folder of the export bucket. Through
 * `POST /api/public/exports` with plain HTTP against the web app in process (real PostgreSQL and
 * the embedded ClickHouse engine, a local export store): a prefix that climbs out (`../<other
 * project>/`), starts at the root, or carries a backslash or a control character is refused with a
 * 400 naming `prefix`, and nothing is scheduled; a plain nested prefix is accepted.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProject } from '../../server/features/projects/keys.ts';
import { localBlobStore } from '../../server/platform/blobs/local.ts';
import { type InProcessWeb, type Stores, serveWeb, startStores } from '../fixtures/web-in-process.ts';

let stores: Stores;
let web: InProcessWeb;
let auth: string;
let other: string;

beforeAll(async () => {
  stores = await startStores();
  const [project, victim] = [
    await createProject(stores.pool, 'exporter'),
    await createProject(stores.pool, 'victim'),
  ];
  auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
  other = victim.projectId;
  const exportBlobs = localBlobStore({
    dir: join(stores.dir, 'exports'),
    bucket: 'exports',
    baseUrl: () => 'http://127.0.0.1',
  });
  web = await serveWeb(stores, { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' }, { exportBlobs });
}, 120_000);

afterAll(async () => {
  await web?.app.close();
  await stores?.stop();
});

const schedule = async (prefix: string) => {
  const res = await fetch(`${web.url}/api/public/exports`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'SCORES', format: 'JSONL', frequency: 'daily', prefix }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

it.each([
  ['../victim/', () => `../${other}/`],
  ['a/../../victim/', () => `a/../../${other}/`],
  ['./', () => './'],
  ['/absolute/', () => '/absolute/'],
  ['back\\slash/', () => 'back\\slash/'],
  ['control\\n/', () => 'control\n/'],
  ['nul\\0/', () => 'nul\0/'],
])('refuses the prefix %s with a 400 naming the field', async (_label, prefix) => {
  const r = await schedule(prefix());
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(JSON.stringify(r.body)).toMatch(/prefix/);
});

it('accepts nested relative segments and schedules nothing refused', async () => {
  const ok = await schedule('team/nightly.v2/');
  expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  expect(ok.body['prefix']).toBe('team/nightly.v2/');
  const listed = await fetch(`${web.url}/api/public/exports`, { headers: { authorization: auth } });
  const prefixes = ((await listed.json()) as { data: { prefix: string }[] }).data.map((e) => e.prefix);
  expect(prefixes).toEqual(['team/nightly.v2/']);
});
