/**
 * The OTLP trace export use case, as processBatch is the batch endpoint's: decode the export on the
 * export worker in the forms the write needs, then write the accepted spans (through the ingestion log when there is one) where the write mode
 * and the producer say (server/contract/write-modes.ts): the legacy tables through the batch
 * endpoint's commit, `events_full` directly (priced when applied), or both. The web handler reads the request's
 * headers and answers; nothing here knows HTTP.
 */
import { otelTargets } from '../../contract/write-modes.ts';
import type { ModelCatalog } from '../models/catalog.ts';
import { processExport } from '../otel/export-pool.ts';
import { addOtelChanges } from '../otel/rows.ts';
import { LegacyChanges } from '../write-model/changes.ts';
import type { Row } from '../write-model/records.ts';
import type { BatchContext } from './batch.ts';
import { isRealTimeProducer, type Producer } from './sdk-versions.ts';
import { acceptWrite } from './write.ts';

export interface OtlpExport {
  body: Uint8Array;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  producer: Producer;
}

export interface OtlpContext extends Omit<BatchContext, 'models' | 'now'> {
  models: ModelCatalog;
  /** Called before spans of a producer that is not real time are written (the producers report). */
  onDualPath: () => void;
}

/** Written (`count` spans, some `rejected` on their own: OTLP's partial success), or refused. */
export type OtlpOutcome =
  | { kind: 'written'; count: number; rejected: { spans: number; message: string } | null }
  | { kind: 'refused'; status: number; message: string };

export async function ingestOtlpExport(exp: OtlpExport, ctx: OtlpContext): Promise<OtlpOutcome> {
  const { projectId, attribution } = ctx;
  const realTime = isRealTimeProducer(exp.producer);
  const targets = otelTargets(ctx.settings, realTime);
  const outcome = await processExport({
    body: exp.body,
    contentType: exp.contentType,
    contentEncoding: exp.contentEncoding,
    ctx: { sdkName: attribution.sdkName, sdkVersion: attribution.sdkVersion },
    nowMs: Date.now(),
    want: {
      spans: targets.legacy,
      rows: targets.events ? { projectId, attribution, besideLegacy: targets.legacy } : null,
    },
  });
  if (outcome.kind === 'refused') return outcome;
  if (outcome.kind === 'failed') throw new Error(`OTLP export worker: ${outcome.message}`);
  if (outcome.count === 0) return { kind: 'written', count: 0, rejected: null };

  if (!realTime) ctx.onDualPath();
  const changes = new LegacyChanges();
  if (targets.legacy) addOtelChanges(changes, outcome.spans);
  await acceptWrite(
    {
      projectId,
      receivedAt: outcome.nowMs,
      attribution,
      targets,
      virtualRoots: false,
      changes,
      scores: [],
      events: targets.events ? outcome.rows : [],
      fills: targets.events ? outcome.rows.filter(awaitsLogContent).map(spanOf) : [],
    },
    ctx,
  );
  return { kind: 'written', count: outcome.count, rejected: outcome.rejected };
}

/** A generation written without input or output: log events of its call may have come first. */
const awaitsLogContent = (row: Row) =>
  row['type'] === 'GENERATION' && (row['input'] === '' || row['output'] === '');
const spanOf = (row: Row) => ({ traceId: String(row['trace_id']), spanId: String(row['span_id']) });
