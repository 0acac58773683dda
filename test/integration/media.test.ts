/**
 * Media with the real SDKs against a real S3-compatible server (Versity Gateway, built from the Go
 * module proxy), one web per write mode on shared PostgreSQL and ClickHouse. Each SDK traces an
 * image: the bytes must land in the bucket under the project, the media API's download URL must
 * give the same bytes back, the read API must return the SDK's media reference string so the SDK's
 * own resolver turns it back into the image, the same image again must not be uploaded again, and
 * another project's key must not find the media.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { LangfuseClient } from '@langfuse/client';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Langfuse, LangfuseMedia } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bounded, eventually, type ModeServer, runPython } from '../conformance/env.ts';
import { ensurePythonSdk } from '../conformance/python-sdks.ts';
import { dataUri, mediaIdOfImage, randomPng, sha256Base64, traceImageWithJsSdk } from '../fixtures/media.ts';
import { createProject, MODE_ENV, type Mode, startWebPerMode, type WebServer } from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

const MODES = Object.keys(MODE_ENV) as Mode[];
const PYTHON_SDK = '5.0.4';
const BUCKET = 'media';
const PREFIX = 'media/';
const DOWNLOAD_URL_SECONDS = 600;
/** A cold build of the S3 server takes minutes on a shared machine; later runs find it cached. */
const SETUP_TIMEOUT_MS = 1_200_000;
const FLUSH_MS = 30_000;

let stores: Stores & Given<{ buckets: string[] }>;
let webs: Record<Mode, WebServer>;
let projects: { a: Omit<ModeServer, 'url'>; b: Omit<ModeServer, 'url'> };
const serverOf = (mode: Mode, who: 'a' | 'b' = 'a'): ModeServer => ({
  url: webs[mode].url,
  ...projects[who],
});

beforeAll(async () => {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  stores = await startStores({ buckets: [BUCKET] });
  const base = {
    ...stores.env,
    ...stores.s3.env('media', BUCKET, PREFIX),
    SERVICE_S3_MEDIA_DOWNLOAD_URL_EXPIRY_SECONDS: String(DOWNLOAD_URL_SECONDS),
  };
  [webs] = await Promise.all([startWebPerMode(base), ensurePythonSdk(PYTHON_SDK, log)]);
  projects = { a: await createProject(base, 'media-a'), b: await createProject(base, 'media-b') };
  // The OpenTelemetry context manager, so that the JS SDK's spans nest as in an application.
  new NodeTracerProvider().register();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await stopStores(stores, ...Object.values(webs ?? {}));
});

interface MediaRecord {
  mediaId: string;
  contentType: string;
  contentLength: number;
  uploadedAt: string | null;
  url: string;
  urlExpiry: string;
}

/** The media is served through the API, downloadable, and its bytes are in the bucket under the project. */
async function expectMediaServed(s: ModeServer, mediaId: string, image: Buffer): Promise<MediaRecord> {
  const asked = Date.now();
  const r = await api<MediaRecord>(s, 'GET', `/api/public/media/${mediaId}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ mediaId, contentType: 'image/png', contentLength: image.length });
  expect(Date.parse(r.body.uploadedAt ?? '')).not.toBeNaN();
  const expiry = Date.parse(r.body.urlExpiry);
  expect(expiry).toBeGreaterThanOrEqual(asked + DOWNLOAD_URL_SECONDS * 1000 - 1000);
  expect(expiry).toBeLessThanOrEqual(Date.now() + DOWNLOAD_URL_SECONDS * 1000);
  const download = await fetch(r.body.url, { signal: AbortSignal.timeout(10_000) });
  expect(download.status).toBe(200);
  expect(Buffer.from(await download.arrayBuffer()).equals(image)).toBe(true);
  const object = await stores.s3.client.send(
    new GetObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}${s.projectId}/${mediaId}.png` }),
  );
  expect(Buffer.from(await object.Body!.transformToByteArray()).equals(image)).toBe(true);
  return r.body;
}

/** The input of an observation as the mode's read API returns it (legacy reads, or v2 observations). */
async function observationInput(mode: Mode, s: ModeServer, traceId: string, observationId: string) {
  if (mode === 'events_only') {
    return eventually(
      `v2 observation ${observationId}`,
      async () => {
        const r = await api<{ data: { id: string; input: unknown }[] }>(
          s,
          'GET',
          `/api/public/v2/observations?traceId=${traceId}&fields=core,io`,
        );
        return r.status === 200 ? r.body.data.find((o) => o.id === observationId)?.input : undefined;
      },
      30_000,
    );
  }
  return eventually(
    `observation ${observationId}`,
    async () => {
      const r = await api<{ input: unknown }>(s, 'GET', `/api/public/observations/${observationId}`);
      return r.status === 200 ? r.body.input : undefined;
    },
    30_000,
  );
}

/** The SDK's own resolver turns the reference string the read API returned back into the image. */
async function expectResolvesToImage(s: ModeServer, stored: unknown, image: Buffer, mediaId: string) {
  expect(JSON.stringify(stored)).toContain(`|id=${mediaId}|`);
  const client = new LangfuseClient({ publicKey: s.publicKey, secretKey: s.secretKey, baseUrl: s.url });
  const resolved = await client.media.resolveReferences({ obj: stored, resolveWith: 'base64DataUri' });
  expect(JSON.stringify(resolved)).toContain(dataUri(image));
  await client.shutdown();
}

async function linksOf(mediaId: string, projectId: string) {
  const { rows } = await stores.pool.query<{
    trace_id: string;
    observation_id: string | null;
    field: string;
  }>(
    `SELECT trace_id, observation_id, field FROM observation_media WHERE project_id = $1 AND media_id = $2
     UNION ALL SELECT trace_id, NULL, field FROM trace_media WHERE project_id = $1 AND media_id = $2
     ORDER BY 1, 2`,
    [projectId, mediaId],
  );
  return rows;
}

describe.each(MODES)('%s', (mode) => {
  it('Python SDK: the image is uploaded, served, resolved from the read API and not uploaded twice', async () => {
    const s = serverOf(mode);
    const image = randomPng();
    const out = await runPython<{
      traceId: string;
      observationId: string;
      mediaId: string;
      referenceString: string;
      againUploadUrl: string | null;
      againMediaId: string;
    }>(PYTHON_SDK, 'media', s, {
      CONFORMANCE_CASE: `py-media-${mode}`,
      CONFORMANCE_IMAGE_BASE64: image.toString('base64'),
    });
    expect(out.mediaId).toBe(mediaIdOfImage(image));
    expect(out.referenceString).toBe(`@@@langfuseMedia:type=image/png|id=${out.mediaId}|source=bytes@@@`);
    const first = await expectMediaServed(s, out.mediaId, image);
    // The second announcement of the same bytes gets no upload URL, and the upload stays the first one.
    expect({ uploadUrl: out.againUploadUrl, mediaId: out.againMediaId }).toEqual({
      uploadUrl: null,
      mediaId: out.mediaId,
    });
    expect((await expectMediaServed(s, out.mediaId, image)).uploadedAt).toBe(first.uploadedAt);
    expect(await linksOf(out.mediaId, s.projectId)).toEqual([
      { trace_id: out.traceId, observation_id: out.observationId, field: 'input' },
    ]);
    const input = await observationInput(mode, s, out.traceId, out.observationId);
    expect(JSON.stringify(input)).toContain(out.referenceString);
    await expectResolvesToImage(s, input, image, out.mediaId);
  });

  it('JS SDK 5.x: the image is uploaded once for two observations, served and resolved', async () => {
    const s = serverOf(mode);
    const image = randomPng();
    const mediaId = mediaIdOfImage(image);
    const one = await traceImageWithJsSdk(s, `js5-media-${mode}-1`, image);
    const first = await expectMediaServed(s, mediaId, image);
    const two = await traceImageWithJsSdk(s, `js5-media-${mode}-2`, image);
    expect((await expectMediaServed(s, mediaId, image)).uploadedAt).toBe(first.uploadedAt);
    expect(await linksOf(mediaId, s.projectId)).toEqual(
      [one, two]
        .map((o) => ({ trace_id: o.traceId, observation_id: o.observationId, field: 'input' }))
        .sort((x, y) => x.trace_id.localeCompare(y.trace_id)),
    );
    await expectResolvesToImage(
      s,
      await observationInput(mode, s, one.traceId, one.observationId),
      image,
      mediaId,
    );
  });

  it('JS langfuse 3.x: the image of a trace is uploaded and served', async () => {
    const s = serverOf(mode);
    const image = randomPng();
    const sdk = new Langfuse({ publicKey: s.publicKey, secretKey: s.secretKey, baseUrl: s.url });
    const trace = sdk.trace({
      name: `js3-media-${mode}`,
      input: { image: new LangfuseMedia({ contentBytes: image, contentType: 'image/png' }) },
    });
    await bounded('langfuse 3.x shutdownAsync', sdk.shutdownAsync(), FLUSH_MS);
    const mediaId = mediaIdOfImage(image);
    await expectMediaServed(s, mediaId, image);
    expect(await linksOf(mediaId, s.projectId)).toEqual([
      { trace_id: trace.id, observation_id: null, field: 'input' },
    ]);
    // Batch ingestion writes the trace in legacy and dual only (events_only refuses it).
    if (mode !== 'events_only') {
      const stored = await eventually(
        `trace ${trace.id}`,
        async () => {
          const r = await api<{ input: unknown }>(s, 'GET', `/api/public/traces/${trace.id}`);
          return r.status === 200 ? r.body.input : undefined;
        },
        30_000,
      );
      await expectResolvesToImage(s, stored, image, mediaId);
    }
  });
});

describe('the media API', () => {
  const announce = (s: ModeServer, image: Buffer, extra: Record<string, unknown> = {}) =>
    api<{ uploadUrl: string | null; mediaId: string }>(s, 'POST', '/api/public/media', {
      traceId: 'api-trace',
      contentType: 'image/png',
      contentLength: image.length,
      sha256Hash: sha256Base64(image),
      field: 'output',
      ...extra,
    });

  it('another project’s key neither reads nor patches the media, nor shares its upload', async () => {
    const a = serverOf('events_only', 'a');
    const b = serverOf('events_only', 'b');
    const image = randomPng();
    const created = await announce(a, image);
    expect(created.status).toBe(201);
    const put = await fetch(created.body.uploadUrl!, {
      method: 'PUT',
      body: new Uint8Array(image),
      headers: { 'content-type': 'image/png', 'x-amz-checksum-sha256': sha256Base64(image) },
    });
    expect(put.status).toBe(200);
    const patch = { uploadedAt: new Date().toISOString(), uploadHttpStatus: 200, uploadTimeMs: 5 };
    expect((await api(a, 'PATCH', `/api/public/media/${created.body.mediaId}`, patch)).status).toBe(200);
    await expectMediaServed(a, created.body.mediaId, image);

    expect((await api(b, 'GET', `/api/public/media/${created.body.mediaId}`)).status).toBe(404);
    expect((await api(b, 'PATCH', `/api/public/media/${created.body.mediaId}`, patch)).status).toBe(404);
    // The same bytes announced by the other project: its own record, to be uploaded by it.
    const other = await announce(b, image);
    expect(other.status).toBe(201);
    expect(other.body.mediaId).toBe(created.body.mediaId);
    expect(other.body.uploadUrl).toEqual(expect.any(String));
    expect((await api(b, 'GET', `/api/public/media/${created.body.mediaId}`)).body).toEqual({
      message: 'Media not yet uploaded',
    });
  });

  it('the upload URL accepts only the announced bytes', async () => {
    const s = serverOf('legacy');
    const image = randomPng();
    const { body } = await announce(s, image);
    const other = randomPng();
    const wrongBytes = await fetch(body.uploadUrl!, {
      method: 'PUT',
      body: new Uint8Array(other),
      headers: { 'content-type': 'image/png', 'x-amz-checksum-sha256': sha256Base64(image) },
    });
    expect(wrongBytes.status).toBeGreaterThanOrEqual(400);
    const wrongType = await fetch(body.uploadUrl!, {
      method: 'PUT',
      body: new Uint8Array(image),
      headers: { 'content-type': 'image/jpeg', 'x-amz-checksum-sha256': sha256Base64(image) },
    });
    expect(wrongType.status).toBe(403);
  });

  it('a failed upload is recorded and the media is not served', async () => {
    const s = serverOf('dual');
    const image = randomPng();
    const { body } = await announce(s, image);
    const report = { uploadedAt: new Date().toISOString(), uploadHttpStatus: 403, uploadHttpError: 'denied' };
    expect((await api(s, 'PATCH', `/api/public/media/${body.mediaId}`, report)).status).toBe(200);
    const r = await api(s, 'GET', `/api/public/media/${body.mediaId}`);
    expect(r).toEqual({ status: 404, body: { message: 'Media upload failed with status 403: denied' } });
    // Announced again, it gets a new upload URL.
    expect((await announce(s, image)).body.uploadUrl).toEqual(expect.any(String));
  });

  it.each([
    ['contentType', { contentType: 'image/x-unknown' }],
    ['contentLength', { contentLength: 2_000_000_000 }],
    ['contentLength', { contentLength: 0 }],
    ['sha256Hash', { sha256Hash: 'abc' }],
    ['field', { field: 'expectedOutput' }],
    ['traceId', { traceId: undefined }],
  ])('a create with a bad %s answers 400 naming it', async (field, extra) => {
    const r = await announce(serverOf('events_only'), randomPng(), extra);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect((r.body as unknown as { error: string }).error).toMatch(new RegExp(`^${field}: `));
  });

  it('GET and PATCH of an unknown media id answer 404', async () => {
    const s = serverOf('legacy');
    expect((await api(s, 'GET', '/api/public/media/unknown')).status).toBe(404);
    const patch = { uploadedAt: new Date().toISOString(), uploadHttpStatus: 200 };
    expect((await api(s, 'PATCH', '/api/public/media/unknown', patch)).status).toBe(404);
  });
});
