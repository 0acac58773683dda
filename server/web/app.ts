/**
 * The web container's HTTP application. Health routes are public; every other route sits in an
 * encapsulated context behind project-key authentication and the write load limit.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { requireProjectKey } from './auth.ts';
import type { WebContext } from './context.ts';
import { handleError } from './error-handler.ts';
import { limitConcurrentWrites } from './overload.ts';
import { commentsPlugin } from './plugins/comments.ts';
import { promptsPlugin } from './plugins/prompts.ts';
import { scoresPlugin } from './plugins/scores.ts';
import { collectRouteSpecs } from './route.ts';
import { datasetRunItemRoutes } from './routes/dataset-run-items.ts';
import { healthRoutes } from './routes/health.ts';
import { ingestionRoutes } from './routes/ingestion.ts';
import { legacyWriteRoutes } from './routes/legacy-writes.ts';
import { otelRoutes } from './routes/otel.ts';
import { readRoutes } from './routes/reads/index.ts';

export interface WebOptions {
  logger?: FastifyBaseLogger;
  /** Concurrent write requests before answering 429. */
  maxInFlightWrites?: number;
}

export function buildWebApp(ctx: WebContext, opts: WebOptions = {}): FastifyInstance {
  // Headers (Authorization) are never logged: Fastify's default request serializer omits them.
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: 1024 * 1024,
  });

  app.setErrorHandler(handleError);
  collectRouteSpecs(app);

  healthRoutes(app, ctx);

  app.register(async (api) => {
    limitConcurrentWrites(api, opts.maxInFlightWrites ?? 64);
    requireProjectKey(api, ctx);
    ingestionRoutes(api, ctx);
    otelRoutes(api, ctx);
    legacyWriteRoutes(api, ctx);
    datasetRunItemRoutes(api, ctx);
    readRoutes(api, ctx);
    api.register(scoresPlugin, { ctx });
    api.register(promptsPlugin, { ctx });
    api.register(commentsPlugin, { ctx });
  });

  app.setNotFoundHandler((req, reply) => {
    return reply.code(404).send({ message: `Route ${req.method} ${req.url.split('?')[0]} not found` });
  });
  return app;
}
