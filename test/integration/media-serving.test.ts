/**
 * Uploaded media a browser could execute is never shown inline. Through the media API with plain
 * HTTP, as an SDK does (announce, PUT to the presigned URL, GET the download URL), against the web
 * app with dev's local blob store (the process serves the bytes from its own origin) and with a
 * real S3-compatible server (Versity Gateway) behind presigned URLs. Every content type the
 * reference accepts is still accepted, but HTML, SVG, JavaScript and XML come back as a download
 * (`Content-Disposition: attachment`); raster images stay inline. The dev store also sends
 * `nosniff` and a sandboxing CSP with every object; S3 answers the type and disposition the
 * presigned URL signs.
 */
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../../server/features/projects/keys.ts';
import { localBlobStore } from '../../server/platform/blobs/local.ts';
import { s3BlobStore } from '../../server/platform/blobs/s3.ts';
import type { BlobStore } from '../../server/platform/blobs/store.ts';
import { randomPng } from '../fixtures/media.ts';
import { S3_REGION, type S3Server, startS3Server } from '../fixtures/s3.ts';
import { type InProcessWeb, type Stores, serveWeb, startStores } from '../fixtures/web-in-process.ts';

const BUCKET = 'media-serving';
/** On a cold machine the S3 server is first built from the Go module proxy (as in media.test.ts). */
const SETUP_TIMEOUT_MS = 1_200_000;
const EVENTS_ONLY = { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' };

let stores: Stores;
let s3: S3Server;
let auth: string;
const webs = {} as Record<'dev' | 's3', InProcessWeb>;

beforeAll(async () => {
  [stores, s3] = await Promise.all([startStores(), startS3Server()]);
  await s3.createBucket(BUCKET);
  const project = await createProject(stores.pool, 'media-serving');
  auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
  let devUrl = '';
  const local = localBlobStore({ dir: join(stores.dir, 'media'), bucket: 'media', baseUrl: () => devUrl });
  webs.dev = await serveWeb(stores, EVENTS_ONLY, { mediaBlobs: local, localBlobs: [local] });
  devUrl = webs.dev.url;
  const remote: BlobStore = s3BlobStore({
    bucket: BUCKET,
    prefix: 'media/',
    region: S3_REGION,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  webs.s3 = await serveWeb(stores, EVENTS_ONLY, { mediaBlobs: remote });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(Object.values(webs).map((w) => w.app.close()));
  await Promise.all([stores?.stop(), s3?.stop()]);
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('base64');

async function api(web: InProcessWeb, method: string, path: string, body?: unknown) {
  const res = await fetch(`${web.url}${path}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

/** Announces, uploads and confirms `bytes` as `contentType`; answers the download's response. */
async function uploadAndDownload(web: InProcessWeb, contentType: string, bytes: Buffer) {
  const created = await api(web, 'POST', '/api/public/media', {
    traceId: 'media-trace',
    field: 'input',
    contentType,
    contentLength: bytes.length,
    sha256Hash: sha256(bytes),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const put = await fetch(String(created.body['uploadUrl']), {
    method: 'PUT',
    body: new Uint8Array(bytes),
    headers: { 'content-type': contentType, 'x-amz-checksum-sha256': sha256(bytes) },
  });
  expect(put.status, await put.text()).toBe(200);
  const mediaId = String(created.body['mediaId']);
  const patch = { uploadedAt: new Date().toISOString(), uploadHttpStatus: 200, uploadTimeMs: 1 };
  expect((await api(web, 'PATCH', `/api/public/media/${mediaId}`, patch)).status).toBe(200);
  const record = await api(web, 'GET', `/api/public/media/${mediaId}`);
  expect(record.status).toBe(200);
  const download = await fetch(String(record.body['url']));
  expect(download.status).toBe(200);
  expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  return download.headers;
}

/** Content a browser would run; each upload gets bytes (so a media id) of its own. */
const EXECUTABLE: [string, string][] = [
  ['text/html', '<script>fetch("/api/ui/session")</script>'],
  ['image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
  ['application/javascript', 'alert(1)//'],
  ['application/xml', '<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>'],
];
const unique = (text: string) => Buffer.from(`${text}<!-- ${randomUUID()} -->`);

describe.each(['dev', 's3'] as const)('media from the %s store', (store) => {
  it.each(EXECUTABLE)('serves %s as a download', async (contentType, text) => {
    const headers = await uploadAndDownload(webs[store], contentType, unique(text));
    expect(headers.get('content-disposition')).toMatch(/^attachment; filename="[A-Za-z0-9_-]+\.\w+"$/);
    expect(headers.get('content-type')).toBe(contentType);
    if (store === 'dev') {
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    }
  });

  it('shows a PNG inline', async () => {
    const headers = await uploadAndDownload(webs[store], 'image/png', randomPng());
    expect(headers.get('content-type')).toBe('image/png');
    expect(headers.get('content-disposition') ?? 'inline').toBe('inline');
    if (store === 'dev') expect(headers.get('x-content-type-options')).toBe('nosniff');
  });
});

it('accepts the content types the reference accepts and refuses others, naming the field', async () => {
  const announce = (contentType: string) =>
    api(webs.dev, 'POST', '/api/public/media', {
      traceId: 'media-trace',
      field: 'input',
      contentType,
      contentLength: 3,
      sha256Hash: sha256(Buffer.from(contentType)),
    });
  expect((await announce('text/html')).status).toBe(201);
  const refused = await announce('application/x-shockwave-flash');
  expect(refused.status).toBe(400);
  expect(JSON.stringify(refused.body)).toContain('contentType');
});
