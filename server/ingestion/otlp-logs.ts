/**
 * The OTLP logs export use case, for any transport (HTTP here, gRPC's LogsService): map the
 * decoded request (map-logs.ts) and write it where the write mode and the producer say. Each
 * record is written as an EVENT of its span; GenAI content events also fill their span's input,
 * output and tool calls, in the legacy tables by a merged update (a span that arrives later keeps
 * it: its own empty fields change nothing) and in the events tables by genai-fill.ts.
 */
import { otelTargets } from '../contract/write-modes.ts';
import { decodeLogsExport } from '../otel/decode.ts';
import { OtlpDecodeError } from '../otel/errors.ts';
import { LogsExportError, type MappedLogs, mapLogsExport } from '../otel/map-logs.ts';
import type { ExportLogsServiceRequest } from '../otel/otlp-types.ts';
import { LegacyChanges } from './commit.ts';
import { addOtelChanges, eventsRow } from './otel-records.ts';
import type { OtlpContext, OtlpExport } from './otlp.ts';
import { isRealTimeProducer, type Producer } from './sdk-versions.ts';
import { acceptWrite } from './write.ts';

/** Written (`count` records, some `rejected` on their own: OTLP's partial success), or refused. */
export type OtlpLogsOutcome =
  | { kind: 'written'; count: number; rejected: { records: number; message: string } | null }
  | { kind: 'refused'; status: number; message: string };

/**
 * Ingests a decoded ExportLogsServiceRequest for the authenticated project of `ctx`: the
 * transport-independent part of `POST /api/public/otel/v1/logs`, and what the gRPC LogsService calls.
 */
export async function ingestOtlpLogsRequest(
  request: ExportLogsServiceRequest,
  producer: Producer,
  ctx: OtlpContext,
): Promise<OtlpLogsOutcome> {
  const now = Date.now();
  let mapped: MappedLogs;
  try {
    mapped = mapLogsExport(request, {
      sdkName: ctx.attribution.sdkName,
      sdkVersion: ctx.attribution.sdkVersion,
      now: new Date(now),
    });
  } catch (err) {
    if (err instanceof LogsExportError) return { kind: 'refused', status: 400, message: err.message };
    throw err;
  }
  const { events, contents, rejected, firstRefusal } = mapped;
  if (firstRefusal && events.length === 0) {
    const message = `Invalid OTLP logs export: ${firstRefusal}. The entire export was rejected; no log records were ingested.`;
    return { kind: 'refused', status: 400, message };
  }
  const rejection = firstRefusal && {
    records: rejected,
    message: `${rejected} of ${rejected + events.length} log records rejected (the others were stored); the first: ${firstRefusal}`,
  };
  if (events.length === 0) return { kind: 'written', count: 0, rejected: null };

  const realTime = isRealTimeProducer(producer);
  const targets = otelTargets(ctx.settings, realTime);
  if (!realTime) ctx.onDualPath();
  const changes = new LegacyChanges();
  if (targets.legacy) {
    addOtelChanges(changes, events);
    for (const c of contents) {
      changes.addObservation(c.spanId, {
        traceId: c.traceId,
        // Created by its content when the span has not arrived: GenAI content is a model call's.
        type: 'GENERATION',
        at: c.at,
        isUpdate: true,
        patch: {
          id: c.spanId,
          environment: c.environment,
          input: c.content.input,
          output: c.content.output,
        },
      });
    }
  }
  const { projectId, attribution } = ctx;
  const rows = targets.events
    ? events.map((e) => eventsRow(e, projectId, attribution, now, { besideLegacy: targets.legacy }))
    : [];
  await acceptWrite(
    {
      projectId,
      receivedAt: now,
      attribution,
      targets,
      virtualRoots: false,
      changes,
      scores: [],
      events: rows,
      fills: targets.events ? contents.map(({ traceId, spanId }) => ({ traceId, spanId })) : [],
    },
    ctx,
  );
  return { kind: 'written', count: events.length, rejected: rejection || null };
}

/** `POST /api/public/otel/v1/logs`'s body (protobuf or JSON, optionally gzip) decoded, then ingested. */
export async function ingestOtlpLogsBody(exp: OtlpExport, ctx: OtlpContext): Promise<OtlpLogsOutcome> {
  let request: ExportLogsServiceRequest;
  try {
    request = decodeLogsExport(Buffer.from(exp.body), exp.contentType, exp.contentEncoding);
  } catch (err) {
    if (!(err instanceof OtlpDecodeError)) throw err;
    const status = err.kind === 'too-large' ? 413 : err.kind === 'content-type' ? 415 : 400;
    return { kind: 'refused', status, message: err.message };
  }
  return ingestOtlpLogsRequest(request, exp.producer, ctx);
}
