/**
 * `GET /api/public/projects`: the project of the calling key with its organization. The SDK's
 * experiment runner asks for it to build links, and Python SDK 4.7+ `auth_check()` parses it
 * with the organization required. `retentionDays` is omitted when the project keeps its data
 * forever, as in the reference.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';

export const projectsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      url: '/api/public/projects',
      tag: 'Projects',
      summary: 'The project the API key belongs to',
      response: z.object({
        data: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            organization: z.object({ id: z.string(), name: z.string() }),
            metadata: z.record(z.string(), z.unknown()),
            retentionDays: z.number().int().optional(),
          }),
        ),
      }),
    },
    async ({ req }) => {
      const { rows } = await ctx.pool.query<{
        id: string;
        name: string;
        org_id: string;
        org_name: string;
        retention_days: number | null;
      }>(
        `SELECT p.id, p.name, p.retention_days, o.id AS org_id, o.name AS org_name
         FROM projects p JOIN organizations o ON o.id = p.org_id WHERE p.id = $1`,
        [req.principal.projectId],
      );
      return {
        data: rows.map((r) => ({
          id: r.id,
          name: r.name,
          organization: { id: r.org_id, name: r.org_name },
          metadata: {},
          ...(r.retention_days ? { retentionDays: r.retention_days } : {}),
        })),
      };
    },
  );
};
