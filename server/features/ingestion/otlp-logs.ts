/**
 * The OTLP logs export use case, for any transport (HTTP here, gRPC's LogsService): map the
 * decoded request (map-logs.ts) and write it where the write mode and the producer say. Each
 * record is written as an EVENT of its span; GenAI content events also fill their span's input,
 * output and tool calls, in the legacy tables by a merged update (a span that arrives later keeps
 * it: its own empty fields change nothing) and in the events tables by genai-fill.ts.
 */
import { otelTargets } from '../../contract/write-modes.ts';
import { processLogsExport } from '../otel/export-pool.ts';
import { LogsExportError, type MappedLogs, mapLogsExport } from '../otel/map-logs.ts';
import type { ExportLogsServiceRequest } from '../otel/otlp-types.ts';
import { addOtelChanges, eventsRow } from '../otel/rows.ts';
import { LegacyChanges } from '../write-model/changes.ts';
import type { Row } from '../write-model/records.ts';
import type { OtlpContext, OtlpExport } from './otlp.ts';
import { isRealTimeProducer, type Producer } from './sdk-versions.ts';
import { acceptWrite } from './write.ts';

/** Written (`count` records, some `rejected` on their own: OTLP's partial success), or refused. */
export type OtlpLogsOutcome =
  | { kind: 'written'; count: number; rejected: { records: number; message: string } | null }
  | { kind: 'refused'; status: number; message: string };

/**
 * Ingests a decoded ExportLogsServiceRequest for the authenticated project of `ctx`: the
 * transport-independent part of `POST /api/public/otel/v1/logs`, and what the gRPC LogsService
 * calls (its request is decoded already; it is mapped here, on the calling thread).
 */
export async function ingestOtlpLogsRequest(
  request: ExportLogsServiceRequest,
  producer: Producer,
  ctx: OtlpContext,
): Promise<OtlpLogsOutcome> {
  const now = Date.now();
  let mapped: MappedLogs;
  try {
    mapped = mapLogsExport(request, { ...mapContext(ctx), now: new Date(now) });
  } catch (err) {
    if (err instanceof LogsExportError) return { kind: 'refused', status: 400, message: err.message };
    throw err;
  }
  const targets = otelTargets(ctx.settings, isRealTimeProducer(producer));
  const { projectId, attribution } = ctx;
  const rows = targets.events
    ? mapped.events.map((e) => eventsRow(e, projectId, attribution, now, { besideLegacy: targets.legacy }))
    : [];
  return writeLogs(mapped, rows, producer, now, ctx);
}

/**
 * `POST /api/public/otel/v1/logs`'s body (protobuf or JSON, optionally gzip): decoded and mapped on
 * the export worker thread, as trace exports are, then written.
 */
export async function ingestOtlpLogsBody(exp: OtlpExport, ctx: OtlpContext): Promise<OtlpLogsOutcome> {
  const targets = otelTargets(ctx.settings, isRealTimeProducer(exp.producer));
  const { projectId, attribution } = ctx;
  const outcome = await processLogsExport({
    body: exp.body,
    contentType: exp.contentType,
    contentEncoding: exp.contentEncoding,
    ctx: mapContext(ctx),
    nowMs: Date.now(),
    rows: targets.events ? { projectId, attribution, besideLegacy: targets.legacy } : null,
  });
  if (outcome.kind === 'refused') return outcome;
  if (outcome.kind === 'failed') throw new Error(`OTLP export worker: ${outcome.message}`);
  return writeLogs(outcome.mapped, outcome.rows, exp.producer, Date.now(), ctx);
}

const mapContext = (ctx: OtlpContext) => ({
  sdkName: ctx.attribution.sdkName,
  sdkVersion: ctx.attribution.sdkVersion,
});

/** Writes mapped records (`rows`: their `events_full` rows when the mode writes those). */
async function writeLogs(
  mapped: MappedLogs,
  rows: Row[],
  producer: Producer,
  now: number,
  ctx: OtlpContext,
): Promise<OtlpLogsOutcome> {
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
  await acceptWrite(
    {
      projectId: ctx.projectId,
      receivedAt: now,
      attribution: ctx.attribution,
      targets,
      virtualRoots: false,
      changes,
      scores: [],
      events: targets.events ? rows : [],
      fills: targets.events ? contents.map(({ traceId, spanId }) => ({ traceId, spanId })) : [],
    },
    ctx,
  );
  return { kind: 'written', count: events.length, rejected: rejection || null };
}
