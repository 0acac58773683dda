/**
 * The reference's blob-storage integrations API (`blob-storage-integrations.yml`) and a PostHog
 * integration in the same form, for organization-scoped keys only (server/app/web/core/auth.ts): one destination
 * per project of the key's organization. An upsert is checked by a test upload to the bucket;
 * secrets are sealed with the server's encryption key and never answered.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { LLM_ENV } from '../../../contract/env.ts';
import { BadRequest, NotConfigured } from '../../../kernel/errors.ts';
import { parseIsoDateTime } from '../../../kernel/iso-datetime.ts';
import { found, notFound } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';
import { checkHost } from '../../llm-connections/guarded-http.ts';
import { encryptSecret } from '../../llm-connections/secrets.ts';
import { organizationProjects } from '../../projects/organizations.ts';
import { destinationOf } from '../blob-job.ts';
import {
  blobSourceRefusal,
  defaultBlobSource,
  initialCheckpoint,
  nextSyncAt,
  startDateProblem,
  syncStatus,
  upsertBlobRequest,
  upsertPostHogRequest,
} from '../rules.ts';
import {
  type BlobIntegration,
  deleteBlobIntegration,
  deletePostHogIntegration,
  findBlobIntegration,
  listBlobIntegrations,
  listPostHogIntegrations,
  type PostHogIntegration,
  upsertBlobIntegration,
  upsertPostHogIntegration,
} from '../store.ts';

const TAG = 'BlobStorageIntegrations';
const BASE = '/api/public/integrations/blob-storage';
const POSTHOG = '/api/public/integrations/posthog';
const idParams = z.object({ id: z.string().min(1) });
const projectParams = z.object({ projectId: z.string().min(1) });

const iso = (d: Date | null) => d?.toISOString() ?? null;
const lastSyncOf = (i: BlobIntegration) => i.lastSyncAt?.getTime() ?? null;
const nextSyncOf = (i: BlobIntegration) => {
  const last = lastSyncOf(i);
  return last === null ? null : new Date(nextSyncAt(i.exportFrequency, last)).toISOString();
};

/** The reference's `BlobStorageIntegrationResponse`: everything but the secret. */
const wireBlob = (i: BlobIntegration) => ({
  id: i.id,
  projectId: i.projectId,
  type: i.type,
  bucketName: i.bucketName,
  endpoint: i.endpoint,
  region: i.region,
  accessKeyId: i.accessKeyId,
  prefix: i.prefix,
  exportFrequency: i.exportFrequency,
  enabled: i.enabled,
  forcePathStyle: i.forcePathStyle,
  fileType: i.fileType,
  exportMode: i.exportMode,
  exportStartDate: iso(i.exportStartDate),
  compressed: i.compressed,
  exportSource: i.exportSource,
  exportFieldGroups: i.exportFieldGroups,
  nextSyncAt: nextSyncOf(i),
  lastSyncAt: iso(i.lastSyncAt),
  lastError: i.lastError,
  lastErrorAt: iso(i.lastErrorAt),
  createdAt: i.createdAt.toISOString(),
  updatedAt: i.updatedAt.toISOString(),
});

const wirePostHog = (i: PostHogIntegration) => ({
  projectId: i.projectId,
  posthogHostname: i.host,
  enabled: i.enabled,
  lastSyncAt: iso(i.lastSyncAt),
  eventsSent: Number(i.eventsSent),
  lastError: i.lastError,
  lastErrorAt: iso(i.lastErrorAt),
  createdAt: i.createdAt.toISOString(),
  updatedAt: i.updatedAt.toISOString(),
});

export const integrationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const pool = ctx.pool;
  const llm = ctx.config.llm;
  const sealingKey = () => {
    if (!llm.encryptionKey)
      throw new NotConfigured(`integration secrets need ${LLM_ENV.encryptionKey} on the server`);
    return llm.encryptionKey;
  };
  const orgProjectIds = async (orgId: string) => (await organizationProjects(pool, orgId)).map((p) => p.id);
  const inOrg = async (orgId: string, projectId: string) => {
    if ((await organizationProjects(pool, orgId, projectId)).length === 0)
      throw notFound('project', projectId);
  };
  /**
   * `<method> BASE/:id`: what `answer` makes of the integration `id`, or a 404 unless its project
   * belongs to the key's organization.
   */
  const onBlob = (
    method: 'GET' | 'DELETE',
    summary: string,
    answer: (i: BlobIntegration) => Promise<unknown>,
  ) =>
    route(
      app,
      { method, url: `${BASE}/:id`, tag: TAG, summary, params: idParams },
      async ({ params, req }) => {
        const i = await findBlobIntegration(pool, { id: params.id });
        if (!i || !(await orgProjectIds(req.organization.orgId)).includes(i.projectId))
          throw notFound('blob storage integration', params.id);
        return answer(i);
      },
    );

  route(
    app,
    { method: 'GET', url: BASE, tag: TAG, summary: 'Blob storage integrations of the organization' },
    async ({ req }) => ({
      data: (await listBlobIntegrations(pool, await orgProjectIds(req.organization.orgId))).map(wireBlob),
    }),
  );

  route(
    app,
    {
      method: 'PUT',
      url: BASE,
      tag: TAG,
      summary: 'Create or update the blob storage integration of a project (checked by a test upload)',
      body: upsertBlobRequest,
    },
    async ({ body, req }) => {
      await inOrg(req.organization.orgId, body.projectId);
      const now = Date.now();
      const dateProblem = startDateProblem(body, now);
      if (dateProblem) throw new BadRequest('Invalid request data', `exportStartDate: ${dateProblem}`);
      const existing = await findBlobIntegration(pool, { projectId: body.projectId });
      const exportSource = body.exportSource ?? existing?.exportSource ?? defaultBlobSource(ctx.config.mode);
      const refusal = blobSourceRefusal(exportSource, ctx.config.mode);
      if (refusal) throw new BadRequest('Invalid request data', `exportSource: ${refusal}`);
      const startDate = body.exportStartDate ? parseIsoDateTime(body.exportStartDate) : null;
      const write = {
        projectId: body.projectId,
        type: body.type,
        bucketName: body.bucketName,
        endpoint: body.endpoint ?? null,
        region: body.region,
        accessKeyId: body.accessKeyId ?? null,
        secretAccessKeyEncrypted: body.secretAccessKey
          ? encryptSecret(sealingKey(), body.secretAccessKey)
          : null,
        prefix: body.prefix ?? '',
        exportFrequency: body.exportFrequency,
        enabled: body.enabled,
        forcePathStyle: body.forcePathStyle,
        fileType: body.fileType,
        exportMode: body.exportMode,
        exportStartDate: startDate === null ? null : new Date(startDate),
        compressed: body.compressed ?? true,
        exportSource,
        exportFieldGroups: body.exportSource
          ? (body.exportFieldGroups ?? null)
          : (existing?.exportFieldGroups ?? null),
      };
      // The reference falls back to the server's own cloud credentials; here an integration must
      // bring its own, or an organization key could make the server write wherever it may
      // (the deployment's own buckets: other projects' exports, the backups).
      if (!(write.accessKeyId ?? existing?.accessKeyId))
        throw new BadRequest(
          'Invalid request data',
          "accessKeyId: required (with secretAccessKey): integrations do not use the server's own credentials",
        );
      // The test upload goes with the credentials that will be stored (the kept ones on an update).
      const store = await destinationOf(
        {
          ...write,
          accessKeyId: write.accessKeyId ?? existing?.accessKeyId ?? null,
          secretAccessKeyEncrypted:
            write.secretAccessKeyEncrypted ?? existing?.secretAccessKeyEncrypted ?? null,
        },
        llm,
      ).catch((err: Error) => {
        throw new BadRequest('Invalid request data', `endpoint: ${err.message}`);
      });
      try {
        await store.put(`${write.prefix}.observatory-connection-test`, 'connection test', 'text/plain');
      } catch (err) {
        throw new BadRequest(
          `the test upload to bucket ${body.bucketName} failed: ${(err as Error).message}`,
        );
      } finally {
        store.close();
      }
      const checkpoint = new Date(initialCheckpoint(body.exportMode, startDate, now));
      return wireBlob(await upsertBlobIntegration(pool, write, checkpoint));
    },
  );

  onBlob('GET', 'Sync status of a blob storage integration', async (i) => ({
    id: i.id,
    projectId: i.projectId,
    syncStatus: syncStatus(
      {
        enabled: i.enabled,
        lastError: i.lastError,
        lastSyncAt: lastSyncOf(i),
        checkpoint: i.checkpoint.getTime(),
        frequency: i.exportFrequency,
      },
      Date.now(),
    ),
    enabled: i.enabled,
    lastSyncAt: iso(i.lastSyncAt),
    nextSyncAt: nextSyncOf(i),
    lastError: i.lastError,
    lastErrorAt: iso(i.lastErrorAt),
  }));

  onBlob('DELETE', 'Delete a blob storage integration', async (i) => {
    await deleteBlobIntegration(pool, i.id);
    return { message: 'Blob storage integration deleted successfully' };
  });

  route(
    app,
    {
      method: 'GET',
      url: POSTHOG,
      tag: 'PostHogIntegrations',
      summary: 'PostHog integrations of the organization',
    },
    async ({ req }) => ({
      data: (await listPostHogIntegrations(pool, await orgProjectIds(req.organization.orgId))).map(
        wirePostHog,
      ),
    }),
  );

  route(
    app,
    {
      method: 'PUT',
      url: POSTHOG,
      tag: 'PostHogIntegrations',
      summary: 'Create or update the PostHog export of a project',
      body: upsertPostHogRequest,
    },
    async ({ body, req }) => {
      await inOrg(req.organization.orgId, body.projectId);
      await checkHost(llm, new URL(body.posthogHostname).hostname).catch((err: Error) => {
        throw new BadRequest('Invalid request data', `posthogHostname: ${err.message}`);
      });
      return wirePostHog(
        await upsertPostHogIntegration(pool, {
          projectId: body.projectId,
          host: body.posthogHostname,
          apiKeyEncrypted: encryptSecret(sealingKey(), body.posthogProjectApiKey),
          enabled: body.enabled,
        }),
      );
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: `${POSTHOG}/:projectId`,
      tag: 'PostHogIntegrations',
      summary: 'Delete the PostHog export of a project',
      params: projectParams,
    },
    async ({ params, req }) => {
      await inOrg(req.organization.orgId, params.projectId);
      found(
        await deletePostHogIntegration(pool, params.projectId),
        'PostHog integration of project',
        params.projectId,
      );
      return { message: 'PostHog integration deleted successfully' };
    },
  );
};
