/**
 * The blob store of `observatory dev`: one "bucket" is a directory, each object one file named by
 * its encoded key (so `a/b` and `a/b/c` can both exist, as in S3), written to a temporary file and
 * renamed into place so a reader never sees half an object. Presigned URLs point at the dev
 * process itself (server/features/media/routes/local-blobs.ts serves them), signed and expiring (signed-url.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Grant, type Query, type SignedMethod, signGrant, verifyGrant } from './signed-url.ts';
import type { BlobStore } from './store.ts';

export interface LocalBlobStore extends BlobStore {
  /** The grant a presigned URL's query proves for `method` on `key`, or why it proves none. */
  authorize(method: SignedMethod, key: string, query: Query): Grant | { refusal: string };
}

export interface LocalBlobOptions {
  /** Directory of this bucket's objects. */
  dir: string;
  bucket: string;
  /** Where the process serving the URLs listens (known only once it listens). */
  baseUrl: () => string;
  /** Signs the URLs; a fresh random one per process unless given. */
  secret?: Buffer;
  now?: () => number;
}

/** The path of the URLs that the web's local-blobs plugin serves. */
export const LOCAL_BLOB_PATH = '/api/blob-storage';

export function localBlobStore(opts: LocalBlobOptions): LocalBlobStore {
  const objects = join(opts.dir, 'objects');
  const types = join(opts.dir, 'types');
  const staging = join(opts.dir, 'staging');
  for (const d of [objects, types, staging]) mkdirSync(d, { recursive: true });
  const secret = opts.secret ?? randomBytes(32);
  const nowSeconds = () => Math.floor((opts.now?.() ?? Date.now()) / 1000);
  const fileOf = (dir: string, key: string) => join(dir, encodeURIComponent(key));
  const urlOf = (key: string, grant: Grant) =>
    `${opts.baseUrl()}${LOCAL_BLOB_PATH}/${encodeURIComponent(opts.bucket)}/${encodeURIComponent(key)}?${signGrant(secret, grant)}`;
  const writeAtomically = async (path: string, body: Buffer | string) => {
    const tmp = join(staging, randomUUID());
    await writeFile(tmp, body);
    await rename(tmp, path);
  };
  const missing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

  return {
    bucket: opts.bucket,
    async put(key, body, contentType) {
      await writeAtomically(fileOf(types, key), contentType);
      await writeAtomically(fileOf(objects, key), body);
    },
    async get(key) {
      return readFile(fileOf(objects, key)).catch((err) => {
        if (missing(err)) return undefined;
        throw err;
      });
    },
    async head(key) {
      try {
        const { size } = await stat(fileOf(objects, key));
        const contentType = await readFile(fileOf(types, key), 'utf8').catch(() => undefined);
        return { size, contentType };
      } catch (err) {
        if (missing(err)) return undefined;
        throw err;
      }
    },
    async list(prefix) {
      return (await readdir(objects))
        .map(decodeURIComponent)
        .filter((k) => k.startsWith(prefix))
        .sort();
    },
    async delete(key) {
      await rm(fileOf(objects, key), { force: true });
      await rm(fileOf(types, key), { force: true });
    },
    async presignPut(key, put) {
      return urlOf(key, {
        method: 'PUT',
        bucket: opts.bucket,
        key,
        expires: nowSeconds() + put.expiresInSeconds,
        contentType: put.contentType,
        contentLength: put.contentLength,
        sha256Base64: put.sha256Base64,
      });
    },
    async presignGet(key, expiresInSeconds) {
      return urlOf(key, {
        method: 'GET',
        bucket: opts.bucket,
        key,
        expires: nowSeconds() + expiresInSeconds,
      });
    },
    authorize(method, key, query) {
      return verifyGrant(secret, { method, bucket: opts.bucket, key, query }, nowSeconds());
    },
    close() {},
  };
}
