/**
 * The production blob store: one bucket through the AWS SDK v3 S3 client and its presigner. Works
 * against AWS S3 and S3-compatible servers (`endpoint` plus path-style addressing).
 */

import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../../kernel/config/blob-storage.ts';
import { servedAs } from './serving.ts';
import type { BlobHead, BlobStore, PresignedPut } from './store.ts';

/** Every request settles: a storage that stops answering fails the request instead of hanging it. */
const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 60_000;

export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/** The connections' agents, where the caller decides which addresses a bucket may live at. */
export interface S3Agents {
  httpAgent: HttpAgent;
  httpsAgent: HttpsAgent;
}

/** The SDK client for one bucket's settings; `requestTimeoutMs` bounds each request. */
export function s3Client(
  settings: S3Settings,
  requestTimeoutMs = REQUEST_TIMEOUT_MS,
  agents?: S3Agents,
): S3Client {
  return new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    // Checksums only where S3 requires them: a default CRC32 would be signed into presigned PUT URLs,
    // and the SDKs' uploads send a SHA-256 instead.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: requestTimeoutMs, ...agents },
  });
}

export function s3BlobStore(settings: S3Settings, agents?: S3Agents): BlobStore {
  const client = s3Client(settings, REQUEST_TIMEOUT_MS, agents);
  const Bucket = settings.bucket;

  return {
    bucket: Bucket,
    async put(key, body, contentType) {
      // As bytes, so that even an empty body has a known length (the SDK treats '' as a stream).
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: bytes, ContentType: contentType }));
    },
    async get(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async head(key): Promise<BlobHead | undefined> {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return { size: out.ContentLength ?? 0, contentType: out.ContentType };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async list(prefix) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    presignPut(key, put: PresignedPut) {
      const command = new PutObjectCommand({
        Bucket,
        Key: key,
        ContentType: put.contentType,
        ContentLength: put.contentLength,
        ChecksumSHA256: put.sha256Base64,
      });
      // Type, length and checksum are signed headers (the SDKs send them as such), so the storage
      // accepts exactly the announced bytes; the presigner leaves the type unsigned unless asked.
      return getSignedUrl(client, command, {
        expiresIn: put.expiresInSeconds,
        signableHeaders: new Set(['content-type']),
        unhoistableHeaders: new Set(['x-amz-checksum-sha256']),
      });
    },
    presignGet(key, expiresInSeconds, contentType) {
      // S3 answers with the overrides the URL signs: a type it cannot guess otherwise, and a
      // download for anything a browser could execute (it sets no CSP or nosniff of its own).
      const served = servedAs(contentType, key);
      const command = new GetObjectCommand({
        Bucket,
        Key: key,
        ResponseContentDisposition: served.contentDisposition,
        ...(contentType ? { ResponseContentType: served.contentType } : {}),
      });
      return getSignedUrl(client, command, { expiresIn: expiresInSeconds });
    },
    close() {
      client.destroy();
    },
  };
}
