/**
 * `POST /api/public/otel/v1/traces`: OTLP/HTTP traces (protobuf or JSON, optionally gzip). An
 * export is validated whole and refused whole; accepted spans are written where the write mode and
 * the producer's headers say (server/contract/write-modes.ts) before the 200 is sent.
 */
import type { FastifyPluginAsync } from 'fastify';
import { otelTargets } from '../../contract/write-modes.ts';
import { commitLegacyChanges, LegacyChanges } from '../../ingestion/batch.ts';
import { addOtelChanges, eventsRow } from '../../ingestion/otel-records.ts';
import { isRealTimeProducer } from '../../ingestion/sdk-versions.ts';
import { priceEventRow } from '../../models/apply.ts';
import { decodeTraceExport } from '../../otel/decode.ts';
import { OtlpDecodeError } from '../../otel/errors.ts';
import { mapExport } from '../../otel/map-spans.ts';
import { parseIngestionVersionHeader, validateTraceExport } from '../../otel/validate.ts';
import { attributionOf, producerHeader, recordRefusedPath } from '../context.ts';
import type { PluginOptions } from './types.ts';

/** Compressed body limit; the decoded size is bounded separately by the decoder. */
export const OTLP_BODY_LIMIT = 16 * 1024 * 1024;

export const otlpPlugin: FastifyPluginAsync<PluginOptions> = async (otlp, { ctx }) => {
  // OTLP bodies are decoded here (gzip, protobuf or JSON), so every content type arrives raw.
  otlp.removeAllContentTypeParsers();
  otlp.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: OTLP_BODY_LIMIT }, (_req, body, done) => {
    done(null, body);
  });

  const openapi = {
    method: 'POST',
    url: '/api/public/otel/v1/traces',
    tag: 'Ingestion',
    summary: 'OTLP/HTTP trace export (protobuf or JSON, optionally gzip)',
  } as const;
  otlp.post(openapi.url, { bodyLimit: OTLP_BODY_LIMIT, config: { openapi } }, async (req, reply) => {
    const headerName =
      req.headers['x-service-ingestion-version'] !== undefined
        ? 'x-service-ingestion-version'
        : 'x-langfuse-ingestion-version';
    const version = parseIngestionVersionHeader(producerHeader(req, 'ingestion-version'), headerName);
    if (version instanceof Error)
      return reply.code(400).send({ error: version.message, message: version.message });

    let request: ReturnType<typeof decodeTraceExport>;
    try {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      request = decodeTraceExport(body, req.headers['content-type'], req.headers['content-encoding']);
    } catch (err) {
      if (!(err instanceof OtlpDecodeError)) throw err;
      const code = err.kind === 'too-large' ? 413 : err.kind === 'content-type' ? 415 : 400;
      return reply.code(code).send({ error: err.message, message: err.message });
    }
    const invalid = validateTraceExport(request);
    if (invalid) return reply.code(400).send({ error: invalid.message, message: invalid.message });

    const attribution = attributionOf(req);
    const spans = mapExport(request, { sdkName: attribution.sdkName, sdkVersion: attribution.sdkVersion });
    if (spans.length === 0) return reply.code(200).send({});

    const producer = {
      ingestionVersion: version ?? undefined,
      sdkName: producerHeader(req, 'sdk-name'),
      sdkVersion: producerHeader(req, 'sdk-version'),
    };
    const realTime = isRealTimeProducer(producer);
    if (!realTime) recordRefusedPath(ctx, req, 'otel-dual-path');
    const targets = otelTargets(ctx.config.mode, realTime);
    const { projectId } = req.principal;
    const now = Date.now();
    if (targets.legacy) {
      const changes = new LegacyChanges();
      addOtelChanges(changes, spans);
      await commitLegacyChanges(changes, [], {
        projectId,
        attribution,
        store: ctx.store,
        locks: ctx.locks,
        targets,
        models: ctx.models,
        now,
        virtualRoots: false,
      });
    }
    if (targets.events) {
      const shape = { besideLegacy: targets.legacy };
      const rows = spans.map((s) => eventsRow(s, projectId, attribution, now, shape));
      const pricing = await ctx.models.pricingFor(projectId);
      for (const row of rows) priceEventRow(pricing, row);
      await ctx.store.insert('events_full', rows);
    }
    return reply.code(200).send({});
  });
};
