/**
 * Media (`/api/public/media`) as the SDKs call it: create returns a presigned upload URL and the
 * media id (no URL when the project already holds the same bytes), the SDK PUTs the bytes to the
 * blob storage itself and reports the outcome with PATCH, and GET returns a short-lived download
 * URL. Relational records plus blob storage, so served in every write mode; the key's project
 * scopes every record, so a media id of another project is not found.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { S3_ENV } from '../../../contract/env.ts';
import { BadRequest, NotConfigured, NotFound } from '../../../kernel/errors.ts';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { projectRoutes, publicMount } from '../../../platform/http/project-routes.ts';
import { route } from '../../../platform/http/route.ts';
import { createMediaRequest, isUploaded, mediaIdOf, mediaObjectKey, patchMediaRequest } from '../rules.ts';
import { claimMedia, findMedia, recordUpload } from '../store.ts';

/** How long an upload URL accepts its PUT: the SDKs upload at once, retrying for under a minute. */
const UPLOAD_URL_SECONDS = 3600;

const mediaId = z.object({ mediaId: z.string().min(1).max(100) });

export interface MediaRouteContext extends RouteContext {
  /** Where uploaded media lives; absent when no media storage is configured. */
  mediaBlobs?: BlobStore | undefined;
}

export const mediaPlugin: FastifyPluginAsync<PluginOptions<MediaRouteContext>> = async (app, { ctx }) => {
  const declare = projectRoutes(app, publicMount('/api/public', 'Media'));
  const settings = ctx.config.media;

  declare(
    {
      method: 'POST',
      path: '/media',
      summary: 'Get a presigned upload URL for media of a trace, observation or dataset item',
      body: createMediaRequest,
      response: z.object({ uploadUrl: z.string().nullable(), mediaId: z.string() }),
    },
    async ({ body, reply, projectId }) => {
      if (body.contentLength > settings.maxContentLength) {
        throw new BadRequest(
          'Invalid request data',
          `contentLength: File size must be less than ${settings.maxContentLength} bytes`,
        );
      }
      const blobs = ctx.mediaBlobs;
      if (!blobs) throw new NotConfigured(`Media upload is not configured: set ${S3_ENV.media.bucket}`);
      const id = mediaIdOf(body.sha256Hash);
      const key = mediaObjectKey(settings.s3?.prefix ?? '', projectId, id, body.contentType);
      const { mustUpload } = await claimMedia(ctx.pool, {
        projectId,
        mediaId: id,
        bucketName: blobs.bucket,
        bucketPath: key,
        request: body,
      });
      const uploadUrl = mustUpload
        ? await blobs.presignPut(key, {
            contentType: body.contentType,
            contentLength: body.contentLength,
            sha256Base64: body.sha256Hash,
            expiresInSeconds: UPLOAD_URL_SECONDS,
          })
        : null;
      return reply.code(201).send({ uploadUrl, mediaId: id });
    },
  );

  declare(
    {
      method: 'PATCH',
      path: '/media/:mediaId',
      summary: 'Record the outcome of a media upload',
      params: mediaId,
      body: patchMediaRequest,
    },
    async ({ params, body, reply, projectId }) => {
      if (!(await recordUpload(ctx.pool, projectId, params.mediaId, body))) {
        throw new NotFound(`Media asset ${params.mediaId} not found in this project`);
      }
      return reply.code(200).send();
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/media/:mediaId',
      tag: 'Media',
      summary: 'Get a media record with a short-lived download URL',
      params: mediaId,
      response: z.object({
        mediaId: z.string(),
        contentType: z.string(),
        contentLength: z.number(),
        uploadedAt: z.string().nullable(),
        url: z.string(),
        urlExpiry: z.string(),
      }),
    },
    async ({ params, req }) => {
      const media = await findMedia(ctx.pool, req.principal.projectId, params.mediaId);
      if (!media) throw new NotFound('Media asset not found');
      if (media.uploadHttpStatus === null) throw new NotFound('Media not yet uploaded');
      if (!isUploaded(media.uploadHttpStatus)) {
        throw new NotFound(
          `Media upload failed with status ${media.uploadHttpStatus}: ${media.uploadHttpError ?? ''}`.trim(),
        );
      }
      const blobs = ctx.mediaBlobs;
      if (!blobs || blobs.bucket !== media.bucketName) {
        throw new NotConfigured(
          `Media ${media.id} is stored in bucket ${media.bucketName}, which this deployment does not serve (${S3_ENV.media.bucket})`,
        );
      }
      const ttl = settings.downloadUrlExpirySeconds;
      const urlExpiry = new Date(Date.now() + ttl * 1000).toISOString();
      return {
        mediaId: media.id,
        contentType: media.contentType,
        contentLength: media.contentLength,
        uploadedAt: media.uploadedAt?.toISOString() ?? null,
        url: await blobs.presignGet(media.bucketPath, ttl, media.contentType),
        urlExpiry,
      };
    },
  );
};
