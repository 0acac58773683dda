/**
 * Scheduled exports (`/api/public/exports`): create, list, get (with the files written so far) and
 * delete a project's exports. The worker writes them (server/features/exports/job.ts) to the export bucket
 * under the project's folder. A source this deployment cannot produce is refused with 400 naming
 * it, rather than configuring an export that would stay empty.
 */
import { z } from 'zod';
import { S3_ENV } from '../../../contract/env.ts';
import { BadRequest, NotConfigured } from '../../../kernel/errors.ts';
import { parseIsoDateTime } from '../../../kernel/iso-datetime.ts';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import { found } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { familyPlugin, publicMount } from '../../../platform/http/project-routes.ts';
import {
  createExportRequest,
  EXPORT_FORMATS,
  EXPORT_FREQUENCIES,
  EXPORT_SOURCES,
  exportFolder,
  sourceRefusal,
  windowStart,
} from '../rules.ts';
import { createExport, deleteExport, type ExportConfig, findExport, listExports } from '../store.ts';

const exportShape = z.object({
  id: z.string(),
  source: z.enum(EXPORT_SOURCES),
  format: z.enum(EXPORT_FORMATS),
  frequency: z.enum(EXPORT_FREQUENCIES),
  prefix: z.string(),
  checkpoint: z.string(),
  windowsWritten: z.number(),
  rowsWritten: z.number(),
  lastRunAt: z.string().nullable(),
  lastSkipReason: z.string().nullable(),
  createdAt: z.string(),
});

const toWire = (e: ExportConfig) => ({
  id: e.id,
  source: e.source,
  format: e.format,
  frequency: e.frequency,
  prefix: e.prefix,
  checkpoint: e.checkpoint.toISOString(),
  windowsWritten: e.windowsWritten,
  rowsWritten: e.rowsWritten,
  lastRunAt: e.lastRunAt?.toISOString() ?? null,
  lastSkipReason: e.lastSkipReason,
  createdAt: e.createdAt.toISOString(),
});

export interface ExportsRouteContext extends RouteContext {
  /** Where the scheduled exports write; absent when no export storage is configured. */
  exportBlobs?: BlobStore | undefined;
}

export const exportsPlugin = familyPlugin<ExportsRouteContext>(
  publicMount('/api/public', 'Exports'),
  (declare, ctx) => {
    declare(
      {
        method: 'POST',
        path: '/exports',
        summary: 'Schedule an export of the project’s data to the export bucket',
        body: createExportRequest,
        response: exportShape,
      },
      async ({ body, reply, projectId }) => {
        if (!ctx.exportBlobs)
          throw new NotConfigured(`Exports are not configured: set ${S3_ENV.export.bucket}`);
        const refusal = sourceRefusal(body.source, ctx.config.mode);
        if (refusal !== undefined) throw new BadRequest('Invalid request data', `source: ${refusal}`);
        const startAt = body.startAt === undefined ? Date.now() : parseIsoDateTime(body.startAt)!;
        if (startAt > Date.now())
          throw new BadRequest('Invalid request data', 'startAt: must not be in the future');
        const created = await createExport(ctx.pool, {
          projectId,
          source: body.source,
          format: body.format,
          frequency: body.frequency,
          prefix: body.prefix,
          checkpoint: new Date(windowStart(body.frequency, startAt)),
        });
        return reply.code(201).send(toWire(created));
      },
    );

    declare(
      {
        method: 'GET',
        path: '/exports',
        summary: 'List the project’s scheduled exports',
        response: z.object({ data: z.array(exportShape) }),
      },
      async ({ projectId }) => ({ data: (await listExports(ctx.pool, projectId)).map(toWire) }),
    );

    declare(
      {
        method: 'GET',
        path: '/exports/:exportId',
        summary: 'Get a scheduled export with the keys of the files written so far',
        response: exportShape.extend({ files: z.array(z.string()) }),
      },
      async ({ params, projectId }) => {
        const scheduled = found(
          await findExport(ctx.pool, projectId, params.exportId),
          'Export',
          params.exportId,
        );
        const folder = exportFolder({ ...scheduled, storagePrefix: ctx.config.exportStorage?.prefix ?? '' });
        return { ...toWire(scheduled), files: (await ctx.exportBlobs?.list(folder)) ?? [] };
      },
    );

    declare(
      {
        method: 'DELETE',
        path: '/exports/:exportId',
        summary: 'Stop and delete a scheduled export (its files stay)',
        response: z.object({ message: z.string() }),
      },
      async ({ params, projectId }) => {
        found(await deleteExport(ctx.pool, projectId, params.exportId), 'Export', params.exportId);
        return { message: 'Export deleted' };
      },
    );
  },
);
