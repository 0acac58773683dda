/**
 * Blob storage behind one interface: the S3 API in production (s3.ts), a local directory served
 * by the dev process itself (local.ts). Keys are the full object keys (any configured prefix is
 * already part of them); presigned URLs let a client move bytes without the service in between.
 */

export interface PresignedPut {
  contentType: string;
  contentLength: number;
  /** Base64 SHA-256 of the body; the storage refuses bytes that do not match it. */
  sha256Base64: string;
  expiresInSeconds: number;
}

export interface BlobHead {
  size: number;
  contentType: string | undefined;
}

export interface BlobStore {
  /** The bucket name recorded next to a key (the local store calls its directory `local`). */
  readonly bucket: string;
  put(key: string, body: Buffer | string, contentType: string): Promise<void>;
  /** The object's bytes, or undefined when there is none. */
  get(key: string): Promise<Buffer | undefined>;
  head(key: string): Promise<BlobHead | undefined>;
  /** Every key that starts with `prefix`, in lexicographic order. */
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
  /** A URL that accepts one PUT of exactly the described body until it expires. */
  presignPut(key: string, put: PresignedPut): Promise<string>;
  /**
   * A URL that answers GET with the object until it expires, with the type and disposition of
   * serving.ts for `contentType` (signed into the URL where the storage answers it, as S3 does).
   */
  presignGet(key: string, expiresInSeconds: number, contentType?: string): Promise<string>;
  close(): void;
}
