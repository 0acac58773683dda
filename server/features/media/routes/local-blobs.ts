/**
 * The signed URLs of the local blob stores (`observatory dev`), served by the process itself as S3
 * would serve presigned URLs: no API key, the URL's signature is the authority. A PUT must carry
 * exactly the body its URL was signed for (content type, length, SHA-256), like an S3 upload with a
 * signed checksum; a GET answers the object with its content type, as a download unless a browser
 * can show it without running anything, sandboxed (server/platform/blobs/serving.ts). Refusals answer 403 as S3 does.
 */
import { createHash } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { Forbidden, NotFound } from '../../../kernel/errors.ts';
import { LOCAL_BLOB_PATH, type LocalBlobStore } from '../../../platform/blobs/local.ts';
import { SANDBOX_HEADERS, servedAs } from '../../../platform/blobs/serving.ts';
import type { Query } from '../../../platform/blobs/signed-url.ts';

export interface LocalBlobsOptions {
  stores: LocalBlobStore[];
  /** Largest body a PUT may carry. */
  maxUploadBytes: number;
}

interface Target {
  Params: { bucket: string; key: string };
  Querystring: Query;
}

export const localBlobsPlugin: FastifyPluginAsync<LocalBlobsOptions> = async (app, opts) => {
  const byBucket = new Map(opts.stores.map((s) => [s.bucket, s]));
  // The body is the object: bytes of any content type, untouched.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.maxUploadBytes }, (_req, body, done) =>
    done(null, body),
  );
  const storeOf = (bucket: string) => {
    const store = byBucket.get(bucket);
    if (!store) throw new NotFound(`No bucket ${bucket}`);
    return store;
  };

  app.put<Target>(`${LOCAL_BLOB_PATH}/:bucket/:key`, async (req, reply) => {
    const store = storeOf(req.params.bucket);
    const grant = store.authorize('PUT', req.params.key, req.query);
    if ('refusal' in grant) throw new Forbidden(`Upload refused: ${grant.refusal}`);
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const sha256 = createHash('sha256').update(body).digest('base64');
    const checksumHeader = req.headers['x-amz-checksum-sha256'];
    const mismatch =
      req.headers['content-type'] !== grant.contentType
        ? 'Content-Type differs from the signed one'
        : body.length !== grant.contentLength
          ? 'the body length differs from the signed one'
          : sha256 !== grant.sha256Base64 || (checksumHeader !== undefined && checksumHeader !== sha256)
            ? 'the body does not match the signed SHA-256'
            : undefined;
    if (mismatch) throw new Forbidden(`Upload refused: ${mismatch}`);
    await store.put(req.params.key, body, grant.contentType ?? 'application/octet-stream');
    return reply.code(200).send();
  });

  app.get<Target>(`${LOCAL_BLOB_PATH}/:bucket/:key`, async (req, reply) => {
    const store = storeOf(req.params.bucket);
    const grant = store.authorize('GET', req.params.key, req.query);
    if ('refusal' in grant) throw new Forbidden(`Download refused: ${grant.refusal}`);
    const [body, head] = await Promise.all([store.get(req.params.key), store.head(req.params.key)]);
    if (!body) throw new NotFound('No such object');
    const served = servedAs(head?.contentType, req.params.key);
    return reply
      .headers(SANDBOX_HEADERS)
      .header('content-disposition', served.contentDisposition)
      .type(served.contentType)
      .send(body);
  });
};
