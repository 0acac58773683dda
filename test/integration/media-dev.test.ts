/**
 * Media on `observatory dev`, whose blob storage is a local directory served by the dev process
 * itself: the JS SDK 5.x uploads an image through the signed URL the process hands out, the media
 * API's download URL (signed by the same process) gives the bytes back, a URL that was changed or
 * has expired is refused, and the same image again is not uploaded again.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api } from '../conformance/env.ts';
import { type DevService, startDev } from '../fixtures/dev.ts';
import { mediaIdOfImage, randomPng, sha256Base64, traceImageWithJsSdk } from '../fixtures/media.ts';
import { removeDirSync } from '../fixtures/processes.ts';

let dev: DevService;
let dataDir: string;
const EXPIRY_SECONDS = 2;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'obs-media-dev-'));
  dev = await startDev(dataDir, { SERVICE_S3_MEDIA_DOWNLOAD_URL_EXPIRY_SECONDS: String(EXPIRY_SECONDS) });
});

afterAll(async () => {
  await dev?.stop();
  if (dataDir) removeDirSync(dataDir);
});

interface MediaRecord {
  contentType: string;
  contentLength: number;
  uploadedAt: string;
  url: string;
}

it('the SDK uploads to the dev process, which serves the bytes back behind signed, expiring URLs', async () => {
  const image = randomPng();
  const mediaId = mediaIdOfImage(image);
  await traceImageWithJsSdk(dev, 'dev-media', image);
  const r = await api<MediaRecord>({ ...dev }, 'GET', `/api/public/media/${mediaId}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ contentType: 'image/png', contentLength: image.length });
  expect(new URL(r.body.url).origin).toBe(dev.url);

  const download = await fetch(r.body.url);
  expect(download.status).toBe(200);
  expect(download.headers.get('content-type')).toBe('image/png');
  expect(Buffer.from(await download.arrayBuffer()).equals(image)).toBe(true);
  const file = join(
    dataDir,
    'blobs',
    'media',
    'objects',
    encodeURIComponent(`${dev.projectId}/${mediaId}.png`),
  );
  expect(existsSync(file) && readFileSync(file).equals(image)).toBe(true);

  const tampered = new URL(r.body.url);
  tampered.pathname = tampered.pathname.replace(mediaId, mediaIdOfImage(randomPng()));
  expect((await fetch(tampered)).status).toBe(403);
  await new Promise((resolve) => setTimeout(resolve, (EXPIRY_SECONDS + 1) * 1000));
  expect((await fetch(r.body.url)).status).toBe(403);

  // Again: no upload URL, the first upload stands.
  const again = await api<{ uploadUrl: string | null; mediaId: string }>(
    { ...dev },
    'POST',
    '/api/public/media',
    {
      traceId: 'again',
      contentType: 'image/png',
      contentLength: image.length,
      sha256Hash: sha256Base64(image),
      field: 'input',
    },
  );
  expect(again).toEqual({ status: 201, body: { uploadUrl: null, mediaId } });
});

it('an upload URL accepts only the announced bytes', async () => {
  const image = randomPng();
  const created = await api<{ uploadUrl: string }>({ ...dev }, 'POST', '/api/public/media', {
    traceId: 't',
    contentType: 'image/png',
    contentLength: image.length,
    sha256Hash: sha256Base64(image),
    field: 'output',
  });
  const put = (body: Buffer, type = 'image/png') =>
    fetch(created.body.uploadUrl, {
      method: 'PUT',
      body: new Uint8Array(body),
      headers: { 'content-type': type },
    });
  expect((await put(randomPng())).status).toBe(403);
  expect((await put(image, 'image/jpeg')).status).toBe(403);
  expect((await put(image)).status).toBe(200);
});
