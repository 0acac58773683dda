import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/kernel/config/env.ts';
import { localBlobStore } from '../../server/platform/blobs/local.ts';
import { type Grant, signGrant, verifyGrant } from '../../server/platform/blobs/signed-url.ts';

const SECRET = Buffer.alloc(32, 7);
const PUT: Grant = {
  method: 'PUT',
  bucket: 'media',
  key: 'p1/abc.png',
  expires: 1_000,
  contentType: 'image/png',
  contentLength: 3,
  sha256Base64: 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=',
};
const queryOf = (g: Grant) => Object.fromEntries(new URLSearchParams(signGrant(SECRET, g)));

describe('signed URLs of the local blob store', () => {
  const request = (over: Partial<Grant> = {}, query = queryOf(PUT)) => ({
    method: over.method ?? PUT.method,
    bucket: over.bucket ?? PUT.bucket,
    key: over.key ?? PUT.key,
    query,
  });
  it('grant exactly what was signed until it expires', () => {
    expect(verifyGrant(SECRET, request(), 1_000)).toEqual(PUT);
  });
  it.each([
    ['after the expiry', request(), 1_001, 'the URL has expired'],
    ['for another key', request({ key: 'p2/abc.png' }), 0, 'the signature does not match this request'],
    ['for another bucket', request({ bucket: 'exports' }), 0, 'the signature does not match this request'],
    ['for another method', request({ method: 'GET' }), 0, 'the signature does not match this request'],
    [
      'with a changed length',
      request({}, { ...queryOf(PUT), contentLength: '4' }),
      0,
      'the signature does not match this request',
    ],
    [
      'with a later expiry',
      request({}, { ...queryOf(PUT), expires: '2000' }),
      0,
      'the signature does not match this request',
    ],
    [
      'under another secret',
      { ...request(), query: Object.fromEntries(new URLSearchParams(signGrant(Buffer.alloc(32, 8), PUT))) },
      0,
      'the signature does not match this request',
    ],
    ['without a signature', request({}, { expires: '1000' }), 0, 'not a signed URL'],
  ])('refuse a request %s', (_, req, now, refusal) => {
    expect(verifyGrant(SECRET, req, now)).toEqual({ refusal });
  });
});

describe('the local blob store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'obs-local-blobs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const store = localBlobStore({
    dir,
    bucket: 'media',
    baseUrl: () => 'http://127.0.0.1:9',
    now: () => 5_000_000,
  });

  it('keeps objects by key, nested prefixes included, and lists them in order', async () => {
    await store.put('a/b', 'outer', 'text/plain');
    await store.put('a/b/c', Buffer.from('inner'), 'application/octet-stream');
    await store.put('z', 'last', 'text/plain');
    expect(await store.list('a/')).toEqual(['a/b', 'a/b/c']);
    expect((await store.get('a/b'))?.toString()).toBe('outer');
    expect(await store.head('a/b/c')).toEqual({ size: 5, contentType: 'application/octet-stream' });
    await store.delete('a/b');
    expect(await store.get('a/b')).toBeUndefined();
    expect(await store.head('a/b')).toBeUndefined();
    expect(await store.list('')).toEqual(['a/b/c', 'z']);
  });

  it('presigns URLs on the serving process that it then authorizes', async () => {
    const url = new URL(
      await store.presignPut('p/x.png', {
        contentType: 'image/png',
        contentLength: 3,
        sha256Base64: PUT.sha256Base64!,
        expiresInSeconds: 60,
      }),
    );
    expect(`${url.origin}${url.pathname}`).toBe('http://127.0.0.1:9/api/blob-storage/media/p%2Fx.png');
    const query = Object.fromEntries(url.searchParams);
    expect(store.authorize('PUT', 'p/x.png', query)).toMatchObject({ contentLength: 3, expires: 5_060 });
    expect(store.authorize('GET', 'p/x.png', query)).toEqual({
      refusal: 'the signature does not match this request',
    });
  });
});

describe('blob storage settings', () => {
  const media = {
    SERVICE_S3_MEDIA_UPLOAD_BUCKET: 'media',
    SERVICE_S3_MEDIA_UPLOAD_ENDPOINT: 'http://127.0.0.1:9000',
    SERVICE_S3_MEDIA_UPLOAD_FORCE_PATH_STYLE: 'true',
    SERVICE_S3_MEDIA_UPLOAD_ACCESS_KEY_ID: 'id',
    SERVICE_S3_MEDIA_UPLOAD_SECRET_ACCESS_KEY: 'very-secret',
    SERVICE_S3_MEDIA_UPLOAD_PREFIX: 'media/',
  };
  const problemOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    return undefined;
  };

  it('are off without a bucket, with the reference defaults for media', () => {
    const config = loadConfig({});
    expect(config.media).toEqual({
      s3: undefined,
      maxContentLength: 1_000_000_000,
      downloadUrlExpirySeconds: 3600,
    });
    expect(config.exportStorage).toBeUndefined();
  });

  it('read one set per purpose', () => {
    const config = loadConfig({ ...media, SERVICE_S3_BATCH_EXPORT_BUCKET: 'exports' });
    expect(config.media.s3).toEqual({
      bucket: 'media',
      prefix: 'media/',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'id', secretAccessKey: 'very-secret' },
    });
    expect(config.exportStorage).toEqual({
      bucket: 'exports',
      prefix: '',
      region: 'us-east-1',
      endpoint: undefined,
      forcePathStyle: false,
      credentials: undefined,
    });
  });

  it.each([
    [
      { SERVICE_S3_MEDIA_UPLOAD_BUCKET: 'Media_Bucket' },
      'SERVICE_S3_MEDIA_UPLOAD_BUCKET=Media_Bucket is not a bucket name',
    ],
    [
      { ...media, SERVICE_S3_MEDIA_UPLOAD_ENDPOINT: 'minio:9000' },
      'SERVICE_S3_MEDIA_UPLOAD_ENDPOINT must be an http:// or https:// URL',
    ],
    [
      { ...media, SERVICE_S3_MEDIA_UPLOAD_ACCESS_KEY_ID: '' },
      'SERVICE_S3_MEDIA_UPLOAD_ACCESS_KEY_ID and SERVICE_S3_MEDIA_UPLOAD_SECRET_ACCESS_KEY must be set together',
    ],
    [
      { ...media, SERVICE_S3_MEDIA_UPLOAD_FORCE_PATH_STYLE: 'yes' },
      'SERVICE_S3_MEDIA_UPLOAD_FORCE_PATH_STYLE=yes is not one of true|false',
    ],
    [
      { ...media, SERVICE_S3_MEDIA_UPLOAD_PREFIX: '/media' },
      "SERVICE_S3_MEDIA_UPLOAD_PREFIX must not start with '/'",
    ],
    [
      {
        SERVICE_S3_BATCH_EXPORT_ENDPOINT: 'http://s3',
        SERVICE_S3_BATCH_EXPORT_SECRET_ACCESS_KEY: 'very-secret',
      },
      'SERVICE_S3_BATCH_EXPORT_ENDPOINT, SERVICE_S3_BATCH_EXPORT_SECRET_ACCESS_KEY set without SERVICE_S3_BATCH_EXPORT_BUCKET',
    ],
    [
      { SERVICE_S3_MEDIA_DOWNLOAD_URL_EXPIRY_SECONDS: '604801' },
      'SERVICE_S3_MEDIA_DOWNLOAD_URL_EXPIRY_SECONDS=604801 is not an integer between 1 and 604800',
    ],
    [{ SERVICE_S3_MEDIA_MAX_CONTENT_LENGTH: '0' }, 'SERVICE_S3_MEDIA_MAX_CONTENT_LENGTH=0 is not an integer'],
  ])('refuse %o naming the variable', (env, problem) => {
    const message = problemOf(env);
    expect(message).toContain(problem);
    expect(message).not.toContain('very-secret');
  });
});
