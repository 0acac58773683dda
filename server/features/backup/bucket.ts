/**
 * The backup destination through the AWS SDK: listing, reading and removing a backup's objects,
 * the manifest, and the relational dump streamed up with the SDK's multipart `Upload`.
 */
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Settings } from '../../kernel/config/blob-storage.ts';
import { isNotFound, s3Client } from '../../platform/blobs/s3.ts';
import type { StoredObject } from './plan.ts';

/** One request (a part of at most PART_BYTES, a listing page); a whole backup takes many. */
const REQUEST_TIMEOUT_MS = 300_000;
const PART_BYTES = 8 * 1024 * 1024;
const DELETE_BATCH = 1000;

export interface BackupBucket {
  /** Objects under `prefix` (full keys), every page. */
  list(prefix: string): Promise<StoredObject[]>;
  read(key: string): AsyncIterable<Uint8Array>;
  exists(key: string): Promise<boolean>;
  getText(key: string): Promise<string | undefined>;
  putText(key: string, body: string): Promise<void>;
  upload(key: string, body: Readable, onProgress: (bytes: number) => void): Promise<void>;
  /** Removes the objects under `prefix` and aborts its unfinished uploads; returns the objects removed. */
  removeAll(prefix: string): Promise<number>;
  close(): void;
}

export function backupBucket(d: S3Settings): BackupBucket {
  const client = s3Client(d, REQUEST_TIMEOUT_MS);
  const Bucket = d.bucket;
  const list = async (prefix: string) => {
    const out: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  };
  return {
    list,
    async *read(key) {
      const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
      if (out.Body) yield* out.Body as Readable;
    },
    async exists(key) {
      try {
        await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
    async getText(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return (await out.Body?.transformToString('utf8')) ?? '';
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async putText(key, body) {
      await client.send(
        new PutObjectCommand({ Bucket, Key: key, Body: Buffer.from(body), ContentType: 'application/json' }),
      );
    },
    async upload(key, body, onProgress) {
      const upload = new Upload({
        client,
        params: { Bucket, Key: key, Body: body, ContentType: 'application/octet-stream' },
        partSize: PART_BYTES,
        queueSize: 2,
        leavePartsOnError: false,
      });
      upload.on('httpUploadProgress', (p) => onProgress(p.loaded ?? 0));
      await upload.done();
    },
    async removeAll(prefix) {
      const objects = await list(prefix);
      for (let i = 0; i < objects.length; i += DELETE_BATCH) {
        const batch = objects.slice(i, i + DELETE_BATCH).map((o) => ({ Key: o.key }));
        await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch, Quiet: true } }));
      }
      // A run killed mid-upload leaves its parts in an unfinished multipart upload.
      let marker: { KeyMarker?: string; UploadIdMarker?: string } = {};
      for (;;) {
        const page = await client.send(
          new ListMultipartUploadsCommand({ Bucket, Prefix: prefix, ...marker }),
        );
        for (const u of page.Uploads ?? [])
          await client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key!, UploadId: u.UploadId! }));
        if (!page.IsTruncated) break;
        marker = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
      }
      return objects.length;
    },
    close() {
      client.destroy();
    },
  };
}
