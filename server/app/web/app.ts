/**
 * The web container's HTTP application: one encapsulated plugin per API family, each in its
 * feature's `routes/` with its public (`public.ts`) and UI (`ui.ts`) halves apart (docs/public-api.md,
 * "Where the routes live"), registered here in its scope with the process's context. Health is public; the web UI's routes sit behind a user session; every other
 * family sits behind project-key authentication, and the write families share one bound on
 * concurrent writes. A route its write mode does not serve answers 404 from a hook of its scope.
 * `/metrics` serves Prometheus metrics.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { alertsPlugin } from '../../features/alerts/routes/public.ts';
import { annotationQueuesPlugin } from '../../features/annotation-queues/routes/public.ts';
import { commentsPlugin } from '../../features/comments/routes/public.ts';
import { dashboardsPlugin } from '../../features/dashboards/routes/public.ts';
import { datasetsPlugin } from '../../features/datasets/routes/public.ts';
import { traceDeletionPlugin } from '../../features/deletion/routes/traces.ts';
import { envelopeOf } from '../../features/evaluation/errors.ts';
import { evaluationsPlugin } from '../../features/evaluation/routes/public.ts';
import { exportsPlugin } from '../../features/exports/routes/public.ts';
import { ingestionPlugin } from '../../features/ingestion/routes/batch.ts';
import { legacyWritesPlugin } from '../../features/ingestion/routes/legacy-writes.ts';
import { otlpPlugin } from '../../features/ingestion/routes/otlp.ts';
import { integrationsPlugin } from '../../features/integrations/routes/public.ts';
import { llmConnectionsPlugin } from '../../features/llm-connections/routes/public.ts';
import { maskingPlugin } from '../../features/masking/routes/family.ts';
import { localBlobsPlugin } from '../../features/media/routes/local-blobs.ts';
import { mediaPlugin } from '../../features/media/routes/public.ts';
import { modelsPlugin } from '../../features/models/routes/public.ts';
import { organizationsPlugin } from '../../features/projects/routes/organizations.ts';
import { projectsPlugin } from '../../features/projects/routes/projects.ts';
import { promptsPlugin } from '../../features/prompts/routes/public.ts';
import { legacyReadsPlugin } from '../../features/reads/routes/legacy-public.ts';
import { metricsPlugin } from '../../features/reads/routes/metrics-public.ts';
import { v4ReadsPlugin } from '../../features/reads/routes/v4-public.ts';
import { scoresPlugin } from '../../features/scores/routes/public-reads.ts';
import { scoreWritesPlugin } from '../../features/scores/routes/public-writes.ts';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../features/write-model/limits.ts';
import type { TrustedProxies } from '../../kernel/config/auth.ts';
import { BadRequest, HttpError, NotFound } from '../../kernel/errors.ts';
import { modeGate } from '../../platform/http/gates.ts';
import { collectRouteSpecs } from '../../platform/http/route.ts';
import { collectAllowedMethods } from './core/allowed-methods.ts';
import { requireOrganizationKey, requireProjectKey } from './core/auth.ts';
import type { WebContext } from './core/context.ts';
import { handleError, registerFamilies } from './core/error-handler.ts';
import { limitBacklog, limitConcurrentWrites } from './core/overload.ts';
import { instrumentRequests } from './core/request-metrics.ts';
import { healthPlugin } from './service/health.ts';
import { openapiPlugin } from './service/openapi.ts';
import { uiAssetsPlugin } from './ui-shell/assets.ts';
import { uiPlugin } from './ui-shell/plugin.ts';

export interface WebOptions {
  logger?: FastifyBaseLogger;
  /** Concurrent write requests before answering 429. */
  maxInFlightWrites?: number;
  /** Serves `/metrics` instead of the API's port (`METRICS_PORT`). */
  metricsApp?: FastifyInstance;
  /** The registry `/metrics` serves, when the process counts into it elsewhere too (OTLP over gRPC). */
  registry?: Registry;
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
  instrumentRequests(app, opts.metricsApp, opts.registry);

  app.register(healthPlugin, { ctx });
  // The web UI: its pages and assets, and its JSON routes under /api/ui in scopes (ui-shell/plugin.ts).
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
      if (ctx.ingestionBacklog) limitBacklog(writes, ctx.ingestionBacklog);
      writes.register(ingestionPlugin, { ctx });
      writes.register(otlpPlugin, { ctx });
      writes.register(legacyWritesPlugin, { ctx });
    });
    // Every other family: a route its write mode does not serve answers 404 (platform/http/gates.ts).
    api.register(async (served) => {
      served.addHook('onRequest', modeGate(ctx));
      registerFamilies(
        served,
        ctx,
        [
          legacyReadsPlugin,
          v4ReadsPlugin,
          datasetsPlugin,
          scoresPlugin,
          scoreWritesPlugin,
          promptsPlugin,
          traceDeletionPlugin,
          modelsPlugin,
          commentsPlugin,
          mediaPlugin,
          exportsPlugin,
          metricsPlugin,
          projectsPlugin,
          openapiPlugin,
          llmConnectionsPlugin,
          annotationQueuesPlugin,
        ],
        // The unstable families answer their envelope `{message, code, details?}`.
        [dashboardsPlugin, evaluationsPlugin, alertsPlugin, maskingPlugin],
      );
    });
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const allowed = allowedMethods(path);
    const err =
      allowed.length > 0
        ? new HttpError(
            405,
            `Method ${req.method} is not allowed on ${path} (allowed: ${allowed.join(', ')})`,
          )
        : new NotFound(`Route ${req.method} ${path} not found`);
    if (allowed.length > 0) reply.header('allow', allowed.join(', '));
    // The unstable family answers its envelope here too (its code says which refusal).
    const body = path.startsWith('/api/public/unstable/') ? envelopeOf(err, false) : { message: err.message };
    return reply.code(err.statusCode).send(body);
  });
  return app;
}
