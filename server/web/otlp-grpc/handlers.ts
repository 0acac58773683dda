/**
 * Which signal each OTLP gRPC service hands its exports to. A signal without a handler answers
 * UNIMPLEMENTED (server.ts): LogsService, until its handler is registered here.
 */
import type { WebContext } from '../core/context.ts';
import type { OtlpHandlers } from './server.ts';
import { traceExportHandler } from './traces.ts';

export const otlpGrpcHandlers = (ctx: WebContext): OtlpHandlers => ({
  traces: traceExportHandler(ctx),
});
