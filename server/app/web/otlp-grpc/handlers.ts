/**
 * Which signal each OTLP gRPC service hands its exports to. A signal without a handler answers
 * UNIMPLEMENTED (server.ts): MetricsService on release 3.
 */
import type { WebContext } from '../core/context.ts';
import { logsExportHandler } from './logs.ts';
import { metricsExportHandler } from './metrics.ts';
import type { OtlpHandlers } from './server.ts';
import { traceExportHandler } from './traces.ts';

export const otlpGrpcHandlers = (ctx: WebContext): OtlpHandlers => ({
  traces: traceExportHandler(ctx),
  logs: logsExportHandler(ctx),
  // The GenAI metrics' table is a version 4 schema's: release 3 answers UNIMPLEMENTED.
  ...(ctx.config.mode.release === '4' ? { metrics: metricsExportHandler(ctx) } : {}),
});
