/**
 * `GET /api/public/projects`: the project of the calling key. The SDK's experiment runner asks
 * for it to build links, so without it a run over a dataset fails at the end.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { route } from '../route.ts';
import type { PluginOptions } from './types.ts';

export const projectsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      url: '/api/public/projects',
      tag: 'Projects',
      summary: 'The project the API key belongs to',
      response: z.object({
        data: z.array(z.object({ id: z.string(), name: z.string(), metadata: z.unknown() })),
      }),
    },
    async ({ req }) => {
      const { rows } = await ctx.pool.query<{ id: string; name: string }>(
        'SELECT id, name FROM projects WHERE id = $1',
        [req.principal.projectId],
      );
      return { data: rows.map((r) => ({ id: r.id, name: r.name, metadata: {} })) };
    },
  );
};
