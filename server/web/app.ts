/**
 * The web container's HTTP application: one encapsulated plugin per API family (plugins/). Health
 * is public; the web UI's routes sit behind a user session; every other family sits behind
 * project-key authentication, and the write families share one bound on concurrent writes. Each
 * family gates its routes on the write mode itself. `/metrics` serves Prometheus metrics.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TrustedProxies } from '../config/auth.ts';
import { BadRequest } from '../errors.ts';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../ingestion/limits.ts';
import { collectAllowedMethods } from './allowed-methods.ts';
import { requireOrganizationKey, requireProjectKey } from './auth.ts';
import type { WebContext } from './context.ts';
import { handleError } from './error-handler.ts';
import { limitConcurrentWrites } from './overload.ts';
import { alertsPlugin } from './plugins/alerts.ts';
import { annotationQueuesPlugin } from './plugins/annotation-queues.ts';
import { commentsPlugin } from './plugins/comments.ts';
import { dashboardsPlugin } from './plugins/dashboards.ts';
import { datasetsPlugin } from './plugins/datasets.ts';
import { evaluationsPlugin } from './plugins/evaluations.ts';
import { exportsPlugin } from './plugins/exports.ts';
import { healthPlugin } from './plugins/health.ts';
import { ingestionPlugin } from './plugins/ingestion.ts';
import { integrationsPlugin } from './plugins/integrations.ts';
import { legacyReadsPlugin } from './plugins/legacy-reads.ts';
import { legacyWritesPlugin } from './plugins/legacy-writes.ts';
import { llmConnectionsPlugin } from './plugins/llm-connections.ts';
import { localBlobsPlugin } from './plugins/local-blobs.ts';
import { mediaPlugin } from './plugins/media.ts';
import { metricsPlugin } from './plugins/metrics.ts';
import { modelsPlugin } from './plugins/models.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import { organizationsPlugin } from './plugins/organizations.ts';
import { otlpPlugin } from './plugins/otlp.ts';
import { projectsPlugin } from './plugins/projects.ts';
import { promptsPlugin } from './plugins/prompts.ts';
import { scoreWritesPlugin } from './plugins/score-writes.ts';
import { scoresPlugin } from './plugins/scores.ts';
import { traceDeletionPlugin } from './plugins/trace-deletion.ts';
import { uiPlugin } from './plugins/ui.ts';
import { uiAssetsPlugin } from './plugins/ui-assets.ts';
import { v4ReadsPlugin } from './plugins/v4-reads.ts';
import { instrumentRequests } from './request-metrics.ts';
import { collectRouteSpecs } from './route.ts';

export interface WebOptions {
  logger?: FastifyBaseLogger;
  /** Concurrent write requests before answering 429. */
  maxInFlightWrites?: number;
  /** Serves `/metrics` instead of the API's port (`METRICS_PORT`). */
  metricsApp?: FastifyInstance;
}

/** Fastify's `trustProxy` for the configured proxies; a hop count trusts that many nearest the server. */
export const trustProxyOption = (proxies: TrustedProxies) =>
  typeof proxies === 'number' ? (_address: string, hop: number) => hop < proxies : proxies;
/** Every JSON body is parsed as Fastify does, then refused past MAX_JSON_DEPTH levels of nesting. */
function boundJsonDepth(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    parseJson(req, String(body), (err, value) => {
      if (err) return done(err, undefined);
      if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) {
        return done(
          new BadRequest(`JSON body nested deeper than the limit of ${MAX_JSON_DEPTH} levels`),
          undefined,
        );
      }
      done(null, value);
    });
  });
}

export function buildWebApp(ctx: WebContext, opts: WebOptions = {}): FastifyInstance {
  // Headers (Authorization) are never logged: Fastify's default request serializer omits them.
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: 1024 * 1024,
    // The client address (`request.ip`) and scheme (`request.protocol`) come from X-Forwarded-*
    // only when the proxy in front is configured as trusted.
    trustProxy: trustProxyOption(ctx.config.auth.trustedProxies),
  });
  app.setErrorHandler(handleError);
  boundJsonDepth(app);
  collectRouteSpecs(app);
  const allowedMethods = collectAllowedMethods(app);
  instrumentRequests(app, opts.metricsApp);

  app.register(healthPlugin, { ctx });
  // The web UI: its pages and assets, and its JSON routes under /api/ui in scopes (plugins/ui.ts).
  app.register(uiAssetsPlugin, { ctx });
  app.register(uiPlugin, { ctx });
  // Presigned URLs of the local blob stores carry their own signature instead of an API key.
  if (ctx.localBlobs?.length) {
    app.register(localBlobsPlugin, {
      stores: ctx.localBlobs,
      maxUploadBytes: ctx.config.media.maxContentLength,
    });
  }

  // Administration with organization-scoped keys; never a project's data.
  app.register(async (admin) => {
    requireOrganizationKey(admin, ctx);
    admin.register(organizationsPlugin, { ctx });
    admin.register(integrationsPlugin, { ctx });
  });

  app.register(async (api) => {
    requireProjectKey(api, ctx);
    // The ingestion paths write to the analytics store in volume: past the bound they answer 429.
    api.register(async (writes) => {
      limitConcurrentWrites(writes, opts.maxInFlightWrites ?? 64);
      writes.register(ingestionPlugin, { ctx });
      writes.register(otlpPlugin, { ctx });
      writes.register(legacyWritesPlugin, { ctx });
    });
    api.register(legacyReadsPlugin, { ctx });
    api.register(v4ReadsPlugin, { ctx });
    api.register(datasetsPlugin, { ctx });
    api.register(scoresPlugin, { ctx });
    api.register(scoreWritesPlugin, { ctx });
    api.register(promptsPlugin, { ctx });
    api.register(traceDeletionPlugin, { ctx });
    api.register(modelsPlugin, { ctx });
    api.register(commentsPlugin, { ctx });
    api.register(mediaPlugin, { ctx });
    api.register(exportsPlugin, { ctx });
    api.register(metricsPlugin, { ctx });
    api.register(dashboardsPlugin, { ctx });
    api.register(projectsPlugin, { ctx });
    api.register(openapiPlugin, { ctx });
    api.register(llmConnectionsPlugin, { ctx });
    api.register(evaluationsPlugin, { ctx });
    api.register(alertsPlugin, { ctx });
    api.register(annotationQueuesPlugin, { ctx });
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send({ message: `Method ${req.method} is not allowed on ${path} (allowed: ${allowed.join(', ')})` });
    }
    return reply.code(404).send({ message: `Route ${req.method} ${path} not found` });
  });
  return app;
}
