/**
 * `POST /api/public/otel/v1/traces`: OTLP/HTTP traces (protobuf or JSON, optionally gzip). A
 * malformed export, one past a per-export limit, or one whose every span is refused is a 400; spans
 * refused on their own (a per-span limit, a refused value) are left out and counted in the 200's
 * `partial_success`, in the request's encoding, as the OTLP spec asks. Accepted spans are written
 * where the write mode and the producer's headers say (server/contract/write-modes.ts) before the
 * 200 is sent (server/features/ingestion/otlp.ts); this handler reads the headers and answers.
 * `POST /api/public/otel/v1/logs` answers the same way for log records (server/features/ingestion/otlp-logs.ts).
 * `POST /api/public/otel/v1/metrics`: OTLP/HTTP metrics, the GenAI metrics stored per project
 * (server/features/ingestion/otlp-metrics.ts), the others counted; release 4 only (its table's schema).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { refusalOf } from '../../../platform/http/gates.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { closeExportPool } from '../../otel/export-pool.ts';
import {
  exportMetricsResponseJson,
  exportMetricsResponseProto,
  exportResponseBody,
  logsExportResponseBody,
} from '../../otel/otlp-proto.ts';
import { parseIngestionVersionHeader } from '../../otel/validate.ts';
import { ingestOtlpExport, type OtlpExport } from '../otlp.ts';
import { ingestOtlpLogsBody } from '../otlp-logs.ts';
import { ingestOtlpMetrics } from '../otlp-metrics.ts';
import { logsPartialSuccess, metricsPartialSuccess, spansPartialSuccess } from '../partial-success.ts';
import {
  type IngestionRouteContext,
  ingestionContextOf,
  type OtlpIngest,
  producerHeader,
  recordRefusedPath,
} from './context.ts';

/** Compressed body limit; the decoded size is bounded separately by the decoder. */
export const OTLP_BODY_LIMIT = 16 * 1024 * 1024;

export const otlpPlugin: FastifyPluginAsync<PluginOptions<IngestionRouteContext>> = async (otlp, { ctx }) => {
  // OTLP bodies are decoded here (gzip, protobuf or JSON), so every content type arrives raw.
  otlp.removeAllContentTypeParsers();
  // The decoding thread would keep the process alive after the server closed.
  otlp.addHook('onClose', closeExportPool);
  otlp.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: OTLP_BODY_LIMIT }, (_req, body, done) => {
    done(null, body);
  });

  exportEndpoint(
    '/api/public/otel/v1/traces',
    'OTLP/HTTP trace export (protobuf or JSON, optionally gzip)',
    ingesting(ingestOtlpExport, (protobuf, rejected) =>
      exportResponseBody(protobuf, spansPartialSuccess(rejected)),
    ),
  );

  exportEndpoint(
    '/api/public/otel/v1/logs',
    'OTLP/HTTP logs export (protobuf or JSON, optionally gzip): records stored on their observation',
    ingesting(ingestOtlpLogsBody, (protobuf, rejected) =>
      logsExportResponseBody(protobuf, logsPartialSuccess(rejected)),
    ),
  );

  exportEndpoint(
    '/api/public/otel/v1/metrics',
    'OTLP/HTTP metrics export: the GenAI metrics are stored, others counted',
    async (req, reply) => {
      const refusal = refusalOf('release-4', ctx.config.mode);
      if (refusal !== undefined) return refuse(reply, 404, refusal);
      const outcome = await ingestOtlpMetrics(sentBody(req), {
        projectId: req.principal.projectId,
        store: ctx.store,
        tally: ctx.metricPoints,
      });
      if (outcome.kind === 'refused') return refuse(reply, outcome.status, outcome.message);
      const partial = metricsPartialSuccess(outcome.rejected);
      return answer(req, reply, (protobuf) =>
        protobuf ? exportMetricsResponseProto(partial) : exportMetricsResponseJson(partial),
      );
    },
  );

  /** Serves an OTLP/HTTP export endpoint, documented under Ingestion; its body arrives raw (above). */
  function exportEndpoint(url: string, summary: string, handler: RouteHandlerMethod) {
    const openapi = { method: 'POST', url, tag: 'Ingestion', summary } as const;
    otlp.post(url, { bodyLimit: OTLP_BODY_LIMIT, config: { openapi } }, handler);
  }

  /**
   * The handler of an export endpoint: the export goes to its use case with the request's project
   * and producer; a refusal is its status, else the 200 says what was rejected, as the gRPC
   * services' handlers do (server/app/web/otlp-grpc/export-of.ts).
   */
  function ingesting<Rejected>(
    ingest: OtlpIngest<Rejected>,
    body: (protobuf: boolean, rejected: Rejected | null) => Buffer | object,
  ) {
    return async (req: FastifyRequest, reply: FastifyReply) => {
      const exp = exportOf(req);
      if (exp instanceof Error) return refuse(reply, 400, exp.message);
      const outcome = await ingest(exp, contextOf(req));
      if (outcome.kind === 'refused') return refuse(reply, outcome.status, outcome.message);
      return answer(req, reply, (protobuf) => body(protobuf, outcome.rejected));
    };
  }

  /** The request's body and producer headers; an Error for a bad ingestion-version header. */
  function exportOf(req: FastifyRequest): OtlpExport | Error {
    const headerName =
      req.headers['x-service-ingestion-version'] !== undefined
        ? 'x-service-ingestion-version'
        : 'x-langfuse-ingestion-version';
    const version = parseIngestionVersionHeader(producerHeader(req, 'ingestion-version'), headerName);
    if (version instanceof Error) return version;
    return {
      ...sentBody(req),
      producer: {
        ingestionVersion: version ?? undefined,
        sdkName: producerHeader(req, 'sdk-name'),
        sdkVersion: producerHeader(req, 'sdk-version'),
      },
    };
  }

  function contextOf(req: FastifyRequest) {
    return {
      ...ingestionContextOf(ctx, req),
      onDualPath: () => recordRefusedPath(ctx, req, 'otel-dual-path'),
    };
  }
};

/** An export's bytes as sent, with the headers that say how to decode them. */
const sentBody = (req: FastifyRequest) => ({
  body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
  contentType: req.headers['content-type'],
  contentEncoding: req.headers['content-encoding'],
});

/** OTLP answers in the request's encoding. */
const isProtobuf = (req: FastifyRequest) =>
  (req.headers['content-type'] ?? '').toLowerCase().includes('application/x-protobuf');

/** A refused export: the status, with the reason as both `error` and `message`. */
const refuse = (reply: FastifyReply, status: number, message: string) =>
  reply.code(status).send({ error: message, message });

/** An accepted export's 200, its body made in the request's encoding. */
function answer(req: FastifyRequest, reply: FastifyReply, body: (protobuf: boolean) => Buffer | object) {
  const protobuf = isProtobuf(req);
  return reply
    .code(200)
    .type(protobuf ? 'application/x-protobuf' : 'application/json')
    .send(body(protobuf));
}
