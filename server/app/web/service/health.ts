/** Liveness and readiness of the web container (`/api/public/health`, `/api/public/ready`). */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { SERVICE_VERSION } from '../../../platform/http/version.ts';
import type { WebContext } from '../core/context.ts';

export const healthPlugin: FastifyPluginAsync<PluginOptions<WebContext>> = async (app, { ctx }) => {
  const version = ctx.config.mode.release === '3' ? '3.0.0' : SERVICE_VERSION;
  app.get<{ Querystring: { failIfDatabaseUnavailable?: string } }>(
    '/api/public/health',
    async (req, reply) => {
      if (req.query.failIfDatabaseUnavailable === 'true') {
        try {
          await ctx.pool.query('SELECT 1');
        } catch {
          return reply.code(503).send({ status: 'Database not available', version });
        }
      }
      return { status: 'OK', version };
    },
  );
  app.get('/api/public/ready', async (_req, reply) => {
    if (ctx.shuttingDown())
      return reply.code(500).send({ status: 'SIGTERM / SIGINT received, shutting down', version });
    return { status: 'OK', version };
  });
};
